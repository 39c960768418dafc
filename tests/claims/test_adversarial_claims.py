"""Adversarial tests of the checker: each case is a way an untraced sentence used to pass (or
could pass) `readout check`.

Every case builds the shared fixture project (tests/conftest.py `make_project`: a sealed
results.json with run files and judgements, one design document, a ledger that checks clean, a
frozen design, a chained first-draft history), plants one attack, drives the real CLI and asserts
the exit code (0 pass, 1 findings, 2 input or usage error), a distinctive part of the reason, and
that no traceback is printed.

Families (one section each): 1 invented measurements, 2 quotes that support nothing, 3 numbers
the rule never sees, 4 format specs that forge values, 5 predicates that cannot fail, 6 values
attributed to the wrong thing, 8 struck text that is not struck, 9 an editable first-draft
score, 10 remote references in claims. (Family 7 and the rest of 10 attack the reports:
tests/render/test_adversarial_render.py; family 11, crashes: tests/test_adversarial_inputs.py.)
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from generator.core.results import seal
from tests.conftest import (DENSE, FUSION, HISTORY, HYBRID, HYBRID_VS_DENSE, SPARSE, WRITER, add_design, claim,
                            design, edit_results, fixture_evaluation, ledger_text, measured, one_line_error, run_cli,
                            sha256)


# --- 1. invented measurements -------------------------------------------------------------------


def _reported_value_edited(root: Path) -> None:
    edit_results(root, lambda data: data["table"][2].update({"nDCG@5": 0.81}))


def _reported_value_edited_and_resealed(root: Path) -> None:
    edit_results(root, lambda data: data["table"][2].update({"nDCG@5": 0.81}), reseal=True)


def _run_file_edited(root: Path) -> None:
    path = root / "outputs" / "runs" / "hybrid.trec"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0], lines[1] = lines[1], lines[0]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run_file_edited_rehashed_resealed(root: Path) -> None:
    # Put a relevant document of q01 (d08) at rank 1 of hybrid's run, record the new hash, re-seal.
    path = root / "outputs" / "runs" / "hybrid.trec"
    path.write_text(path.read_text(encoding="utf-8").replace("q01 Q0 d17 1 ", "q01 Q0 d08 1 ", 1), encoding="utf-8")
    edit_results(root, lambda data: data["manifest"]["run_files"]["hybrid"].update(sha256=sha256(path)),
                 reseal=True)


def _qrels_edited(root: Path) -> None:
    path = root / "outputs" / "runs" / "qrels.tsv"
    path.write_text(path.read_text(encoding="utf-8") + "q01 0 d17 1\n", encoding="utf-8")


def _qrels_edited_rehashed_resealed(root: Path) -> None:
    _qrels_edited(root)
    path = root / "outputs" / "runs" / "qrels.tsv"
    edit_results(root, lambda data: data["manifest"]["qrels_copy"].update(sha256=sha256(path)), reseal=True)


def _invent_rerank_row(root: Path, *, record_run_file: bool = True, typed: dict | None = None,
                       p95: float | None = None) -> None:
    """A measured hybrid+rerank row: its run file is hybrid's, relabelled; every figure copied from
    hybrid (so it re-derives), then optionally some typed over; results.json re-sealed."""
    source = root / "outputs" / "runs" / "hybrid.trec"
    invented = root / "outputs" / "runs" / "hybrid-rerank.trec"
    invented.write_text(source.read_text(encoding="utf-8").replace(" hybrid\n", " hybrid+rerank\n"),
                        encoding="utf-8")

    def change(data: dict) -> None:
        hybrid = next(row for row in data["table"] if row["search"] == "hybrid")
        row = {**copy.deepcopy(hybrid), "search": "hybrid+rerank", "model": "BAAI/bge-reranker-v2-m3",
               **(typed or {})}
        data["table"] = [r for r in data["table"] if r["search"] != "hybrid+rerank"] + [row]
        for key in ("per_query", "diagnosis", "diagnosis_summary"):
            data[key]["hybrid+rerank"] = copy.deepcopy(data[key]["hybrid"])
        data["same_50_rows_after_rerank"] = True
        data["runs"]["hybrid+rerank"] = "runs/hybrid-rerank.trec"
        if record_run_file:
            data["manifest"]["run_files"]["hybrid+rerank"] = {"path": "runs/hybrid-rerank.trec",
                                                              "sha256": sha256(invented)}
        if p95 is not None:
            data["p95_rerank_milliseconds"] = p95

    edit_results(root, change, reseal=True)


def _unsealed_side_file(root: Path) -> None:
    (root / "outputs" / "invented.json").write_text(json.dumps(
        {"table": [{"search": "hybrid", "measured": True, "nDCG@5": 0.81}]}), encoding="utf-8")


def _side_file_vouched_by_resealed_results(root: Path) -> None:
    # HOLE: results.json re-sealed with manifest.files listing an invented file; nothing re-derives it.
    _unsealed_side_file(root)
    path = root / "outputs" / "invented.json"
    edit_results(root, lambda data: data["manifest"].__setitem__("files", {"invented.json": sha256(path)}),
                 reseal=True)


def _self_sealed_file_without_run_files(root: Path) -> None:
    # HOLE: a file sealed by hand with rows but no run files passes as a "side record".
    data = {"queries": 300, "table": [{"search": "hybrid", "measured": True, "nDCG@5": 0.81}], "manifest": {}}
    (root / "outputs" / "invented.json").write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")


CITE_INVENTED = claim("cites-invented", "Hybrid reaches nDCG@5 {h:.3f}.",
                      measured({"h": HYBRID}, file="invented.json"), kind="performance")
CITE_INVENTED_COUNT = claim("cites-invented", "Hybrid reaches nDCG@5 {h:.3f} on {n} queries.",
                            measured({"h": HYBRID, "n": "queries"}, file="invented.json"), kind="performance")
CITE_RERANK = claim("cites-rerank", "Hybrid+rerank reaches nDCG@5 {r:.3f}.",
                    measured({"r": "table[search=hybrid+rerank].nDCG@5"}), kind="performance")
CITE_P95 = claim("cites-rerank", "Hybrid+rerank takes {t:.1f} ms per query at the p95.",
                 measured({"t": "p95_rerank_milliseconds"}), kind="performance")

INVENTED_MEASUREMENTS = [
    pytest.param(CITE_INVENTED, _unsealed_side_file, "cites-invented", "outputs/invented.json cannot be cited: not sealed",
                 id="unsealed-json-in-outputs"),
    pytest.param("", _reported_value_edited, "verdict-hybrid", "seal broken", id="results-edited-after-writing"),
    pytest.param("", _reported_value_edited_and_resealed, "verdict-hybrid",
                 "table[search=hybrid].nDCG@5 is 0.81, but its run files and judgements give",
                 id="results-resealed-after-editing-a-number"),
    pytest.param("", _run_file_edited, "verdict-hybrid",
                 "runs/hybrid.trec changed after the results were sealed", id="run-file-edited-after-sealing"),
    pytest.param("", _run_file_edited_rehashed_resealed, "verdict-hybrid",
                 "per_query.hybrid.q01.nDCG@5 is 0.264", id="run-file-edited-rehashed-resealed"),
    pytest.param("", _qrels_edited, "verdict-hybrid", "runs/qrels.tsv changed after the results were sealed",
                 id="qrels-copy-edited"),
    pytest.param("", _qrels_edited_rehashed_resealed, "verdict-hybrid",
                 "but its run files and judgements give", id="qrels-copy-edited-rehashed-resealed"),
    pytest.param(CITE_RERANK, lambda root: _invent_rerank_row(root, record_run_file=False), "cites-rerank",
                 "table[search=hybrid+rerank] is marked measured but no run file is recorded",
                 id="invented-rerank-row-without-run-file"),
    pytest.param(CITE_RERANK, lambda root: _invent_rerank_row(root, typed={"nDCG@5": 0.81}), "cites-rerank",
                 "table[search=hybrid+rerank].nDCG@5 is 0.81, but its run files and judgements give",
                 id="invented-rerank-row-with-invented-run-file"),
    pytest.param(CITE_P95, lambda root: _invent_rerank_row(root, p95=12.0), "cites-rerank",
                 "table[search=hybrid+rerank] is measured but no rerank time is recorded per query",
                 id="invented-rerank-time"),
    # HOLE: a rerank row "measured" by relabelling hybrid's run file, every figure copied from hybrid,
    # no rerank time recorded for any query: it re-derives, so the claim traced. A measured rerank
    # row should at least need its per-query rerank times (`rerank_milliseconds`). (A fabrication
    # written with the real writer and invented times is beyond any re-derivation.)
    pytest.param(CITE_RERANK, _invent_rerank_row, "cites-rerank", "cannot be cited",
                 id="invented-rerank-row-copied-from-hybrid"),
    pytest.param(CITE_INVENTED, _side_file_vouched_by_resealed_results, "cites-invented", "cannot be cited",
                 id="side-file-vouched-by-resealed-results"),
    pytest.param(CITE_INVENTED_COUNT, _self_sealed_file_without_run_files, "cites-invented", "cannot be cited",
                 id="self-sealed-file-without-run-files"),
]


@pytest.mark.parametrize("extra, attack, claim_id, reason", INVENTED_MEASUREMENTS)
def test_invented_measurements_are_refused(tmp_path, make_project, monkeypatch, capsys, extra, attack, claim_id,
                                           reason):
    root = make_project(tmp_path / "p", extra_claims=extra)
    attack(root)
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says(claim_id, reason), outcome.out


# --- 2. quotes that support nothing -------------------------------------------------------------


MORE_DESIGN = """
## Limits

Reranking is not worth its time on this corpus. Reranking helps only when the candidates hold the answer.

```mermaid
graph LR
  A[Reranking doubles recall] --> B[Ship it]
```

```
Reranking always wins.
```

<div>Reranking never loses.</div>
"""

QUOTES = [
    pytest.param("Hybrid fuses both lists.", "the", "quote is part of a unit", id="quote-the"),
    pytest.param("Hybrid fuses both lists.", ".", "quote is part of a unit", id="quote-full-stop"),
    pytest.param("Reranking is worth its time on this corpus.", "worth its time on this corpus",
                 'the whole unit (line 17): "Reranking is not worth its time on this corpus."', id="sub-span-drops-not"),
    pytest.param("Reranking helps.", "Reranking helps",
                 'the whole unit (line 17): "Reranking helps only when the candidates hold the answer."',
                 id="sub-span-drops-only-when"),
    pytest.param("Hybrid uses RRF.", "Fusion Hybrid uses RRF with constant 60 over both top-50 lists.",
                 "quote not found in design/decisions.md", id="span-straddles-heading-before"),
    pytest.param("Hybrid uses RRF.", "Hybrid uses RRF with constant 60 over both top-50 lists. Reranking",
                 "quote not found in design/decisions.md", id="span-straddles-heading-after"),
    pytest.param("Reranking doubles recall.", "Reranking doubles recall", "quote is inside a code or diagram block",
                 id="quote-from-mermaid"),
    pytest.param("Reranking always wins.", "Reranking always wins.", "quote is inside a code or diagram block",
                 id="quote-from-code-block"),
    pytest.param("Reranking never loses.", "Reranking never loses.", "quote is inside a code or diagram block",
                 id="quote-from-html-block"),
]


@pytest.mark.parametrize("text, quote, reason", QUOTES)
def test_quotes_that_support_nothing_are_refused(tmp_path, make_project, monkeypatch, capsys, text, quote, reason):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, design(quote)))
    add_design(root, MORE_DESIGN)
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_lines("c"), outcome.out
    assert outcome.claim_says("c", reason), outcome.out


DOTFILES = [
    pytest.param(".notes.md", ".notes.md", "document '.notes.md' must be a relative name inside design/",
                 id="dotfile-cited"),
    pytest.param(".notes.md", None, "design/.notes.md: hidden file in design/", id="dotfile-uncited"),
    pytest.param(".hidden/notes.md", None, "design/.hidden: hidden file in design/", id="hidden-directory-uncited"),
    pytest.param(".hidden/notes.md", ".hidden/notes.md", "no hidden name", id="hidden-directory-cited"),
]


@pytest.mark.parametrize("name, cited, reason", DOTFILES)
def test_hidden_design_files_are_refused(tmp_path, make_project, monkeypatch, capsys, name, cited, reason):
    extra = claim("c", "Reranking always wins.", design("Reranking always wins.", cited)) if cited else ""
    root = make_project(tmp_path / "p", extra_claims=extra)
    path = root / "design" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Notes\n\nReranking always wins.\n", encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 2, outcome.out + outcome.err
    assert reason in one_line_error(outcome)


# --- 3. numbers the rule never sees -------------------------------------------------------------


TYPED_NUMBERS = [
    pytest.param("Hybrid fuses both lists and reaches .81.", "'.81'", id="leading-dot"),
    pytest.param("Hybrid fuses both lists and reaches 0.81.", "'0.81'", id="typed-decimal"),
    pytest.param("Hybrid fuses both lists and wins ² queries.", "'²'", id="superscript"),
    pytest.param("Hybrid fuses both lists and reaches 9² points.", "'9²'", id="superscript-exponent"),
    pytest.param("Hybrid fuses both lists and wins ½ of the queries.", "'½'", id="vulgar-fraction"),
    pytest.param("Hybrid fuses both lists and reaches 1½ points.", "'1½'", id="mixed-fraction"),
    pytest.param("Hybrid fuses both lists and reaches &#56;1.", "'81'", id="html-decimal-reference"),
    pytest.param("Hybrid fuses both lists and reaches 8&#x31;.", "'81'", id="html-hex-reference"),
    pytest.param("Hybrid fuses both lists and reaches **8**1.", "'81'", id="split-by-emphasis"),
    pytest.param("Hybrid fuses both lists and reaches ８１.", "'８１'", id="full-width-digits"),
    pytest.param("Hybrid fuses both lists and reaches `81`.", "'81'", id="code-span"),
    pytest.param("Hybrid fuses both lists, see <https://x.org/81>.", "'81'", id="inside-autolink"),
    pytest.param("Hybrid fuses both lists, see <#81>.", "'81'", id="inside-angle-brackets"),
    pytest.param("Hybrid fuses both lists, see [81 results](#results).", "'81'", id="inside-link-text"),
    # HOLE: readout.html shows a link as "text (address)", so the reader sees "#81"; check passed it.
    pytest.param("Hybrid fuses both lists, see [the results](#81).", "81", id="inside-link-address"),
    pytest.param("Hybrid fuses both lists and wins eighty-one queries.", "'eighty-one'", id="spelled-out"),
    pytest.param("Hybrid fuses both lists over five rows.", "'five'", id="spelled-count"),
    pytest.param("Hybrid fuses both lists and is twice as good.", "'twice'", id="multiplier-word"),
    pytest.param("Hybrid fuses both lists and is 2x as good.", "'2x'", id="multiplier-2x"),
    pytest.param("Hybrid fuses both lists and gains a dozen points.", "'dozen'", id="dozen"),
    pytest.param("Hybrid fuses both lists in v6.0.0.", "'v6.0.0'", id="version-token"),
    pytest.param("Hybrid wins 60 queries over dense.", "'60'", id="quoted-number-other-neighbours"),
]


@pytest.mark.parametrize("text, token", TYPED_NUMBERS)
def test_hand_typed_numbers_are_refused(tmp_path, make_project, monkeypatch, capsys, text, token):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, FUSION))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert any(token in line and "typed by hand" in line for line in outcome.claim_lines("c")), outcome.out


PREDICATE_CONSTANTS = [
    pytest.param("Hybrid reaches 0.81 nDCG@5, above dense {d:.3f}.", "h > d or h == 0.81", id="or-equals-constant"),
    pytest.param("Hybrid reaches 0.81 while dense reaches {d:.3f}.", "h == 0.81 or h > d", id="constant-first"),
    pytest.param("Hybrid reaches 0.81 against dense {d:.3f}.", "h > d and h < 0.81 + 0.001",
                 id="constant-in-bound"),
]


@pytest.mark.parametrize("text, predicate", PREDICATE_CONSTANTS)
def test_predicate_constants_account_for_no_typed_number(tmp_path, make_project, monkeypatch, capsys, text,
                                                         predicate):
    root = make_project(tmp_path / "p", extra_claims=claim(
        "c", text, measured({"h": HYBRID, "d": DENSE}, predicate), kind="evaluative"))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", "number '0.81' is typed by hand"), outcome.out


# --- 4. format specs that forge values ----------------------------------------------------------


LOAD_TIME_SPECS = [
    pytest.param("Hybrid reaches nDCG@5 {h:>10.2f}.", {"h": HYBRID}, "format spec '>10.2f' is not allowed",
                 id="fill-align-width"),
    pytest.param("Hybrid reaches nDCG@5 {h:09.3f}.", {"h": HYBRID}, "format spec '09.3f' is not allowed",
                 id="zero-fill-width"),
    pytest.param("Hybrid reaches nDCG@5 {h:10.3f}.", {"h": HYBRID}, "format spec '10.3f' is not allowed",
                 id="width"),
    pytest.param("Hybrid reaches nDCG@5 {h:.3g}.", {"h": HYBRID}, "format spec '.3g' is not allowed",
                 id="general-format"),
    pytest.param("The rerank row was skipped: {why:.3}.", {"why": "table[search=hybrid+rerank].not_measured_reason"},
                 "format spec '.3' is not allowed", id="precision-on-text"),
    pytest.param("Hybrid reaches nDCG@5 {h!r}.", {"h": HYBRID}, "conversions are not allowed", id="conversion"),
    pytest.param("Hybrid reaches nDCG@5 {h:{h}}.", {"h": HYBRID}, "nested fields in a format spec are not allowed",
                 id="nested-spec"),
]


@pytest.mark.parametrize("text, values, reason", LOAD_TIME_SPECS)
def test_forging_format_specs_are_refused_when_the_ledger_loads(tmp_path, make_project, monkeypatch, capsys, text,
                                                                values, reason):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, measured(values), kind="performance"))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert reason in line and "claims/ledger.yaml:" in line and "text" in line


PLACED_SPECS = [
    pytest.param("Hybrid was measured: {m:.3f}.", {"m": "table[search=hybrid].measured"},
                 "a boolean is never placed in a sentence", id="numeric-spec-on-boolean"),
    pytest.param("Hybrid was measured: {m}.", {"m": "table[search=hybrid].measured"},
                 "a boolean is never placed in a sentence", id="boolean-without-spec"),
    pytest.param("Hybrid was measured: {m:d}.", {"m": "table[search=hybrid].measured"},
                 "a boolean is never placed in a sentence", id="integer-spec-on-boolean"),
    pytest.param("The rerank row was skipped: {why:d}.", {"why": "table[search=hybrid+rerank].not_measured_reason"},
                 "text takes no format spec (got 'd')", id="integer-spec-on-text"),
    pytest.param("Hybrid reaches nDCG@5 {h:,d}.", {"h": HYBRID}, "format spec ',d' is for integers",
                 id="integer-spec-on-float"),
    pytest.param("Hybrid fuses both lists.", {"h": HYBRID},
                 "value h is declared but neither shown in the text nor compared in a predicate",
                 id="declared-value-supports-nothing"),
]


@pytest.mark.parametrize("text, values, reason", PLACED_SPECS)
def test_forging_format_specs_are_refused_when_placed(tmp_path, make_project, monkeypatch, capsys, text, values,
                                                      reason):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, measured(values)))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", reason), outcome.out


# --- 5. predicates that cannot fail -------------------------------------------------------------


TAUTOLOGIES = [
    pytest.param("h == h and d == d", "cannot fail: it stays true however its values change", id="x-equals-x"),
    pytest.param("1 == 1", "compares none of the claim's values: it cannot fail", id="one-equals-one"),
    pytest.param("h > h - 1 and d > d - 1", "cannot fail", id="s-greater-than-s-minus-one"),
    pytest.param("true", "compares none of the claim's values: it cannot fail", id="true"),
    pytest.param("h >= 0 or h < 0", "cannot fail", id="excluded-middle"),
    pytest.param("max(h, d) >= h", "cannot fail", id="max-at-least-h"),
    pytest.param("h > d or true", "cannot fail", id="or-true"),
]

INFINITE_LITERALS = [
    pytest.param("h > d - 1e999", id="minus-infinite-literal"),
    pytest.param("h - d < 1e999", id="below-infinite-literal"),
]


@pytest.mark.parametrize("predicate", INFINITE_LITERALS)
def test_predicates_with_an_infinite_constant_are_refused_at_load(tmp_path, make_project, monkeypatch, capsys,
                                                                   predicate):
    # an infinite literal makes a comparison unfalsifiable: the ledger is refused as written
    root = make_project(tmp_path / "p", extra_claims=claim(
        "c", HYBRID_VS_DENSE, measured({"h": HYBRID, "d": DENSE}, predicate), kind="evaluative"))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert "predicate: claim c: constant inf is not a finite number" in line, line


@pytest.mark.parametrize("predicate, reason", TAUTOLOGIES)
def test_predicates_that_cannot_fail_are_refused(tmp_path, make_project, monkeypatch, capsys, predicate, reason):
    root = make_project(tmp_path / "p", extra_claims=claim(
        "c", HYBRID_VS_DENSE, measured({"h": HYBRID, "d": DENSE}, predicate), kind="evaluative"))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", reason), outcome.out


UNSUPPORTED_COMPARISONS = [
    pytest.param("Hybrid reaches nDCG@5 {h:.3f}, better than dense.",
                 measured({"h": HYBRID, "docs": "documents"}, "docs > 0"), "factual",
                 "its predicate compares no value the sentence shows or of a row it names",
                 id="predicate-on-unrelated-value"),
    pytest.param("Hybrid is ahead of dense with {h:.3f}.", measured({"h": HYBRID}), "factual",
                 "the claim needs a predicate because it compares ('ahead')", id="comparative-factual-no-predicate"),
    pytest.param("Hybrid reaches nDCG@5 {h:.3f} and dense {d:.3f}.", measured({"h": HYBRID, "d": DENSE}), "factual",
                 "the claim needs a predicate because it shows {d}, {h} side by side",
                 id="side-by-side-factual-no-predicate"),
    pytest.param("Hybrid reaches nDCG@5 {h:.3f} and dense {d:.3f}.",
                 measured({"h": HYBRID, "d": DENSE}, "h > 0"), "evaluative",
                 "the claim shows {d} beside numbers of the same measure, but no predicate compares them",
                 id="predicate-leaves-shown-value-out"),
    # HOLE: "beats dense" held by a comparison with sparse; it traced.
    pytest.param("Hybrid beats dense on nDCG@5.", measured({"h": HYBRID, "s": SPARSE}, "h > s"), "evaluative",
                 "predicate", id="comparison-held-against-the-wrong-row"),
    # HOLE: "beats dense" held by a comparison with a constant; no value of dense is compared.
    pytest.param("Hybrid beats dense on nDCG@5.", measured({"h": HYBRID}, "h > 0.3"), "evaluative",
                 "predicate", id="comparison-held-against-a-constant"),
]


@pytest.mark.parametrize("text, sources, kind, reason", UNSUPPORTED_COMPARISONS)
def test_comparisons_need_a_predicate_on_what_they_compare(tmp_path, make_project, monkeypatch, capsys, text, sources,
                                                           kind, reason):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, sources, kind=kind))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", reason), outcome.out


NAN_PREDICATES = ["h > 0.3", "not (h < 0.3)", "h != 0.3"]


@pytest.mark.parametrize("predicate", NAN_PREDICATES, ids=["greater", "not-less", "not-equal"])
def test_predicate_on_nan_in_an_unsealed_file_is_refused(tmp_path, make_project, monkeypatch, capsys, predicate):
    # A sealed file cannot hold NaN (the seal's canonical JSON refuses it); an unsealed one can.
    root = make_project(tmp_path / "p", extra_claims=claim(
        "c", "Hybrid reaches nDCG@5 above the bar.", measured({"h": HYBRID}, predicate, file="nan.json"),
        kind="evaluative"))
    (root / "outputs" / "nan.json").write_text(
        '{"table": [{"search": "hybrid", "measured": true, "nDCG@5": NaN}]}', encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "check")
    # NaN is not JSON: the file is refused as input before any claim can rest on it.
    assert outcome.code == 2, outcome.out
    assert outcome.err == "Error: outputs/nan.json: not a results file: NaN is not a number JSON allows\n"


def test_nan_behind_a_forged_seal_is_refused(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    path = root / "outputs" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["table"][2]["nDCG@5"] = float("nan")
    unsealed = {**data, "manifest": {k: v for k, v in data["manifest"].items() if k != "seal"}}
    digest = hashlib.sha256(json.dumps(unsealed, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=False).encode("utf-8")).hexdigest()
    data["manifest"]["seal"]["sha256"] = digest
    path.write_text(json.dumps(data), encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 2, outcome.out
    assert outcome.err == "Error: outputs/results.json: not a results file: NaN is not a number JSON allows\n"


# --- 6. values attributed to the wrong thing ----------------------------------------------------


def _write_300(root: Path) -> None:
    """A second sealed results file, results-300.json, written by the real writer (its own runs)."""
    from generator.evaluate.pipeline import write_sealed_results

    outputs = root / "outputs"
    write_sealed_results(outputs / "results-300.json", outputs / "runs-300", fixture_evaluation(hybrid_variant=1),
                         sample_path=outputs / "results.json")


INTERVAL = {"lo": "table[search=hybrid].paired_vs_dense.nDCG@5.ci95_low",
            "hi": "table[search=hybrid].paired_vs_dense.nDCG@5.ci95_high"}
QUERY_SET_REASON = "values come from results-300.json; show its query count with a placeholder bound to results-300.json"

ATTRIBUTION = [
    pytest.param("On the release sample, hybrid changes nDCG@5 over dense by between {lo:+.3f} and {hi:+.3f}.",
                 measured(INTERVAL, "lo < hi", file="results-300.json"), QUERY_SET_REASON,
                 id="300-query-interval-under-sample-label"),
    pytest.param("On {n} queries, hybrid changes nDCG@5 over dense by between {lo:+.3f} and {hi:+.3f}.",
                 measured(INTERVAL, "lo < hi", file="results-300.json") + measured({"n": "queries"}),
                 QUERY_SET_REASON, id="300-query-interval-under-20-query-count"),
    pytest.param("On the {n} sample queries, hybrid's nDCG@5 change over dense has the interval {lo:+.3f} to "
                 "{hi:+.3f}; on all {n300} it is {d:+.3f}.",
                 measured({"n": "queries"}) + measured({**INTERVAL, "n300": "queries",
                                                        "d": "table[search=hybrid].paired_vs_dense.nDCG@5.delta"},
                                                       "lo < hi", file="results-300.json"),
                 "is read with {n}, the query count of results.json", id="300-query-interval-read-with-both-counts"),
    pytest.param("On all {n300} queries hybrid's nDCG@5 changes over dense by {d:+.3f}; on the {n} sample queries "
                 "its interval runs {lo:+.3f} to {hi:+.3f}.",
                 measured({"n": "queries"}) + measured({**INTERVAL, "n300": "queries",
                                                        "d": "table[search=hybrid].paired_vs_dense.nDCG@5.delta"},
                                                       "lo < hi", file="results-300.json"),
                 "is read with {n}, the query count of results.json", id="300-query-interval-moved-to-the-sample"),
    pytest.param("Hybrid reaches nDCG@5 {v:.3f}.", measured({"v": "per_query.hybrid.q01.nDCG@5"}),
                 "{v} is the value of query q01 alone, but the sentence does not name query q01",
                 id="one-query-as-the-mean"),
    pytest.param("Hybrid reaches nDCG@5 {v:.3f} on q01.", measured({"v": "per_query.hybrid.q02.nDCG@5"}),
                 "{v} is the value of query q02 alone", id="one-query-under-another-query"),
    # HOLE: the sentence names q01 (in a range) yet presents q01's value as the mean over q01 to q20.
    pytest.param("Hybrid reaches mean nDCG@5 {v:.3f} over q01 to q20.", measured({"v": "per_query.hybrid.q01.nDCG@5"}),
                 "q01", id="one-query-as-the-mean-of-a-range"),
    pytest.param("The reranker lifts nDCG@5 by {lift:+.3f} over dense.",
                 measured({"lift": "table[search=hybrid].delta_nDCG@5_vs_dense"}, "lift > 0"),
                 "{lift} is a value of row hybrid, but the sentence does not name that row",
                 id="hybrid-change-as-reranker-lift"),
    pytest.param("Hybrid+rerank changes nDCG@5 by {lift:+.3f} over dense.",
                 measured({"lift": "table[search=hybrid].delta_nDCG@5_vs_dense"}, "lift > 0"),
                 "{lift} is a value of row hybrid, but the sentence does not name that row",
                 id="hybrid-change-under-rerank-row-name"),
    pytest.param("Dense reaches nDCG@5 {v:.3f}.", measured({"v": HYBRID}),
                 "{v} is a value of row hybrid, but the sentence does not name that row", id="hybrid-value-as-dense"),
]


@pytest.mark.parametrize("text, sources, reason", ATTRIBUTION)
def test_values_attributed_to_the_wrong_thing_are_refused(tmp_path, make_project, monkeypatch, capsys, text, sources,
                                                          reason):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, sources, kind="performance"))
    _write_300(root)
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", reason), outcome.out


def test_attribution_controls_trace(tmp_path, make_project, monkeypatch, capsys):
    """The refusals above are specific: the same values, correctly labelled, trace."""
    extra = (claim("interval-300", "On {q} queries, the interval of hybrid's nDCG@5 change from dense runs from "
                   "{lo:+.3f} to {hi:+.3f}.", measured({**INTERVAL, "q": "queries"}, "lo < hi", file="results-300.json"),
                   kind="performance")
             + claim("q01-value", "On q01, hybrid reaches nDCG@5 {v:.3f}.",
                     measured({"v": "per_query.hybrid.q01.nDCG@5"}), kind="performance")
             + claim("hybrid-lift", "Hybrid's nDCG@5 minus dense's is {lift:+.3f}.",
                     measured({"lift": "table[search=hybrid].delta_nDCG@5_vs_dense"}, "lift > 0"),
                     kind="performance"))
    root = make_project(tmp_path / "p", extra_claims=extra)
    _write_300(root)
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 0, outcome.out


# --- 8. struck text that is not struck ----------------------------------------------------------


STRIKE_MARKUP = [
    pytest.param("Reranking adds ~~12 ms~~ nothing here.", id="double-tilde"),
    pytest.param("Reranking adds <del>12 ms</del> nothing here.", id="del-element"),
    pytest.param("Reranking adds <s>12 ms</s> nothing here.", id="s-element"),
    pytest.param("Reranking adds <DEL>12 ms</DEL> nothing here.", id="del-element-upper"),
    # HOLE: GitHub-flavoured Markdown strikes text between single tildes too; TEACHBACK.md and AAR.md
    # carry it as written, so an active claim shows struck text. Check passed it.
    pytest.param("Reranking adds ~nothing~ here.", id="single-tilde"),
]


@pytest.mark.parametrize("text", STRIKE_MARKUP)
def test_strike_markup_inside_a_claim_is_refused(tmp_path, make_project, monkeypatch, capsys, text):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, FUSION, output="teachback", section="rows"))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert "claims/ledger.yaml:" in line and "claim c: strike markup in the text" in line, line


STRIKE_REASONS = [
    pytest.param("typed 12 ms by hand", "a label holds no numbers ('12')", id="digits"),
    pytest.param("eighty-one", "a label holds no numbers ('eighty-one')", id="number-word"),
    pytest.param("the rerank was slower. Hybrid is better", "a label holds no sentence punctuation",
                 id="sentence"),
    # HOLE: a comparative sentence with no digits or punctuation passes as a strike reason.
    pytest.param("Hybrid is better than dense", "strike_reason", id="comparative-sentence"),
]


@pytest.mark.parametrize("strike_reason, reason", STRIKE_REASONS)
def test_strike_reasons_that_carry_claims_are_refused(tmp_path, make_project, monkeypatch, capsys, strike_reason,
                                                      reason):
    extra = claim("c", "Reranking is cheap.",
                  extra=f"status: struck\nstrike_reason: {json.dumps(strike_reason)}")
    root = make_project(tmp_path / "p", extra_claims=extra)
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert "strike_reason" in line and reason in line, line


# --- 9. an editable first-draft score -----------------------------------------------------------


FIRST_DRAFT = Path("claims") / "ledger.first-draft.yaml"


def _grow_history(root: Path, monkeypatch, capsys) -> list[str]:
    """Two more ledger versions checked: a three-line history."""
    for number in range(2):
        (root / "claims" / "ledger.yaml").write_text(ledger_text(claim(
            f"more-{number}", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."',
            FUSION)), encoding="utf-8")
        assert run_cli(root, monkeypatch, capsys, "check").code == 0
    lines = (root / HISTORY).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    return lines


def _lower_first_score(lines: list[str]) -> list[str]:
    first = json.loads(lines[0])
    first["untraceable"] = 0
    return [json.dumps(first, sort_keys=True), *lines[1:]]


HISTORY_EDITS = [
    pytest.param(_lower_first_score, "claims/trace-history.jsonl:2: the hash chain breaks here",
                 id="edit-first-line-score"),
    pytest.param(lambda lines: lines[1:], "claims/trace-history.jsonl:1: the hash chain breaks here",
                 id="delete-first-line"),
    pytest.param(lambda lines: lines[:1] + lines[2:], "claims/trace-history.jsonl:2: the hash chain breaks here",
                 id="delete-middle-line"),
    pytest.param(lambda lines: [lines[0], lines[2], lines[1]], "the hash chain breaks here", id="reorder-lines"),
]


@pytest.mark.parametrize("edit, reason", HISTORY_EDITS)
def test_edited_history_is_refused(tmp_path, make_project, monkeypatch, capsys, edit, reason):
    root = make_project(tmp_path / "p")
    lines = _grow_history(root, monkeypatch, capsys)
    (root / HISTORY).write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert reason in outcome.out
    assert "first-draft history does not prove itself" in outcome.out


def _history_line(draft: bytes, untraceable: int, struck: int, total: int) -> str:
    return json.dumps({"checked_at": "2026-11-30T07:00:00Z", "ledger_sha256": hashlib.sha256(draft).hexdigest(),
                       "previous_sha256": "genesis", "untraceable": untraceable, "struck": struck,
                       "total": total}, sort_keys=True)


UNSOURCED_DRAFT = ledger_text("".join(claim(f"guess-{n}", f"Guess number {n}.") for n in ("a", "b", "c")))


def _replace_draft(root: Path) -> None:
    (root / FIRST_DRAFT).write_text(ledger_text() + "# tidied\n", encoding="utf-8")


def _rebuild_with_wrong_total(root: Path) -> None:
    draft = UNSOURCED_DRAFT.encode("utf-8")
    (root / FIRST_DRAFT).write_bytes(draft)
    (root / HISTORY).write_text(_history_line(draft, 3, 2, 7) + "\n", encoding="utf-8")


def _rebuild_below_unsourced_floor(root: Path) -> None:
    draft = UNSOURCED_DRAFT.encode("utf-8")
    (root / FIRST_DRAFT).write_bytes(draft)
    (root / HISTORY).write_text(_history_line(draft, 0, 2, 10) + "\n", encoding="utf-8")


DRAFT_REPLACEMENTS = [
    pytest.param(_replace_draft, "claims/ledger.first-draft.yaml: not the ledger the first history line scored",
                 id="replace-first-draft"),
    pytest.param(lambda root: (root / FIRST_DRAFT).unlink(), "claims/ledger.first-draft.yaml: missing",
                 id="delete-first-draft"),
    pytest.param(_rebuild_with_wrong_total, "claims/trace-history.jsonl:1: total 7 but", id="rebuild-total-differs"),
    pytest.param(_rebuild_below_unsourced_floor, "claims/trace-history.jsonl:1: untraceable 0 cannot be",
                 id="rebuild-below-unsourced-floor"),
]


@pytest.mark.parametrize("attack, reason", DRAFT_REPLACEMENTS)
def test_replaced_first_draft_is_refused(tmp_path, make_project, monkeypatch, capsys, attack, reason):
    root = make_project(tmp_path / "p")
    attack(root)
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert reason in outcome.out


@pytest.mark.parametrize("how", ["rescore-only-line", "replace-draft-and-rebuild"])
def test_consistently_rebuilt_history_is_the_known_limit(tmp_path, make_project, monkeypatch, capsys, how):
    """Outside git nothing can tell a consistently rewritten first draft from the real one: the
    chain has one line and the re-count (claims 7, struck 2, no unsourced active claim) agrees. The
    fixture's first draft scored 4/7; rewritten, it reads 2/7 and the check passes. In a git work
    tree `committed_history_problems` catches it once the real history has been committed. This
    test pins today's behaviour so a change to it is noticed; it is not a promise."""
    root = make_project(tmp_path / "p")
    if how == "rescore-only-line":
        (root / HISTORY).write_text("\n".join(_lower_first_score(
            (root / HISTORY).read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")
    else:
        draft = (ledger_text() + "# rewritten\n").encode("utf-8")
        (root / FIRST_DRAFT).write_bytes(draft)
        (root / HISTORY).write_text(_history_line(draft, 0, 2, 7) + "\n", encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 0, outcome.out
    assert "first draft 2/7" in outcome.out


# --- 10. remote content -------------------------------------------------------------------------


REMOTE = [
    pytest.param("Hybrid fuses both lists ![chart](https://evil.example/x.png).",
                 "remote reference in the text (image 'https://evil.example/x.png')", id="remote-image"),
    pytest.param("Hybrid fuses both lists, see [the paper](https://evil.example/p).",
                 "remote reference in the text (link 'https://evil.example/p')", id="remote-link"),
    pytest.param("Hybrid fuses both lists, see <https://evil.example/p>.",
                 "remote reference in the text (link 'https://evil.example/p')", id="remote-autolink"),
    pytest.param("Hybrid fuses both lists ![x](//evil.example/x.png).",
                 "remote reference in the text (image '//evil.example/x.png')", id="protocol-relative-image"),
    pytest.param("Hybrid fuses both lists, see [p](mailto:someone@evil.example).",
                 "remote reference in the text (link 'mailto:someone@evil.example')", id="mailto-link"),
    pytest.param("Hybrid fuses both lists, see [p](notes.html).", "remote reference in the text (link 'notes.html')",
                 id="relative-file-link"),
]


@pytest.mark.parametrize("text, reason", REMOTE)
def test_remote_references_in_claims_are_refused(tmp_path, make_project, monkeypatch, capsys, text, reason):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, FUSION))
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", reason), outcome.out


