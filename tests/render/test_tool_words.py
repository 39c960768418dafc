"""Issue 47 part 8: the tool's state and verdict words are not labels a team can change, and a
bidi control (a right-to-left override among them) in a query text never reaches a page raw."""

from __future__ import annotations

import pytest

from tests.conftest import fixture_evaluation, one_line_error, run_cli, set_label

RLO = "\u202e"


@pytest.mark.parametrize("key, text", [("state_does_not_fire", "fires"), ("state_cannot_be_decided", "decided"),
                                       ("state_fires", "does not fire"), ("post_hoc_verdict", "verdict"),
                                       ("not_measured", "measured")])
def test_a_team_label_registry_cannot_relabel_the_tools_words(tmp_path, make_project, monkeypatch, capsys, key,
                                                             text):
    root = make_project(tmp_path / "p", own_templates=True)
    set_label(root, key, text)
    line_number = next(number for number, line in enumerate(
        (root / "templates" / "labels.yaml").read_text(encoding="utf-8").splitlines(), start=1)
        if line.startswith(key + ":"))
    for args in (("render",), ("render", "--check")):
        outcome = run_cli(root, monkeypatch, capsys, *args)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert f"templates/labels.yaml:{line_number}: {key}: the tool's own word" in line, line
    assert not (root / "outputs" / "readout.html").exists()


def test_a_team_registry_may_repeat_the_tools_words_and_add_its_own(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p", own_templates=True)
    path = root / "templates" / "labels.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "team_contact: Search team\n", encoding="utf-8")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    (root / "templates" / "labels.yaml").write_text("state_fires: fires\nteam_contact: Search team\n",
                                                    encoding="utf-8")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0


def _results_with_query_text(root, text: str) -> None:
    from generator.evaluate.pipeline import write_sealed_results

    evaluation = fixture_evaluation()
    evaluation.results["query_texts"] = {query: f"query {query}" for query in evaluation.results["manifest"]["query_ids"]}
    evaluation.results["query_texts"]["q01"] = text
    write_sealed_results(root / "outputs" / "results.json", root / "outputs" / "runs", evaluation)


@pytest.mark.parametrize("control", [RLO, "\u2066", "\u200f", "\u061c"], ids=["RLO", "LRI", "RLM", "ALM"])
def test_a_bidi_control_in_a_query_text_is_shown_as_its_code_point(tmp_path, make_project, monkeypatch, capsys,
                                                                  control):
    root = make_project(tmp_path / "p")
    _results_with_query_text(root, f"insulin {control}receptor dose")
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.out + outcome.err
    page = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert control not in page
    assert f"insulin [U+{ord(control):04X}]receptor dose" in page
    for name in ("TEACHBACK.md", "AAR.md"):
        assert control not in (root / "outputs" / name).read_text(encoding="utf-8")
