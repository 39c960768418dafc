"""`readout check` on small fixture projects: each test pins one way a claim fails or passes,
asserting the exit code and the exact message."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from generator.claims.tracing.checker import check_project
from generator.commands.cli import main
from generator.project import load_project
from generator.claims.record.freeze import freeze_project
from tests.conftest import (DENSE, FIXTURE_FREEZE_TIME, FUSION, HYBRID, REPOSITORY_ROOT as REPOSITORY, SPARSE, claim,
                            cli_in_fresh_interpreter, design, ledger_text, measured, write_project_files)

DECISIONS = """\
# Decision records

## Fusion

Hybrid uses RRF with
constant 60 over both top-50 lists.

## Sparse search

One library, bm25s, for exact sparse search.
"""


GOOD_CLAIMS = (
    claim("rrf-constant", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."',
          FUSION)
    + claim("hybrid-beats-dense", "Hybrid's nDCG@5 is {hybrid:.3f} and dense's is {dense:.3f}.",
            measured({"hybrid": HYBRID, "dense": DENSE}, predicate="hybrid > dense"), kind="evaluative")
    + claim("rerank-not-measured", "The rerank row was not measured: {why}.",
            measured({"measured": "table[search=hybrid+rerank].measured",
                      "why": "table[search=hybrid+rerank].not_measured_reason"}, predicate="not measured"),
            output="aar", section="happened"))


# What check says of the order of a project outside git: only what the freeze itself records.
ORDER_WITHOUT_GIT = ("Order: design first frozen before any results (by the freeze's own record); not anchored "
                     "(no git history).\n")


def make_project(root: Path, write_results, extra_claims: str = "", *, freeze: bool = True) -> Path:
    """A fixture project with no outputs block and no history yet: one design document, a sealed
    results.json (conftest's fixture evaluation, with its run files and judgements) and a ledger."""
    write_project_files(root, config_text="title: Fixture\nkind: beir\n", decisions=DECISIONS,
                        ledger=ledger_text(GOOD_CLAIMS + extra_claims, claims=""), write_results=write_results,
                        freeze=(lambda where: _freeze(where)) if freeze else None)
    return root


def _freeze(root: Path) -> None:
    # At the fixture's own time: its results say they started at 08:00 that day.
    freeze_project(load_project(root), now=FIXTURE_FREEZE_TIME)


def write_ledger(root: Path, extra_claims: str = "") -> None:
    (root / "claims" / "ledger.yaml").write_text(ledger_text(GOOD_CLAIMS + extra_claims, claims=""))


def ledger_line(root: Path, claim_id: str) -> int:
    for number, line in enumerate((root / "claims" / "ledger.yaml").read_text().splitlines(), start=1):
        if line.strip() == f"- id: {claim_id}":
            return number
    raise AssertionError(claim_id)


@pytest.fixture
def project(tmp_path, monkeypatch, capsys, write_fixture_results):
    root = make_project(tmp_path / "p", write_fixture_results)
    monkeypatch.chdir(root)
    capsys.readouterr()
    return root


def results_of(root: Path) -> dict:
    return json.loads((root / "outputs" / "results.json").read_text())


def run(capsys, *argv):
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_traceable_ledger_exits_0_and_says_all_claims_trace(project, capsys):
    code, out, err = run(capsys)
    assert code == 0
    assert out == (ORDER_WITHOUT_GIT + "Trace score: untraceable claims / total claims = 0/3; first draft 0/3.\n"
                   "By output: aar 0/1, readout 0/2; by kind: factual 0/2, evaluative 0/1.\n"
                   "Sentences: 3 the author's words (0 untraceable).\n"
                   "All 3 claims trace.\n")
    assert err == ""


def test_unstruck_claim_without_source_exits_1(project, capsys):
    write_ledger(project, claim("no-source", "Nothing supports this.", output="aar", section="why"))
    code, out, _ = run(capsys)
    line = ledger_line(project, "no-source")
    assert code == 1
    assert out.splitlines()[0] == (f"claims/ledger.yaml:{line}: claim no-source (factual): [source-present] no source: attach a design "
                                   "quote or a measured path, or strike it with a reason")
    assert out.splitlines()[-1] == "Check failed: 1 of 4 claims"


def test_quote_not_in_document_shows_closest_passage_and_line(project, capsys):
    write_ledger(project, claim("wrong-quote", "Sparse search uses one library.",
                                design("One library, Pyserini, for exact sparse search.")))
    code, out, _ = run(capsys)
    line = ledger_line(project, "wrong-quote")
    assert code == 1
    assert out.splitlines()[0] == (f"claims/ledger.yaml:{line}: claim wrong-quote (factual): [design-quote] quote not found in "
                                   'design/decisions.md; closest (line 10): "One library, bm25s, for exact sparse '
                                   'search."')


def test_quote_found_across_line_break_reports_line_and_heading(project):
    report = check_project(load_project(project))
    evidence = report.result("rrf-constant").evidence[0]
    assert (evidence.document, evidence.line, evidence.heading, evidence.quote) == (
        "decisions.md", 5, "Fusion", "Hybrid uses RRF with constant 60 over both top-50 lists.")


def test_typo_in_results_path_lists_available_keys(project, capsys):
    write_ledger(project, claim("path-typo", "Dense reaches nDCG@5 {dense:.3f}.",
                                measured({"dense": "table[search=dense].nDGC@5"}), kind="performance"))
    code, out, _ = run(capsys)
    line = ledger_line(project, "path-typo")
    assert code == 1
    assert out.splitlines()[0] == (
        f"claims/ledger.yaml:{line}: claim path-typo (performance): [path-resolves] path table[search=dense].nDGC@5 not found in "
        "outputs/results.json: no key 'nDGC@5' at table[search=dense] (did you mean 'nDCG@5'?); available: "
        "delta_nDCG@5_vs_dense, delta_recall@50_vs_dense, delta_recall@5_vs_dense, measured, model, nDCG@5, "
        "recall@5, recall@50, search")


def test_unknown_row_selector_lists_row_names(project, capsys):
    write_ledger(project, claim("row-typo", "Hybrid reaches {h:.2f}.", measured({"h": "table[search=hybird].nDCG@5"}),
                                kind="performance"))
    code, out, _ = run(capsys)
    assert code == 1
    assert ("no element of table has search=hybird (did you mean 'hybrid'?); available search values: dense, "
            "sparse, hybrid, hybrid+rerank") in out


def test_typed_number_without_placeholder_exits_1(project, capsys):
    write_ledger(project, claim("typed-number", "Dense reaches nDCG@5 {dense:.3f} on the sample, about 0.35.",
                                measured({"dense": "table[search=dense].nDCG@5"}), kind="performance"))
    code, out, _ = run(capsys)
    line = ledger_line(project, "typed-number")
    dense = results_of(project)["table"][0]["nDCG@5"]
    assert f"{dense:.2f}" == "0.35"
    assert code == 1
    assert (f"claims/ledger.yaml:{line}: claim typed-number (performance): [number-placed] number '0.35' is typed by hand: no placeholder "
            f"fills it and no quoted design span holds it with the same words around it; it matches dense = {dense!r}: "
            "write {dense:.2f}") in out.splitlines()


def test_hand_typed_081_in_design_claim_exits_1(project, capsys):
    write_ledger(project, claim("typed-081",
                                "Hybrid uses RRF with constant 60 over both top-50 lists and scores 0.81.",
                                design("Hybrid uses RRF with constant 60 over both top-50 lists.")))
    code, out, _ = run(capsys)
    assert code == 1
    assert "claim typed-081 (factual): [number-placed] number '0.81' is typed by hand: no placeholder fills it and no quoted design " \
           "span holds it with the same words around it\n" in out
    # The design's words around them account for 60 and 50 (the closed rule still refuses the
    # sentence: it names hybrid with numbers outside quotation marks).
    assert "[number-placed] number '60'" not in out and "[number-placed] number '50'" not in out


def test_false_predicate_reports_expected_and_found(project, capsys):
    write_ledger(project, claim("sparse-wins", "Sparse beats dense on nDCG@5.",
                                measured({"sparse": SPARSE, "dense": DENSE}, predicate="sparse > dense"),
                                kind="evaluative"))
    code, out, _ = run(capsys)
    line = ledger_line(project, "sparse-wins")
    table = {row["search"]: row for row in results_of(project)["table"]}
    assert code == 1
    assert out.splitlines()[0] == (f"claims/ledger.yaml:{line}: claim sparse-wins (evaluative): [predicate-holds] predicate false: "
                                   f"expected sparse > dense, found dense={table['dense']['nDCG@5']!r}, "
                                   f"sparse={table['sparse']['nDCG@5']!r}")


def test_evaluative_claim_without_predicate_exits_1(project, capsys):
    write_ledger(project, claim("no-predicate", "Hybrid is the better row at {h:.3f}.",
                                measured({"h": "table[search=hybrid].nDCG@5"}), kind="evaluative"))
    code, out, _ = run(capsys)
    assert code == 1
    assert ("claim no-predicate (evaluative): [comparison-held] the claim needs a predicate because it compares ('better'): state the "
            "comparison (for example `hybrid > dense`) so the checker can hold it") in out


def test_claim_about_unmeasured_row_exits_1(project, capsys):
    write_ledger(project, claim("rerank-quality", "Reranking reaches nDCG@5 {rerank:.3f}.",
                                measured({"rerank": "table[search=hybrid+rerank].nDCG@5"}), kind="performance"))
    code, out, _ = run(capsys)
    line = ledger_line(project, "rerank-quality")
    assert code == 1
    assert out.splitlines()[0] == (f"claims/ledger.yaml:{line}: claim rerank-quality (performance): [path-resolves] rerank = "
                                   "table[search=hybrid+rerank].nDCG@5: row hybrid+rerank was not measured: "
                                   "no cross-encoder offline")


def test_null_value_is_not_measured(project, capsys):
    write_ledger(project, claim("p95", "Rerank p95 is {p95:.1f} ms.", measured({"p95": "p95_rerank_milliseconds"}),
                                kind="performance", section="cost"))
    code, out, _ = run(capsys)
    assert code == 1
    assert "claim p95 (performance): [path-resolves] p95 = p95_rerank_milliseconds: p95_rerank_milliseconds is null (not measured)" \
        in out


def test_claim_that_row_was_not_measured_traces(project):
    result = check_project(load_project(project)).result("rerank-not-measured")
    assert result.traceable
    assert result.rendered_text == "The rerank row was not measured: no cross-encoder offline."


def test_rendered_text_and_evidence_for_measured_claim(project):
    result = check_project(load_project(project)).result("hybrid-beats-dense")
    table = {row["search"]: row for row in results_of(project)["table"]}
    hybrid, dense = table["hybrid"]["nDCG@5"], table["dense"]["nDCG@5"]
    assert result.rendered_text == f"Hybrid's nDCG@5 is {hybrid:.3f} and dense's is {dense:.3f}."
    assert [(e.name, e.path, e.value, e.formatted, e.predicate_holds) for e in result.evidence] == [
        ("hybrid", "table[search=hybrid].nDCG@5", hybrid, f"{hybrid:.3f}", True),
        ("dense", "table[search=dense].nDCG@5", dense, f"{dense:.3f}", True)]


def test_quoted_key_with_dot_reaches_manifest(project):
    write_ledger(project, claim("manifest-hash", "The corpus hash is {sha}.",
                                measured({"sha": "manifest.inputs[\"corpus.jsonl\"].sha256"}), section="provenance"))
    assert check_project(load_project(project)).result("manifest-hash").rendered_text == (
        "The corpus hash is " + "ab12" * 16 + ".")


def test_struck_claim_counts_in_total_not_in_current_untraceable(project, capsys):
    write_ledger(project, claim("rerank-pays", "The reranker pays for itself.", kind="evaluative", section="verdict",
                                extra='status: struck\nstrike_reason: "the rerank row did not run"\n'
                                      'strike_display: omit'))
    code, out, _ = run(capsys)
    assert code == 0
    assert out == (ORDER_WITHOUT_GIT + "Trace score: untraceable claims / total claims = 0/4 (1 struck); first draft 1/4.\n"
                   "By output: aar 0/1, readout 0/3; by kind: factual 0/2, evaluative 0/2.\n"
                   "Sentences: 4 the author's words (0 untraceable).\n"
                   "All 3 active claims trace (1 of 4 struck).\n")
    report = check_project(load_project(project))
    assert report.by_output == {"aar": (0, 1), "readout": (0, 3)}
    assert report.result("rerank-pays").claim.strike_display == "omit"


def test_first_draft_history_appended_once_per_ledger_hash(project, capsys):
    history = project / "claims" / "trace-history.jsonl"
    write_ledger(project, claim("no-source", "Nothing supports this.", output="aar", section="why"))
    assert run(capsys)[0] == 1
    assert run(capsys)[0] == 1
    entries = [json.loads(line) for line in history.read_text().splitlines()]
    assert [(e["untraceable"], e["struck"], e["total"]) for e in entries] == [(1, 0, 4)]
    first = history.read_bytes()
    # cleaning: strike the claim; a new ledger hash appends a second entry and keeps the first
    text = (project / "claims" / "ledger.yaml").read_text().replace(
        'text: "Nothing supports this."', 'text: "Nothing supports this."\n    status: struck\n'
        '    strike_reason: "no evidence"')
    (project / "claims" / "ledger.yaml").write_text(text)
    code, out, _ = run(capsys)
    assert code == 0
    assert "= 0/4 (1 struck); first draft 1/4." in out
    assert history.read_bytes().startswith(first)
    assert len(history.read_text().splitlines()) == 2
    run(capsys)
    assert len(history.read_text().splitlines()) == 2


def test_no_record_writes_no_history(project, capsys):
    history = project / "claims" / "trace-history.jsonl"
    history.unlink(missing_ok=True)
    assert run(capsys, "--no-record")[0] == 0
    assert not history.exists()


def test_checker_leaves_inputs_byte_identical(project, capsys):
    run(capsys)    # records the history for this ledger hash
    files = [p for p in sorted(project.rglob("*")) if p.is_file()]
    before = {p: p.read_bytes() for p in files}
    write_ledger(project, claim("rerank-quality", "Reranking reaches nDCG@5 {rerank:.3f}.",
                                measured({"rerank": "table[search=hybrid+rerank].nDCG@5"}), kind="performance"))
    ledger_bytes = (project / "claims" / "ledger.yaml").read_bytes()
    run(capsys)
    run(capsys, "--format", "json")
    after = {p: p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}
    history = project / "claims" / "trace-history.jsonl"
    assert set(after) == set(before)
    for path in before:
        if path.name == "ledger.yaml":
            assert after[path] == ledger_bytes
        elif path != history:
            assert after[path] == before[path], path
    assert after[history].startswith(before[history])


def test_json_format(project, capsys):
    code, out, _ = run(capsys, "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert (data["ok"], data["untraceable"], data["total"], data["first_draft"]) == (
        True, 0, 3, {"untraceable": 0, "total": 3})
    assert data["by_kind"] == {"factual": {"untraceable": 0, "total": 2}, "evaluative": {"untraceable": 0, "total": 1}}
    claim = data["claims"][1]
    hybrid = results_of(project)["table"][2]["nDCG@5"]
    assert claim["id"] == "hybrid-beats-dense" and claim["rendered_text"].startswith(f"Hybrid's nDCG@5 is {hybrid:.3f}")
    assert claim["evidence"][0]["value"] == hybrid
    assert list(data["inputs_sha256"]) == ["results.json"]


def test_github_format(project, capsys):
    write_ledger(project, claim("no-source", "Nothing supports this.", output="aar", section="why"))
    code, out, _ = run(capsys, "--format", "github")
    line = ledger_line(project, "no-source")
    assert code == 1
    assert out.splitlines()[0] == (f"::error file=claims/ledger.yaml,line={line},title=source-present%3A claim no-source (factual)::"
                                   "no source: attach a design quote or a measured path, or strike it with a reason")
    assert out.splitlines()[-1] == "Check failed: 1 of 4 claims"


def test_malformed_yaml_exits_2_with_line(project, capsys):
    (project / "claims" / "ledger.yaml").write_text("version: 1\nclaims:\n  - id: a\n    text: [unclosed\n")
    code, out, err = run(capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("Error: claims/ledger.yaml:")
    assert "not valid YAML" in err
    assert err.count("\n") == 1


def test_missing_results_file_exits_2(project, capsys):
    (project / "outputs" / "results.json").unlink()
    code, _, err = run(capsys)
    assert code == 2
    assert err.startswith("Error: outputs/results.json: results file not found (cited by claim hybrid-beats-dense")


def test_invalid_results_json_exits_2_with_line(project, capsys):
    (project / "outputs" / "results.json").write_text('{\n  "documents": 1,\n  oops\n}\n')
    code, _, err = run(capsys)
    assert code == 2
    assert err.startswith("Error: outputs/results.json:3: not valid JSON")


def test_design_document_edited_after_freeze_exits_1(project, capsys):
    with open(project / "design" / "decisions.md", "a") as handle:
        handle.write("\nA late edit.\n")
    code, out, _ = run(capsys)
    assert code == 1
    assert "design/decisions.md: changed since the freeze (sha256 " in out
    assert "renew the freeze with `readout freeze` if the change is deliberate" in out
    assert out.splitlines()[-1] == "Check failed: design freeze broken (1 problem)"
    assert main(["freeze"]) == 2     # results exist: a change now is an amendment with a reason
    assert main(["freeze", "--reason", "a late edit, no rule moved"]) == 0
    assert run(capsys)[0] == 0


def test_design_document_added_or_removed_after_freeze_exits_1(project, capsys):
    (project / "design" / "extra.md").write_text("# Extra\n")
    code, out, _ = run(capsys)
    assert code == 1 and "design/extra.md: added after the freeze" in out
    (project / "design" / "extra.md").unlink()
    (project / "design" / "decisions.md").rename(project / "design" / "renamed.md")
    code, out, _ = run(capsys)
    assert code == 1
    assert "design/decisions.md: removed after the freeze" in out
    assert "design/renamed.md: added after the freeze" in out


def test_document_name_with_dotdot_exits_2(project, capsys):
    write_ledger(project, claim("escape", "Outside.", design("title", document="../readout.yaml")))
    code, out, err = run(capsys)
    line = ledger_line(project, "escape")
    assert code == 2
    assert out == ""
    assert err == (f"Error: claims/ledger.yaml:{line + 6}: document: claim escape: document '../readout.yaml' must "
                   "be a relative name inside design/ (no '..', no absolute path, no hidden name)\n")


def test_absolute_document_name_exits_2(project, capsys):
    write_ledger(project, claim("escape", "Outside.", design("root", document="/etc/passwd")))
    assert run(capsys)[0] == 2


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_design_symlink_out_of_design_exits_2(project, capsys, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    (project / "design" / "linked.md").symlink_to(outside)
    code, _, err = run(capsys)
    assert code == 2
    assert err == "Error: design/linked.md: resolves outside design/ (a link out); design documents must live " \
                  "inside design/\n"


def test_missing_design_document_is_untraceable(project, capsys):
    write_ledger(project, claim("missing-doc", "Gone.", design("flowchart", document="topology.md")))
    code, out, _ = run(capsys)
    assert code == 1
    assert "claim missing-doc (factual): [design-quote] document design/topology.md not found; design documents: decisions.md" in out


def test_check_does_not_import_heavy_libraries(project, tmp_path, monkeypatch):
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    # The first check draws the fixture's intervals again with NumPy and SciPy and remembers the
    # derivation (generator.storage.memo); the next loads neither. The model stack is never loaded.
    code, heavy, output = cli_in_fresh_interpreter(["check", "--no-record"], cwd=project)
    assert (code, heavy) == (0, ["numpy", "scipy"]), output
    code, heavy, output = cli_in_fresh_interpreter(["check", "--no-record"], cwd=project)
    assert (code, heavy) == (0, []), output


def test_by_output_and_kind_count_untraceable_active_claims(project, capsys):
    write_ledger(project, claim("no-source", "Nothing supports this.", kind="causal", output="teachback",
                                section="rows"))
    code, out, _ = run(capsys)
    assert code == 1
    assert out.splitlines()[-3] == ("By output: teachback 1/1, aar 0/1, readout 0/2; "
                                    "by kind: factual 0/2, causal 1/1, evaluative 0/1.")
    assert out.splitlines()[-2] == "Sentences: 4 the author's words (1 untraceable)."


def test_shipped_project_checks_clean_without_writing(monkeypatch, capsys):
    monkeypatch.chdir(REPOSITORY)
    tracked = [REPOSITORY / "claims" / name for name in ("ledger.yaml", "trace-history.jsonl", "design-freeze.json")]
    before = [path.read_bytes() for path in tracked]
    code, out, _ = run(capsys, "--no-record")
    assert code == 0, out
    assert out.splitlines()[-1].startswith("All ")
    assert [path.read_bytes() for path in tracked] == before


def test_shipped_first_draft_is_kept_and_matches_history():
    from generator.storage.fileio import sha256_file

    first = json.loads((REPOSITORY / "claims" / "trace-history.jsonl").read_text().splitlines()[0])
    assert sha256_file(REPOSITORY / "claims" / "ledger.first-draft.yaml") == first["ledger_sha256"]
    assert (first["untraceable"] + first["struck"], first["total"]) == \
        check_project(load_project(REPOSITORY)).first_draft


def test_results_file_outside_outputs_exits_2(project, capsys):
    write_ledger(project, claim("escape", "Outside {x}.", measured({"x": "title"}, file="../readout.yaml")))
    code, _, err = run(capsys)
    assert code == 2
    assert "file: claim escape: file '../readout.yaml' must be a relative name inside outputs/" in err


def test_section_not_declared_in_readout_yaml_exits_2(project, capsys):
    (project / "readout.yaml").write_text("title: Fixture\nkind: beir\noutputs:\n  readout:\n    sections:\n"
                                          "      - {id: results, title: Results}\n  aar:\n    sections: [{id: happened, title: Happened}]\n")
    write_ledger(project, claim("misplaced", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."',
                                design("RRF with constant 60"), section="verdict"))
    code, _, err = run(capsys)
    line = ledger_line(project, "misplaced")
    assert code == 2
    assert err == (f"Error: claims/ledger.yaml:{line + 2}: section: claim misplaced: section 'verdict' is not declared "
                   "for output readout in readout.yaml; choose one of results\n")


def test_a_check_makes_no_cyclic_garbage_so_pausing_the_collector_frees_nothing_late(project, monkeypatch):
    """check_project pauses the cyclic collector for its length (it walked a growing heap for
    nothing: no check made a cycle). Held here for a ledger whose claims trace and fail, read cold
    and from the memos; a cycle a change brings back fails this test, not a user's memory."""
    write_ledger(project, claim("path-typo", "Dense reaches nDCG@5 {dense:.3f}.",
                                measured({"dense": "table[search=dense].nDGC@5"}), kind="performance")
                 + claim("typed-number", "Dense reaches nDCG@5 {dense:.3f} on the sample, about 0.35.",
                         measured({"dense": "table[search=dense].nDCG@5"}), kind="performance"))
    for memos_off in ("1", "0", "0"):
        monkeypatch.setenv("READOUT_NO_MEMO", memos_off)
        gc.collect()
        gc.disable()
        try:
            report = check_project(load_project(project))
            assert not gc.isenabled()   # the caller's state is the one put back
            garbage = gc.collect()
        finally:
            gc.enable()
        assert report.untraceable == 2 and garbage == 0, memos_off
    seen = []
    import generator.claims.tracing.checker as checker
    real = checker.check_claim
    monkeypatch.setattr(checker, "check_claim", lambda *args: seen.append(gc.isenabled()) or real(*args))
    check_project(load_project(project))
    assert seen and not any(seen) and gc.isenabled()
