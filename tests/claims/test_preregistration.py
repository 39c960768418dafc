"""Decisions are pre-registered: after the results exist, no rule, budget, outcome or first draft
can move without the readout saying so (generator.claims.record.freeze, anchoring, history).

Every story below is one a reviewer tried on a copy of a project after `readout evaluate` had
run; each is refused, or labelled where the reader sees the verdict.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from generator.claims.tracing.checker import check_project
from generator.claims.record.freeze import entry_sha256
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.project import load_project
from tests.conftest import (BUDGET_REQUIREMENTS, DECISIONS, FIRST_DRAFT, FIXTURE_QUERIES, FUSION, ROOT_CONFIG, claim,
                            d5_record, git_commit, ledger_text, refreeze, run_git, write_project_files)

FAST = {q: 40.0 for q in FIXTURE_QUERIES}
FUSION_CLAIM = claim("rrf-constant", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."', FUSION)
VERDICT = claim("computed-verdict", "Ship the reranker.", "- decision: {trigger: D5, state: fires}",
                kind="recommendation", section="verdict")
FROZEN_AT = datetime(2026, 11, 30, 6, 0, tzinfo=timezone.utc)


def _config() -> str:
    return yaml.safe_dump({"title": ROOT_CONFIG["title"], "kind": "beir", "outputs": ROOT_CONFIG["outputs"]},
                          sort_keys=False)


def _freeze_before_results(root: Path) -> None:
    from generator.claims.record.freeze import freeze_project

    freeze_project(load_project(root), now=FROZEN_AT)


def preregistered(root: Path, results: dict | None = None, extra_claims: str = VERDICT) -> Path:
    """A project made in order: the design with D5 and its budget frozen, then the results (the
    rerank row measured and fast, so D5 fires), then the ledger."""
    ledger = ledger_text(FUSION_CLAIM + extra_claims, claims="")
    write_project_files(root, config_text=_config(), decisions=DECISIONS + d5_record(),
                        design={"requirements.md": BUDGET_REQUIREMENTS},
                        ledger=ledger, results=results or {"rerank_milliseconds": FAST}, freeze=_freeze_before_results)
    draft = ledger.encode("utf-8")
    (root / "claims" / "ledger.first-draft.yaml").write_bytes(draft)
    entry = {**FIRST_DRAFT, "untraceable": 0, "struck": 0, "total": draft.count(b"- id: "),
             "ledger_sha256": hashlib.sha256(draft).hexdigest()}
    (root / "claims" / "trace-history.jsonl").write_text(json.dumps(entry, sort_keys=True) + "\n", encoding="utf-8")
    return root


def _check(root: Path, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", "--no-record", str(root)])
    out, err = capsys.readouterr()
    return code, out, err


def _edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / "design" / name
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


# --- 1. the freeze knows the results -----------------------------------------------------------


def test_a_project_made_in_order_is_not_post_hoc(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    code, out, _ = _check(root, capsys)
    assert code == 0, out
    assert "post hoc" not in out
    assert "Order: design first frozen before any results (by the freeze's own record); not anchored" in out
    (row,) = [row for row in check_project(load_project(root)).decisions if row.trigger.decision == "D5"]
    assert (row.state, row.post_hoc, [change.parts for change in row.changes]) == ("fires", [], [["added"]])


TRIGGER_STORIES = [
    # (what is edited, the edit, what the freeze records as moved)
    pytest.param("decisions.md", "when: lift_low > 0 and lift_p < 0.05 and p95 <= budget",
                 "when: lift_low > 0 or lift_p < 0.05 or p95 <= budget", ["trigger"],
                 id="trigger-fires-on-an-unknown-lift"),
    pytest.param("decisions.md", "lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.p_value",
                 "lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.recall@5.p_value", ["trigger"],
                 id="trigger-reads-another-metric"),
    pytest.param("decisions.md", "otherwise: do not ship the reranker", "otherwise: ship the reranker later",
                 ["outcome"], id="outcome-words-only"),
]


@pytest.mark.parametrize("name, old, new, moved", TRIGGER_STORIES)
def test_a_rule_moved_after_the_results_needs_a_reason_and_an_acknowledgement(tmp_path, capsys, name, old, new,
                                                                              moved):
    root = preregistered(tmp_path / "p")
    _edit(root, name, old, new)
    capsys.readouterr()
    assert main(["freeze", str(root)]) == 2
    assert "a design change now is an amendment" in capsys.readouterr().err
    assert main(["freeze", str(root), "--reason", "we changed our mind"]) == 2
    err = capsys.readouterr().err
    assert "sets or moves the rule of D5 after the results existed" in err and "--post-hoc D5" in err
    assert main(["freeze", str(root), "--reason", "we changed our mind", "--post-hoc", "D5"]) == 0
    assert "Decision D5: " + ", ".join(moved) + " after the results existed" in capsys.readouterr().out
    code, out, _ = _check(root, capsys)
    kinds = {"trigger": "its trigger changed", "outcome": "its outcome words changed"}
    assert f"Decision D5 is post hoc: {kinds[moved[0]]} after the results existed (freeze 2" in out, out
    assert "acknowledged, reason: we changed our mind" in out
    assert "Design amended after results: freeze 2" in out


def test_a_post_hoc_verdict_is_rendered_only_labelled_so_with_old_new_and_reason(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "when: lift_low > 0 and lift_p < 0.05 and p95 <= budget",
          "when: p95 <= budget")
    _edit(root, "decisions.md", "  lift_low: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.ci95_low\n"
                                "  lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.p_value\n", "")
    assert main(["freeze", str(root), "--reason", "the lift is not needed", "--post-hoc", "D5"]) == 0
    assert main(["render", str(root)]) == 0
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    verdict = html[html.index('id="claim-computed-verdict"'):]
    verdict = verdict[:verdict.index("</span>", verdict.index('class="ref"'))]
    assert '<mark class="post-hoc" data-readout="post-hoc">post hoc verdict</mark>' in verdict
    line = html[html.index('<ul class="post-hoc-lines"'):html.index("</ul>", html.index('<ul class="post-hoc-lines"'))]
    assert "trigger changed after the results were seen" in line and "the lift is not needed" in line
    record = html[html.index('id="amendment-D5"'):html.index("</article>", html.index('id="amendment-D5"'))]
    assert "lift_low &gt; 0 and lift_p &lt; 0.05 and p95 &lt;= budget" in record      # the old rule
    assert "p95 &lt;= budget" in record.replace("lift_low &gt; 0 and lift_p &lt; 0.05 and p95 &lt;= budget", "")
    assert "the lift is not needed" in record
    aar = (root / "outputs" / "AAR.md").read_text(encoding="utf-8")
    assert "Design amendments after results: 1" in aar


def test_a_budget_moved_after_the_results_is_post_hoc_once_the_prose_agrees(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    _edit(root, "requirements.md", "rerank_p95_milliseconds: 500\n", "rerank_p95_milliseconds: 500000\n")
    capsys.readouterr()
    assert main(["freeze", str(root), "--reason", "x", "--post-hoc", "D5"]) == 2
    assert "one budget, one number" in capsys.readouterr().err
    _edit(root, "requirements.md", "at most 500 milliseconds", "at most 500000 milliseconds")
    assert main(["freeze", str(root), "--reason", "a slower service", "--post-hoc", "D5"]) == 0
    row = next(row for row in check_project(load_project(root)).decisions if row.trigger.decision == "D5")
    assert [change.parts for change in row.post_hoc] == [["budget"]]
    assert (row.post_hoc[0].old_budgets, row.post_hoc[0].new_budgets) == ({"rerank_p95_milliseconds": 500.0},
                                                                          {"rerank_p95_milliseconds": 500000.0})


FRONTIER_RULE = """
## D6. Price the cheapest reranker that fits

```trigger
decision: D6
when: fitting > 0 and headroom > 0
fires: try the cheapest fitting reranker
otherwise: try no reranker yet
values:
  fitting: frontier.fitting.rerank_p95_milliseconds
  headroom: frontier.cheapest_within.rerank_p95_milliseconds.headroom
```
"""


def test_a_budget_a_frontier_rule_names_inside_its_path_is_part_of_that_rule(tmp_path, capsys):
    # D6 reads the budget through frontier.fitting.BUDGET, never through budget.NAME: moving the
    # budget after the results must still make its verdict post hoc, not slip past the freeze.
    root = tmp_path / "p"
    ledger = ledger_text(FUSION_CLAIM, claims="")
    write_project_files(root, config_text=_config(), decisions=DECISIONS + FRONTIER_RULE,
                        design={"requirements.md": BUDGET_REQUIREMENTS}, ledger=ledger,
                        results={"frontier_p95": {("small", 10): 700, ("big", 50): 9000}},
                        freeze=_freeze_before_results)
    before = next(row for row in check_project(load_project(root), record_history=False).decisions
                  if row.trigger.decision == "D6")
    assert before.state == "does not fire" and not before.post_hoc
    _edit(root, "requirements.md", "rerank_p95_milliseconds: 500\n", "rerank_p95_milliseconds: 1000\n")
    _edit(root, "requirements.md", "at most 500 milliseconds", "at most 1000 milliseconds")
    capsys.readouterr()
    assert main(["freeze", str(root), "--reason", "a slower service"]) == 2
    assert "D6" in capsys.readouterr().err
    assert main(["freeze", str(root), "--reason", "a slower service", "--post-hoc", "D6"]) == 0
    after = next(row for row in check_project(load_project(root), record_history=False).decisions
                 if row.trigger.decision == "D6")
    assert after.state == "fires" and [change.parts for change in after.post_hoc] == [["budget"]]
    assert (after.post_hoc[0].old_budgets, after.post_hoc[0].new_budgets) == ({"rerank_p95_milliseconds": 500.0},
                                                                            {"rerank_p95_milliseconds": 1000.0})


def test_an_amendment_that_moves_no_rule_needs_only_its_reason(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "Ship it only when", "Ship it, we wrote, only when")
    assert main(["freeze", str(root), "--reason", "wording"]) == 0
    code, out, _ = _check(root, capsys)
    assert code == 0 and "post hoc" not in out
    assert "Design amended after results: freeze 2" in out and "reason: wording" in out


def test_post_hoc_names_only_decisions_the_freeze_moves(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "Ship it only when", "Ship it, we wrote, only when")
    assert main(["freeze", str(root), "--reason", "wording", "--post-hoc", "D5"]) == 2
    assert "--post-hoc D5: this freeze does not move that decision's rule" in capsys.readouterr().err


FORGED_LOGS = [
    pytest.param(lambda log: log["freezes"][1].update(post_hoc=[]), "became post hoc (its rule moved after results "
                 "existed) without being acknowledged", id="acknowledgement-removed"),
    pytest.param(lambda log: log["freezes"][1].update(amended={}), "amended says nothing but the rules moved D5",
                 id="amendment-hidden"),
    pytest.param(lambda log: log["freezes"][0].update(reason="a kinder reason"), "the chain breaks here",
                 id="earlier-reason-rewritten"),
    pytest.param(lambda log: log["freezes"][0].update(frozen_at="2026-11-29T00:00:00Z"), "the chain breaks here",
                 id="earlier-entry-edited"),
    pytest.param(lambda log: log.update(freezes=log["freezes"][1:]), "the chain breaks here", id="first-entry-dropped"),
    pytest.param(lambda log: log["texts"].update({"decisions.md": "# Nothing was amended\n"}),
                 "the kept texts are not the documents of freeze 2", id="kept-text-rewritten"),
]


@pytest.mark.parametrize("forge, reason", FORGED_LOGS)
def test_a_hand_edited_freeze_log_is_refused(tmp_path, capsys, forge, reason):
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "otherwise: do not ship the reranker", "otherwise: hold the reranker")
    assert main(["freeze", str(root), "--reason", "r", "--post-hoc", "D5"]) == 0
    path = root / "claims" / "design-freeze.json"
    log = json.loads(path.read_text(encoding="utf-8"))
    forge(log)
    path.write_text(json.dumps(log), encoding="utf-8")
    code, out, _ = _check(root, capsys)
    assert code == 1, out
    assert reason in out, out


def test_dropping_the_amendment_and_rewriting_the_first_entry_is_caught_by_its_rules(tmp_path, capsys):
    """The whole log rewritten as if the design had always said the new rule: only the kept rules
    betray it once the forger forgets them; a consistent rewrite is caught by git (below)."""
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "otherwise: do not ship the reranker", "otherwise: hold the reranker")
    path = root / "claims" / "design-freeze.json"
    log = json.loads(path.read_text(encoding="utf-8"))
    current = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "design").iterdir()}
    log["freezes"][0]["documents"] = log["documents"] = current
    log["texts"] = {p.name: p.read_text(encoding="utf-8") for p in (root / "design").iterdir()}
    path.write_text(json.dumps(log), encoding="utf-8")
    code, out, _ = _check(root, capsys)
    assert code == 1 and "records rules the design documents do not hold" in out, out


def test_a_deleted_freeze_log_renewed_after_the_results_makes_every_decision_post_hoc(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    (root / "claims" / "design-freeze.json").unlink()
    capsys.readouterr()
    assert main(["freeze", str(root), "--reason", "lost the file"]) == 2
    assert "--post-hoc D5" in capsys.readouterr().err
    assert main(["freeze", str(root), "--reason", "lost the file", "--post-hoc", "D5"]) == 0
    code, out, _ = _check(root, capsys)
    assert "Decision D5 is post hoc: its rule was written after the results existed (freeze 1" in out
    assert "design first frozen after results existed" in out


def test_results_hidden_during_a_later_freeze_are_still_seen(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "Ship it only when", "Ship it, we wrote, only when")
    assert main(["freeze", str(root), "--reason", "wording"]) == 0        # freeze 2 sees the results
    (root / "outputs" / "results.json").rename(tmp_path / "hidden.json")
    _edit(root, "decisions.md", "otherwise: do not ship the reranker", "otherwise: hold the reranker")
    assert main(["freeze", str(root)]) == 0                                 # freeze 3 says none yet
    (tmp_path / "hidden.json").rename(root / "outputs" / "results.json")
    code, out, _ = _check(root, capsys)
    assert code == 1 and "freeze 3 says no results existed, but freeze 2 had seen results" in out, out


def test_a_version_1_freeze_must_be_renewed(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    path = root / "claims" / "design-freeze.json"
    path.write_text(json.dumps({"version": 1, "documents": json.loads(path.read_text())["documents"]}))
    code, out, _ = _check(root, capsys)
    assert code == 1 and "a version 1 freeze does not record what results existed" in out


def test_an_entry_saying_none_yet_after_results_had_started_is_refused(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    path = root / "claims" / "design-freeze.json"
    log = json.loads(path.read_text(encoding="utf-8"))
    log["freezes"][0]["frozen_at"] = "2026-11-30T09:00:00Z"      # after the fixture results started (08:00)
    path.write_text(json.dumps(log), encoding="utf-8")
    code, out, _ = _check(root, capsys)
    assert code == 1 and "freeze 1 says no results existed, but outputs/results.json was started at" in out, out


# --- 2. anchored in git --------------------------------------------------------------------------


def _repository(tmp_path: Path) -> Path:
    """A project made in order, in a new git repository with nothing committed yet."""
    root = tmp_path / "p"
    root.mkdir()
    run_git(root, "init", "-q")
    return preregistered(root)


def _in_order_with_git(tmp_path: Path) -> tuple[Path, str, str]:
    """Design frozen and committed, then the results committed: the order git can prove."""
    root = _repository(tmp_path)
    design = git_commit(root, "design", "design", "claims/design-freeze.json", "readout.yaml",
                     "claims/ledger.first-draft.yaml", "claims/trace-history.jsonl")
    results = git_commit(root, "results", "outputs", "claims/ledger.yaml")
    return root, design, results


def test_a_design_committed_before_its_results_is_anchored_to_its_commit(tmp_path, capsys):
    root, design, results = _in_order_with_git(tmp_path)
    code, out, _ = _check(root, capsys)
    assert code == 0, out
    assert (f"Order: design first frozen before any results, anchored to commit {design[:7]}; first draft anchored "
            f"to commit {design[:7]}.") in out
    assert main(["render", str(root)]) == 0
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    # The gate verifies the order each time it runs; a report cannot name the commit it lands in.
    assert design[:7] not in html and "anchored" not in html
    assert "Order in git</th><td>verified by readout check at every gate run" in html
    assert "Rule fixed" not in html or "before any results, in freeze" in html


def test_a_design_committed_with_its_results_is_not_shown_to_precede_them(tmp_path, capsys):
    root = _repository(tmp_path)
    both = git_commit(root, "everything at once", ".")
    code, out, _ = _check(root, capsys)
    assert code == 0, out
    assert f"not anchored (committed with the results in {both[:7]})" in out


def test_a_freeze_saying_none_yet_after_results_were_committed_is_refused(tmp_path, capsys):
    """Results committed, then deleted; the design edited and frozen as if nothing had been seen."""
    root, design, results = _in_order_with_git(tmp_path)
    (root / "outputs" / "results.json").rename(tmp_path / "hidden.json")
    _edit(root, "decisions.md", "otherwise: do not ship the reranker", "otherwise: hold the reranker")
    assert main(["freeze", str(root)]) == 0                       # no results now: the freeze says none yet
    (tmp_path / "hidden.json").rename(root / "outputs" / "results.json")
    git_commit(root, "refreeze", "design", "claims/design-freeze.json")
    code, out, _ = _check(root, capsys)
    assert code == 1, out
    assert f"freeze 2 says no results existed, but outputs/results.json was committed in {results[:7]}" in out


def test_a_rewritten_first_draft_is_refused_once_committed(tmp_path, capsys):
    root, design, results = _in_order_with_git(tmp_path)
    draft = ledger_text(claim("guess", "A guess.")).encode("utf-8")
    (root / "claims" / "ledger.first-draft.yaml").write_bytes(draft)
    history = root / "claims" / "trace-history.jsonl"
    entry = {**FIRST_DRAFT, "untraceable": 0, "struck": 0, "total": 1,
             "ledger_sha256": hashlib.sha256(draft).hexdigest()}
    history.write_text(json.dumps(entry, sort_keys=True) + "\n", encoding="utf-8")
    code, out, _ = _check(root, capsys)
    assert code == 1, out
    assert "differs from the version committed in" in out


def test_a_committed_freeze_entry_rewritten_in_place_is_refused(tmp_path, capsys):
    """The newest entry has no successor to chain it; once committed, git holds it."""
    root, design, results = _in_order_with_git(tmp_path)
    _edit(root, "decisions.md", "otherwise: do not ship the reranker", "otherwise: hold the reranker")
    assert main(["freeze", str(root), "--reason", "the honest reason", "--post-hoc", "D5"]) == 0
    amended = git_commit(root, "amend", "design", "claims/design-freeze.json")
    path = root / "claims" / "design-freeze.json"
    log = json.loads(path.read_text(encoding="utf-8"))
    log["freezes"][1]["reason"] = "a kinder reason"
    path.write_text(json.dumps(log), encoding="utf-8")
    code, out, _ = _check(root, capsys)
    assert code == 1, out
    assert f"not an append-only continuation of the version committed in {amended[:12]}" in out


def test_a_first_draft_committed_after_the_results_is_not_anchored(tmp_path, capsys):
    root = _repository(tmp_path)
    git_commit(root, "design", "design", "claims/design-freeze.json", "readout.yaml")
    results = git_commit(root, "results", "outputs", "claims/ledger.yaml")
    draft = git_commit(root, "draft", "claims/ledger.first-draft.yaml", "claims/trace-history.jsonl")
    code, out, _ = _check(root, capsys)
    assert f"first draft not anchored (first committed in {draft[:7]}, after the first results commit " \
           f"{results[:7]})" in out, out


def test_without_git_nothing_is_claimed(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    code, out, _ = _check(root, capsys)
    assert "not anchored (no git history)" in out
    assert "anchored to commit" not in out
    assert main(["render", str(root)]) == 0
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert "anchored" not in html and "verified by readout check at every gate run" in html


def test_the_committed_review_tells_the_truth_about_its_order(repository):
    """The SciFact review's design was written after its first results and D5's budget and trigger
    were added with the verdict: its readout says so."""
    report = check_project(load_project(repository))
    entries = report.freeze_entries
    assert [entry.results_existed for entry in entries] == [True, True, True, True, True]
    assert entries[1].amended == {"D2": ["added"], "D5": ["added"]} and entries[1].post_hoc == ["D2", "D5"]
    # D6, the frontier's rule, was added once earlier results existed: acknowledged as post hoc.
    assert entries[2].amended == {"D6": ["added"]} and entries[2].post_hoc == ["D6"]
    # D5's effect (issue 38) moved its trigger after the results; the regression margin moved no rule.
    assert entries[3].amended == {"D5": ["trigger"]} and entries[3].post_hoc == ["D5"]
    assert entries[4].amended == {} and entries[4].reason
    d5 = next(row for row in report.decisions if row.trigger.decision == "D5")
    assert d5.post_hoc and d5.acknowledged
    html = (repository / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert '<mark class="post-hoc" data-readout="post-hoc">post hoc verdict</mark>' in html
    assert "rule written after the results were seen" in html
    assert "Design first frozen</th><td>after results existed" in html
    assert entry_sha256(entries[0].data) == entries[1].data["previous_sha256"]
    assert entry_sha256(entries[1].data) == entries[2].data["previous_sha256"]
    assert entry_sha256(entries[3].data) == entries[4].data["previous_sha256"]


def test_freeze_refuses_a_reason_that_is_not_one_line(tmp_path, capsys):
    root = preregistered(tmp_path / "p")
    _edit(root, "decisions.md", "Ship it only when", "Ship it, we wrote, only when")
    with pytest.raises(InputError, match="one line"):
        refreeze(root, reason="two\nlines")
