"""Strict values (issue 14): every value the tools read is either accepted as exactly what it says
or refused with one line naming the file, the line and the key; nothing is guessed, and no input,
however long, makes an error line longer than 300 characters.

The BEIR loader is called directly (an evaluation loads models); readout.yaml, the ledger and the
results file are read through `readout check --no-record` on the fixture project.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from generator.claims.record.design import CLOSEST_MAX_WORDS, DesignLibrary, check_design_source
from generator.claims.language.ledger import DesignSource
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.evaluate.data import load_dataset, load_qrels
from generator.core.results import (MAX_NUMBER_CHARS, MAX_RESULTS_DEPTH, UnsealableError, canonical_bytes, read_results,
                                    seal)
from generator.storage.safe_yaml import load_config, parse_yaml
from tests.conftest import ledger_text, make_small_dataset

LONGEST_LINE = 300
QRELS = "d/qrels/test.tsv"


# --- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def dataset(tmp_path, monkeypatch) -> Path:
    """A small valid BEIR folder at ./d (messages then name `d/...`)."""
    monkeypatch.chdir(tmp_path)
    make_small_dataset(tmp_path / "d")
    return Path("d")


def _set_score(root: Path, score: str, line: int = 2) -> None:
    path = root / "qrels" / "test.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    query, document, _ = lines[line - 1].split("\t")
    lines[line - 1] = f"{query}\t{document}\t{score}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _load_error(root: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_dataset(root)
    message = str(caught.value)
    assert "\n" not in message and len(message) <= LONGEST_LINE, message
    return message


def _first_score(root: Path) -> int:
    dataset = load_dataset(root)
    query = dataset.test_query_ids()[0]
    return next(iter(dataset.qrels.scores[query].values()))


def _check(root: Path, monkeypatch, capsys, *command: str) -> tuple[int, str]:
    """`readout COMMAND PROJECT` from the project directory: (exit code, the one stderr line)."""
    monkeypatch.chdir(root)
    capsys.readouterr()
    code = main([*(command or ("check",)), str(root), *(["--no-record"] if not command else [])])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) <= 1, err
    line = lines[0] if lines else ""
    assert len(line) <= LONGEST_LINE, line
    return code, line


def _append_config(root: Path, text: str) -> None:
    path = root / "readout.yaml"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _config_line(root: Path, key: str) -> int:
    return next(number for number, line in enumerate((root / "readout.yaml").read_text(encoding="utf-8")
                                                     .splitlines(), start=1) if line.startswith(key))


@pytest.fixture
def project(tmp_path, make_project) -> Path:
    return make_project(tmp_path / "p")


# --- BEIR loader: qrels scores -------------------------------------------------------------------


def test_score_with_an_underscore_is_refused_not_read_as_ten(dataset):
    _set_score(dataset, "1_0")
    assert _load_error(dataset) == (f"{QRELS}:2: score: not an integer: '1_0' "
                                    "(ASCII digits only, with an optional sign)")


def test_score_in_arabic_indic_digits_is_refused(dataset):
    _set_score(dataset, "\u0661")
    assert _load_error(dataset) == (f"{QRELS}:2: score: not an integer: '\u0661' "
                                    "(ASCII digits only, with an optional sign)")


def test_score_in_full_width_digits_is_refused(dataset):
    _set_score(dataset, "\uff11")
    assert _load_error(dataset) == (f"{QRELS}:2: score: not an integer: '\uff11' "
                                    "(ASCII digits only, with an optional sign)")


def test_score_with_a_decimal_point_is_refused(dataset):
    _set_score(dataset, "1.0")
    assert _load_error(dataset) == f"{QRELS}:2: score: not an integer: '1.0'"


def test_score_with_a_plus_sign_is_accepted(dataset):
    _set_score(dataset, "+1")
    assert _first_score(dataset) == 1


def test_score_with_spaces_around_it_is_accepted(dataset):
    _set_score(dataset, " 2 ")
    assert _first_score(dataset) == 2


def test_score_after_a_no_break_space_is_refused(dataset):
    _set_score(dataset, "\u00a01")
    assert _load_error(dataset) == (f"{QRELS}:2: score: not an integer: '1' "
                                    "(ASCII digits only, with an optional sign)")


def test_score_of_hundreds_of_digits_is_refused(dataset):
    _set_score(dataset, "1" * 5000)
    assert _load_error(dataset) == f"{QRELS}:2: score: score of 5,000 digits; a relevance grade has at most 9"


def test_negative_judgement_is_kept_as_not_relevant_and_counted(dataset):
    _set_score(dataset, "-1", line=2)
    _set_score(dataset, "-2", line=3)
    loaded = load_dataset(dataset)
    query = loaded.test_query_ids()[0]
    assert sorted(loaded.qrels.scores[query].values()) == [-2, -1]
    assert loaded.qrels.relevant(query) == set()
    assert query in loaded.test_query_ids()          # still a test query, as in BEIR
    assert loaded.negative_judgements == 2


def test_no_negative_judgements_counts_zero(dataset):
    assert load_dataset(dataset).negative_judgements == 0


# --- BEIR loader: encodings ----------------------------------------------------------------------


def test_byte_order_mark_in_qrels_is_dropped_and_the_header_still_recognised(dataset):
    path = dataset / "qrels" / "test.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(load_dataset(dataset).test_query_ids()) == 6


def test_byte_order_mark_in_corpus_and_queries_is_dropped(dataset):
    for name in ("corpus.jsonl", "queries.jsonl"):
        path = dataset / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    loaded = load_dataset(dataset)
    assert loaded.documents[0].doc_id == "doc000" and "q0" in loaded.queries


def test_unrecognised_qrels_header_is_named_as_a_header(dataset):
    path = dataset / "qrels" / "test.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(["query\tcorpus\tscore"] + lines[1:]) + "\n", encoding="utf-8")
    assert _load_error(dataset) == f"{QRELS}:1: score: not an integer: 'score' (a header line starts with query-id)"


def test_non_utf8_corpus_names_the_line_and_byte_offset(dataset):
    path = dataset / "corpus.jsonl"
    raw = path.read_bytes()
    second = raw.index(b"\n") + 1
    path.write_bytes(raw[:second + 10] + b"\xff" + raw[second + 10:])
    assert _load_error(dataset) == f"d/corpus.jsonl:2: not UTF-8 text (byte {second + 10:,} of the file, 0xff)"


def test_non_utf8_qrels_names_the_line_and_byte_offset(dataset):
    path = dataset / "qrels" / "test.tsv"
    path.write_bytes(b"query-id\tcorpus-id\tscore\nq0\tdoc\xe9\t1\n")
    assert _load_error(dataset) == f"{QRELS}:2: not UTF-8 text (byte 31 of the file, 0xe9)"


# --- BEIR loader: JSON values ------------------------------------------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_in_the_corpus_are_refused(dataset, literal):
    (dataset / "corpus.jsonl").write_text('{"_id": "a", "text": "b", "score": %s}\n' % literal, encoding="utf-8")
    assert _load_error(dataset) == f"d/corpus.jsonl:1: not valid JSON: {literal} is not a number JSON allows"


def test_five_thousand_digit_number_in_the_corpus_is_refused(dataset):
    (dataset / "corpus.jsonl").write_text('{"_id": "a", "text": "b", "n": %s}\n' % ("7" * 5000), encoding="utf-8")
    assert _load_error(dataset) == ("d/corpus.jsonl:1: not valid JSON: a number of 5,000 digits is too long "
                                    "(more than 100 digits)")


def test_deeply_nested_json_in_the_corpus_is_refused(dataset):
    (dataset / "corpus.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    assert _load_error(dataset) == ("d/corpus.jsonl:1: not valid JSON: nested too deeply "
                                    "(beyond the parser's recursion limit)")


def test_lone_surrogate_escape_in_the_queries_is_refused(dataset):
    (dataset / "queries.jsonl").write_text('{"_id": "q0", "text": "a \\udcff b"}\n', encoding="utf-8")
    assert _load_error(dataset) == ("d/queries.jsonl:1: not valid JSON: a string holds the lone surrogate '\\udcff', "
                                    "which is not text")


# --- BEIR loader: echoed ids -------------------------------------------------------------------


def test_a_five_megabyte_id_is_cut_in_the_message(dataset):
    (dataset / "qrels" / "test.tsv").write_text("q0\t" + "x" * 5_000_000 + "\t1\n", encoding="utf-8")
    assert _load_error(dataset) == (f"{QRELS}:1: corpus-id: id '{'x' * 30}'... (5,000,000 characters) is longer "
                                    "than 1,000 characters")


def test_a_fifty_megabyte_line_is_refused_at_the_line_limit(dataset):
    (dataset / "qrels" / "test.tsv").write_text("q0\t" + "x" * 50_000_000 + "\t1\n", encoding="utf-8")
    assert _load_error(dataset) == (f"{QRELS}:1: line longer than 16 MiB (16,777,216 bytes), "
                                    "the most one line may hold")


def test_a_long_duplicate_id_is_cut_in_the_message(dataset):
    long_id = "y" * 1_000
    (dataset / "queries.jsonl").write_text(json.dumps({"_id": long_id, "text": "a"}) + "\n"
                                           + json.dumps({"_id": long_id, "text": "b"}) + "\n", encoding="utf-8")
    assert _load_error(dataset) == (f"d/queries.jsonl:2: _id: duplicate id '{'y' * 80}'... (1,000 characters) "
                                    "(first on line 1)")


def test_qrels_without_checks_reads_strictly_too(tmp_path):
    path = tmp_path / "qrels.tsv"
    path.write_text("q\td\t1_0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"not an integer: '1_0'"):
        load_qrels(path)


# --- results: write ----------------------------------------------------------------------------


@pytest.mark.parametrize("value, shown", [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_seal_refuses_a_value_that_is_not_finite(value, shown):
    with pytest.raises(UnsealableError) as caught:
        seal({"table": [{"search": "dense", "nDCG@5": value}], "manifest": {}}, writer="test")
    assert str(caught.value) == f"cannot seal results: {shown} at table[0].nDCG@5 is not a finite number"


def test_seal_refuses_an_integer_longer_than_the_bound():
    with pytest.raises(UnsealableError, match=rf"the integer at documents has more than {MAX_NUMBER_CHARS} digits"):
        canonical_bytes({"documents": 10 ** MAX_NUMBER_CHARS})
    assert canonical_bytes({"documents": 10 ** MAX_NUMBER_CHARS - 1})


def test_seal_refuses_nesting_deeper_than_the_bound():
    deep: dict = {}
    for _ in range(MAX_RESULTS_DEPTH):
        deep = {"a": deep}
    with pytest.raises(UnsealableError, match="nested too deeply"):
        canonical_bytes(deep)
    assert canonical_bytes(deep["a"])


# --- results: read -----------------------------------------------------------------------------


def _read_error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read_results(path)
    message = str(caught.value)
    assert "\n" not in message and len(message) <= LONGEST_LINE
    return message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_read_results_refuses_non_json_constants(tmp_path, monkeypatch, literal):
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text('{"documents": %s}' % literal, encoding="utf-8")
    assert _read_error(Path("r.json")) == f"r.json: not a results file: {literal} is not a number JSON allows"


def test_read_results_refuses_a_float_that_overflows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text('{"documents": 1e999}', encoding="utf-8")
    assert _read_error(Path("r.json")) == "r.json: not a results file: 1e999 is too large to be a finite number"


def test_read_results_refuses_a_number_literal_longer_than_the_bound(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text('{"documents": %s}' % ("1" * (MAX_NUMBER_CHARS + 1)), encoding="utf-8")
    assert _read_error(Path("r.json")) == ("r.json: not a results file: a number of 101 digits is too long "
                                           "(more than 100 digits)")
    Path("ok.json").write_text('{"documents": %s}' % ("1" * MAX_NUMBER_CHARS), encoding="utf-8")
    assert read_results(Path("ok.json")).data["documents"] == int("1" * MAX_NUMBER_CHARS)


def test_read_results_refuses_nesting_deeper_than_the_bound(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text('{"a": ' * MAX_RESULTS_DEPTH + "1" + "}" * MAX_RESULTS_DEPTH, encoding="utf-8")
    assert _read_error(Path("r.json")) == ("r.json: not a results file: nested too deeply (more than 32 levels) "
                                           "at " + ".".join(["a"] * MAX_RESULTS_DEPTH))
    Path("ok.json").write_text('{"a": ' * (MAX_RESULTS_DEPTH - 1) + "1" + "}" * (MAX_RESULTS_DEPTH - 1),
                               encoding="utf-8")
    assert read_results(Path("ok.json")).data["a"]


def test_read_results_refuses_nesting_beyond_the_recursion_limit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert _read_error(Path("r.json")) == ("r.json: not a results file: nested too deeply "
                                           "(beyond the parser's recursion limit)")


def test_read_results_refuses_a_lone_surrogate(tmp_path, monkeypatch):
    # A forged file can escape one; the seal's UTF-8 encoding would then fail on it.
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text('{"query_set": "\\udcff"}', encoding="utf-8")
    assert _read_error(Path("r.json")) == ("r.json: not a results file: a string holds the lone surrogate "
                                           "'\\udcff', which is not text")


def test_documents_nan_is_refused_instead_of_rendered_as_nan_documents(project, monkeypatch, capsys):
    path = project / "outputs" / "results.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"documents": 40', '"documents": NaN'), encoding="utf-8")
    assert _check(project, monkeypatch, capsys) == (
        2, "Error: outputs/results.json: not a results file: NaN is not a number JSON allows")


# --- readout.yaml --------------------------------------------------------------------------------


def test_evaluate_block_as_a_list_is_refused(project, monkeypatch, capsys):
    _append_config(project, "evaluate: [depth, 5]\n")
    line = _config_line(project, "evaluate:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: evaluate: expected a mapping of evaluation options")


def test_data_as_a_number_is_refused(project, monkeypatch, capsys):
    _append_config(project, "data: 123\n")
    line = _config_line(project, "data:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: data: expected a directory path as text, found a number: '123'")


@pytest.mark.parametrize("written", ["data:\n", "data: ''\n", "data: '  '\n"], ids=["empty", "quoted", "blank"])
def test_empty_data_is_an_error_never_the_working_directory(project, monkeypatch, capsys, written):
    _append_config(project, written)
    line = _config_line(project, "data:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: data: empty; give the dataset directory, relative to the project "
           "(default 'data/scifact' when the key is left out)")


def test_rrf_k_as_text_is_refused(project, monkeypatch, capsys):
    _append_config(project, "evaluate:\n  rrf_k: '60'\n")
    line = _config_line(project, "  rrf_k:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: evaluate.rrf_k: expected int, got '60'")


def test_negative_depth_is_refused(project, monkeypatch, capsys):
    _append_config(project, "evaluate:\n  depth: -5\n")
    line = _config_line(project, "  depth:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: evaluate.depth: must be an integer from 1 to 10,000")


def test_skip_rerank_as_a_sentence_is_refused_not_read_as_true(project, monkeypatch, capsys):
    _append_config(project, "evaluate:\n  skip_rerank: 'no thanks'\n")
    line = _config_line(project, "  skip_rerank:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: evaluate.skip_rerank: expected bool, got 'no thanks'")


@pytest.mark.parametrize("command", [(), ("build",), ("evaluate",)], ids=["check", "build", "evaluate"])
def test_unknown_query_set_is_refused_by_every_command_that_reads_the_block(project, monkeypatch, capsys, command):
    _append_config(project, "evaluate:\n  query_set: everything\n")
    line = _config_line(project, "  query_set:")
    assert _check(project, monkeypatch, capsys, *command) == (
        2, f"Error: readout.yaml:{line}: evaluate.query_set: choose one of sample, all")


def test_a_five_thousand_digit_number_in_readout_yaml_is_refused(project, monkeypatch, capsys):
    _append_config(project, "evaluate:\n  seed: " + "7" * 5000 + "\n")
    line = _config_line(project, "  seed:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: a number of 5,000 characters (more than 100)")


def test_an_impossible_date_in_readout_yaml_is_refused(project, monkeypatch, capsys):
    _append_config(project, "data: 2020-02-30\n")
    line = _config_line(project, "data:")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: not a valid YAML value: day is out of range for month")


def test_non_utf8_readout_yaml_names_the_line_and_byte_offset(project, monkeypatch, capsys):
    path = project / "readout.yaml"
    raw = path.read_bytes()
    path.write_bytes(raw + b"data: caf\xe9\n")
    line = raw.count(b"\n") + 1
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: not UTF-8 text (byte {len(raw) + 9:,} of the file, 0xe9)")


def test_byte_order_mark_in_readout_yaml_is_tolerated(project, monkeypatch, capsys):
    path = project / "readout.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert _check(project, monkeypatch, capsys) == (0, "")


def test_a_long_unknown_key_is_cut_in_the_message(project, monkeypatch, capsys):
    # YAML itself refuses a plain key of more than 1,024 characters.
    _append_config(project, "k" * 1000 + ": 1\n")
    line = _config_line(project, "kkk")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: readout.yaml:{line}: {'k' * 80}...: unknown key; choose from title, kind, data, evaluate, "
           "sandbox, outputs, regression")


def test_a_huge_wrongly_typed_value_is_cut_in_the_message(project, monkeypatch, capsys):
    _append_config(project, "evaluate:\n  rrf_k: '" + "6" * 100_000 + "'\n")
    code, line = _check(project, monkeypatch, capsys)
    assert code == 2 and line.startswith(f"Error: readout.yaml:{_config_line(project, '  rrf_k:')}: "
                                         "evaluate.rrf_k: expected int, got '666")


# --- ledger --------------------------------------------------------------------------------------


def _add_claim(project: Path, text: str, values: str = '{h: "table[search=hybrid].nDCG@5"}',
               claim_id: str = "wide") -> None:
    extra = (f"- id: {claim_id}\n  output: readout\n  section: results\n  kind: performance\n"
             f"  text: \"{text}\"\n  sources:\n    - measured:\n        values: {values}\n")
    (project / "claims" / "ledger.yaml").write_text(ledger_text(extra), encoding="utf-8")


def _claim_line(project: Path, claim_id: str, key: str = "id") -> int:
    lines = (project / "claims" / "ledger.yaml").read_text(encoding="utf-8").splitlines()
    start = next(number for number, line in enumerate(lines) if line.strip() == f"- id: {claim_id}")
    return next(number for number, line in enumerate(lines[start:], start=start + 1)
                if line.strip().lstrip("- ").startswith(f"{key}:"))


def test_a_two_billion_format_width_is_refused_naming_the_claim(project, monkeypatch, capsys):
    _add_claim(project, "Hybrid reaches nDCG@5 {h:2000000000}.")
    line = _claim_line(project, "wide", "text")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: claims/ledger.yaml:{line}: text: claim wide: placeholder {{h}}: format spec '2000000000' is not "
           "allowed; use one of '', ',', d, ,d, .Nf, +.Nf, ,.Nf, .N%, +.N% (N from 0 to 9)")


def test_a_precision_above_nine_is_refused_naming_the_claim(project, monkeypatch, capsys):
    _add_claim(project, "Hybrid reaches nDCG@5 {h:.101f}.")
    line = _claim_line(project, "wide", "text")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: claims/ledger.yaml:{line}: text: claim wide: placeholder {{h}}: format spec '.101f' is not "
           "allowed; use one of '', ',', d, ,d, .Nf, +.Nf, ,.Nf, .N%, +.N% (N from 0 to 9)")


def test_a_long_format_spec_is_cut_in_the_message(project, monkeypatch, capsys):
    _add_claim(project, "Hybrid reaches nDCG@5 {h:" + "9" * 1500 + "f}.")
    line = _claim_line(project, "wide", "text")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: claims/ledger.yaml:{line}: text: claim wide: placeholder {{h}}: format spec '{'9' * 40}'... "
           "(1,501 characters) is not allowed; use one of '', ',', d, ,d, .Nf, +.Nf, ,.Nf, .N%, +.N% (N from 0 to 9)")


def test_a_claim_id_longer_than_the_bound_is_refused(project, monkeypatch, capsys):
    _add_claim(project, "Hybrid reaches nDCG@5 {h:.3f}.", claim_id="c" * 5000)
    line = _claim_line(project, "c" * 5000)
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: claims/ledger.yaml:{line}: id: claim id '{'c' * 40}'... (5,000 characters) is longer than 80 "
           "characters")


def test_a_long_value_path_is_refused(project, monkeypatch, capsys):
    _add_claim(project, "Hybrid reaches nDCG@5 {h:.3f}.", values="{h: \"" + "a." * 1000 + "b\"}")
    line = _claim_line(project, "wide", "values")
    assert _check(project, monkeypatch, capsys) == (
        2, f"Error: claims/ledger.yaml:{line}: values.h: claim wide: path longer than 500 characters")


# --- design quotes -------------------------------------------------------------------------------


def test_a_sixty_thousand_word_missing_quote_is_refused_at_once(project):
    library = DesignLibrary(project / "design")
    started = time.monotonic()
    found = check_design_source(DesignSource("decisions.md", "word " * 60_000, 1), library, "q", "ledger.yaml")
    assert time.monotonic() - started < 0.5
    assert found.reason == ("quote is 300,000 characters, longer than 2,000; quote whole sentences, list items or "
                            "table cells")


def test_a_quote_above_the_word_bound_skips_the_closest_match_search_and_says_so(project):
    library = DesignLibrary(project / "design")
    quote = " ".join(["a"] * (CLOSEST_MAX_WORDS + 1))
    started = time.monotonic()
    found = check_design_source(DesignSource("decisions.md", quote, 1), library, "q", "ledger.yaml")
    assert time.monotonic() - started < 0.5
    assert found.reason.endswith(f"; no closest match is searched for a quote of {CLOSEST_MAX_WORDS + 1} words "
                                 f"(more than {CLOSEST_MAX_WORDS}); quote whole sentences, list items or table cells")


# --- bounded YAML --------------------------------------------------------------------------------


def _alias_ledger() -> str:
    """About 30 KB: 200 anchors, each a list of 20 aliases of the one before (20**200 leaves)."""
    lines = ["version: 1", "a0: &a0 [x]"] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 20)}]" for i in range(1, 200)]
    return "\n".join(lines) + "\nclaims: []\n"


@pytest.mark.parametrize("reader", [parse_yaml, load_config], ids=["ledger", "readout.yaml"])
def test_a_30_kb_alias_ledger_is_refused_at_once_as_aliases(reader):
    text = _alias_ledger()
    assert 25_000 < len(text) < 35_000
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        reader(text, "f.yaml")
    assert time.monotonic() - started < 0.5
    # Line 3 holds the first alias of the file: both readers walk the document in reading order.
    assert str(caught.value) == ("f.yaml:3: YAML anchors and aliases are not allowed here (an alias can expand "
                                 "without bound); write the value out")


@pytest.mark.parametrize("reader", [parse_yaml, load_config], ids=["ledger", "readout.yaml"])
def test_nesting_beyond_the_yaml_bound_is_refused(reader):
    with pytest.raises(InputError) as caught:
        reader("a: " + "[" * 65 + "]" * 65 + "\n", "f.yaml")
    assert str(caught.value) == "f.yaml:1: nested more than 64 levels deep"
