"""Big and hostile sizes (issue 24): a line longer than any record is refused while it is read,
naming its line and the limit, after reading no more than the limit; a corpus of many small
documents is read one record at a time, never held as parsed JSON and as documents at once.

The full sizes (a 50 MB line, 100,000 queries, a million documents) were measured outside the
suite; these are the same properties on files that take milliseconds to write.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from generator.storage.errors import InputError
from generator.evaluate.data import MAX_LINE_BYTES, load_corpus, load_dataset, load_queries
from tests.conftest import write_beir

MiB = 1024 * 1024


def _peak_bytes(function, *arguments):
    """(what `function` returned or raised, the peak of Python's allocations while it ran)."""
    tracemalloc.start()
    try:
        try:
            outcome = function(*arguments)
        except InputError as error:
            outcome = error
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_50_mb_line_without_a_newline_is_refused_after_reading_the_limit(tmp_path):
    root = write_beir(tmp_path / "d", [{"_id": "d0", "text": "zero"}, {"_id": "d1", "text": "one"}],
                      [{"_id": "q0", "text": "q"}], [("q0", "d0", 1)])
    corpus = root / "corpus.jsonl"
    with corpus.open("r+b") as handle:      # a sparse third line of NUL bytes: nothing is written
        handle.truncate(50 * MiB)
    error, peak = _peak_bytes(load_dataset, root)
    assert isinstance(error, InputError)
    assert str(error) == (f"{corpus}:3: line longer than 16 MiB ({MAX_LINE_BYTES:,} bytes), "
                          "the most one line may hold")
    assert peak < 2 * MAX_LINE_BYTES + 4 * MiB, f"{peak / MiB:.0f} MiB held for a refused line"


def _query_line(query_id: str, length: int) -> str:
    padding = length - len(json.dumps({"_id": query_id, "text": ""}))
    return json.dumps({"_id": query_id, "text": "x" * padding})


@pytest.mark.parametrize("extra, refused", [(0, False), (1, True)])
def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path, extra, refused):
    path = tmp_path / "queries.jsonl"
    line = _query_line("q1", MAX_LINE_BYTES + extra)
    assert len(line.encode("utf-8")) == MAX_LINE_BYTES + extra
    path.write_text(_query_line("q0", 40) + "\n" + line + "\n", encoding="utf-8")
    if refused:
        with pytest.raises(InputError) as raised:
            load_queries(path)
        assert (raised.value.line, raised.value.field) == (2, None)
        assert f"({MAX_LINE_BYTES:,} bytes)" in str(raised.value)
    else:
        assert len(load_queries(path)["q1"]) > MAX_LINE_BYTES - 40


def _tiny_corpus(path: Path, documents: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for number in range(documents):
            handle.write(json.dumps({"_id": f"d{number}", "title": "", "text": f"w{number % 1000} tiny"}) + "\n")


def test_many_small_documents_are_read_one_record_at_a_time(tmp_path):
    path = tmp_path / "corpus.jsonl"
    _tiny_corpus(path, 5_000)
    tracemalloc.start()
    try:
        documents = load_corpus(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(documents) == 5_000 and documents[-1].doc_id == "d4999"
    # What the documents hold, plus the id index that finds a duplicate: no list of parsed records.
    assert peak < 1.6 * held, f"peak {peak / MiB:.1f} MiB for {held / MiB:.1f} MiB of documents"
    assert held / len(documents) < 250, f"{held / len(documents):.0f} bytes a document"


@pytest.mark.parametrize("spec, refused", [(".3f", False), ("+40.3f", False), ("2000000000.3f", True),
                                           (".41f", True), (",>1000000d", True), ("x" * 30, True)])
def test_a_table_format_spec_is_bounded_before_it_is_tried(tmp_path, make_project, spec, refused):
    """Issue 39: a width of 2e9 built a 1.9 GiB string on every check; it is refused, unbuilt."""
    import yaml

    from generator.project import load_project

    root = make_project(tmp_path / "p")
    config = yaml.safe_load((root / "readout.yaml").read_text(encoding="utf-8"))
    config["outputs"]["readout"]["table"]["columns"][0]["format"] = spec
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    tracemalloc.start()
    try:
        if refused:
            with pytest.raises(InputError, match="format"):
                load_project(root)
        else:
            load_project(root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 1024 * 1024
