"""Ids a TREC run file can hold (generator/core/ids.py): the BEIR loader refuses the rest at load
time, in each of the four places an id is written, with file, line and field; the ir_datasets
export refuses the same ids; ordinary ids (numbers, `MED-10`, paths, non-ASCII letters) still load
and make six-field run lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.core.ids import MAX_ID_CHARS, id_problem
from generator.core.runfiles import format_run
from generator.storage.errors import InputError
from generator.evaluate.data import load_dataset
from generator.evaluate.irds import ensure_exported
from tests.conftest import write_beir
from tests.evaluate.test_irds import Doc, FakeDataset, Qrel, Query

LONGEST_LINE = 300

# Each breaks a run line into more than six fields, or hides in it (U+200B), or cannot be written
# as UTF-8 (a lone surrogate).
REFUSED = {
    "<svg onload=x>": "whitespace (U+0020 SPACE)",
    'x" onmouseover="y': "whitespace (U+0020 SPACE)",
    "a\tb": "whitespace (U+0009)",
    "a\x0bb": "whitespace (U+000B)",
    "a\x1cb": "whitespace (U+001C)",
    "a\x85b": "whitespace (U+0085)",
    "a\u00a0b": "whitespace (U+00A0 NO-BREAK SPACE)",
    "a\u3000b": "whitespace (U+3000 IDEOGRAPHIC SPACE)",
    "a\u2028b": "whitespace (U+2028 LINE SEPARATOR)",
    "a\u2029b": "whitespace (U+2029 PARAGRAPH SEPARATOR)",
    "a\x00b": "a control character (U+0000)",
    "a\x7fb": "a control character (U+007F)",
    "a\u200bb": "an invisible format character (U+200B ZERO WIDTH SPACE)",
    "\ufeffa": "an invisible format character (U+FEFF ZERO WIDTH NO-BREAK SPACE)",
    "a\u202eb": "an invisible format character (U+202E RIGHT-TO-LEFT OVERRIDE)",
    "a\udcffb": "a lone surrogate (U+DCFF)",
    "a\ue000b": "a private-use character (U+E000)",
    "": "empty id",
    "x" * (MAX_ID_CHARS + 1): f"is longer than {MAX_ID_CHARS:,} characters",
}
ACCEPTED = ["4983", "MED-10", "PLAIN-12", "doc/2021/a.txt", "urn:x#1", "Zürich", "文档1", "<svg>", 'x"y',
            "x" * MAX_ID_CHARS, "ID_١٢"]


@pytest.mark.parametrize("value", sorted(REFUSED))
def test_the_rule_refuses_whitespace_control_and_format_characters_and_says_which(value):
    problem = id_problem(value)
    assert problem is not None and REFUSED[value] in problem, problem
    assert "\n" not in problem and len(problem) <= 200, problem


@pytest.mark.parametrize("value", ACCEPTED)
def test_ordinary_ids_pass_the_rule(value):
    assert id_problem(value) is None


def test_every_character_a_run_reader_splits_on_is_refused():
    # str.split() and splitlines() are what the run and qrels readers split on.
    splitters = [chr(code) for code in range(0x10000) if chr(code).isspace() or len(f"a{chr(code)}b".splitlines()) > 1]
    assert len(splitters) > 25
    assert all(id_problem(f"a{char}b") for char in splitters)


def _dataset(root: Path, doc_id: str = "d1", query_id: str = "q1") -> Path:
    corpus = [{"_id": "d0", "title": "t", "text": "zero"}, {"_id": doc_id, "title": "t", "text": "one"}]
    queries = [{"_id": "q0", "text": "first"}, {"_id": query_id, "text": "second"}]
    write_beir(root, corpus, queries, [("q0", "d0", 1)])
    with (root / "qrels" / "test.tsv").open("ab") as qrels:   # a lone surrogate is written as it comes
        qrels.write(f"{query_id}\t{doc_id}\t1\n".encode("utf-8", "surrogatepass"))
    return root


# A lone surrogate never reaches the id rule in a JSONL file: the JSON reader refuses the line
# (`generator.core.results.strict_json`), since no UTF-8 file can hold it.
@pytest.mark.parametrize("value", [value for value in sorted(REFUSED) if value.strip() and "\udcff" not in value])
@pytest.mark.parametrize("place", ["corpus", "queries"])
def test_the_loader_refuses_a_bad_json_id_naming_file_line_and_field(tmp_path, value, place):
    root = _dataset(tmp_path / "d", **({"doc_id": value} if place == "corpus" else {"query_id": value}))
    with pytest.raises(InputError) as raised:
        load_dataset(root)
    error = raised.value
    assert (Path(error.path).name, error.line, error.field) == (f"{place}.jsonl", 2, "_id")
    assert REFUSED[value] in error.reason
    assert "\n" not in str(error) and len(str(error)) <= LONGEST_LINE, str(error)


# A tab or a newline cannot be inside a qrels column, and a surrogate is not UTF-8: those are
# the column count's and the decoder's errors.
QRELS_REFUSED = [value for value in sorted(REFUSED)
                 if value.strip() and not {"\t", "\n", "\udcff"} & set(value) and len(value) < 200]


@pytest.mark.parametrize("value", QRELS_REFUSED)
@pytest.mark.parametrize("column, field", [(0, "query-id"), (1, "corpus-id")])
def test_the_loader_refuses_a_bad_qrels_id_naming_its_column(tmp_path, value, column, field):
    root = _dataset(tmp_path / "d")
    qrels = root / "qrels" / "test.tsv"
    columns = ["q0", "d0", "1"]
    columns[column] = value
    qrels.write_text(qrels.read_text(encoding="utf-8") + "\t".join(columns) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_dataset(root)
    assert (raised.value.path, raised.value.line, raised.value.field) == (str(qrels), 4, field)
    assert REFUSED[value] in raised.value.reason


@pytest.mark.parametrize("value", ACCEPTED)
def test_ordinary_ids_load_and_make_six_field_run_lines(tmp_path, value):
    dataset = load_dataset(_dataset(tmp_path / "d", doc_id=value, query_id=value))
    assert value in dataset.document_ids and value in dataset.queries
    run = format_run({value: [(value, 1.0), ("d0", 0.5)]}, "dense")
    assert all(len(line.split()) == 6 for line in run.splitlines())


def _irds(doc_id: str = "d1", query_id: str = "q1") -> FakeDataset:
    """An ir_datasets dataset of two documents, queries and judgements, the second of each with the
    ids given."""
    return FakeDataset([Doc("d0", "t", "zero"), Doc(doc_id, "t", "one")],
                       [Query("q0", "first"), Query(query_id, "second")],
                       [Qrel("q0", "d0", 1, "0"), Qrel(query_id, doc_id, 1, "0")])


@pytest.mark.parametrize("value", sorted(REFUSED))
@pytest.mark.parametrize("place", ["documents", "queries"])
def test_the_ir_datasets_export_refuses_the_ids_the_loader_refuses(tmp_path, value, place):
    source = _irds(**({"doc_id": value} if place == "documents" else {"query_id": value}))
    target = tmp_path / "export"
    with pytest.raises(InputError) as raised:
        ensure_exported("fake/bad", target, lambda _: None, load=lambda _: source)
    error = raised.value
    assert error.path == "irds:fake/bad" and error.field == ("doc_id" if place == "documents" else "query_id")
    assert error.reason.startswith(f"{place} record 2: ") and REFUSED[value] in error.reason
    assert "\n" not in str(error) and len(str(error)) <= LONGEST_LINE, str(error)
    assert not (target / "corpus.jsonl").exists()


def test_the_export_refuses_a_bad_id_found_only_in_the_qrels(tmp_path):
    source = _irds()
    source.qrels.append(Qrel("q1", "d 1", 1, "0"))
    with pytest.raises(InputError, match=r"^irds:fake/bad: doc_id: qrels record 3: id 'd 1' holds whitespace"):
        ensure_exported("fake/bad", tmp_path / "export", lambda _: None, load=lambda _: source)


@pytest.mark.parametrize("value", ACCEPTED)
def test_the_export_keeps_ordinary_ids_and_the_loader_reads_them_back(tmp_path, value):
    target = ensure_exported("fake/ok", tmp_path / "export", lambda _: None,
                             load=lambda _: _irds(doc_id=value, query_id=value))
    dataset = load_dataset(target)
    assert value in dataset.document_ids and dataset.qrels.relevant(value) == {value}


def test_an_id_is_echoed_in_one_short_line_however_it_escapes():
    problem = id_problem("\U000e0001" * 60)     # a tag character, escaped as ten characters
    assert len(problem) <= 200 and "\n" not in problem
