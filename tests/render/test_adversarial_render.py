"""Adversarial tests of the reports: text that reaches a reader without coming from the ledger
(labels, readout.yaml, templates, results strings) and remote content in a rendered report.

Every case builds the shared fixture project (tests/conftest.py `make_project`: a sealed
results.json with run files and judgements, one design document, a ledger that checks clean, a
frozen design, a chained first-draft history), plants one attack, drives the real CLI and asserts
the exit code (0 pass, 1 findings, 2 input or usage error), a distinctive part of the reason, and
that no traceback is printed.

Families: 7 text outside the ledger, 10 remote content in the reports (the numbering is that of
tests/claims/test_adversarial_claims.py, which holds the rest).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import (FUSION, claim, edit_config, fixture_evaluation, one_line_error, run_cli, set_label)


# --- 7. text outside the ledger -----------------------------------------------------------------


LABELS = [
    pytest.param("contents", "Hybrid beats dense by 12 points", "a label holds no numbers ('12')",
                 id="label-sentence-with-digits"),
    pytest.param("row", "Reranking wins twice", "a label holds no numbers ('twice')", id="label-multiplier-word"),
    pytest.param("struck", "Eighty-one", "a label holds no numbers ('Eighty-one')", id="label-number-word"),
    pytest.param("missing", "The reranker is better. Ship it", "a label holds no sentence punctuation",
                 id="label-two-sentences"),
    pytest.param("sources", "So\ue000urces", "may not hold the invisible, private-use or control character U+E000",
                 id="label-private-use-mark"),
    # HOLE: a comparative sentence without digits or punctuation is accepted as a label and shown.
    pytest.param("no_rerank", "Hybrid is better than dense", "no_rerank", id="label-comparative-sentence"),
]


@pytest.mark.parametrize("key, value, reason", LABELS)
def test_sentences_in_the_label_registry_are_refused(tmp_path, make_project, monkeypatch, capsys, key, value, reason):
    root = make_project(tmp_path / "p", own_templates=True)
    set_label(root, key, value)
    for args in (("render",), ("render", "--check")):
        outcome = run_cli(root, monkeypatch, capsys, *args)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert "templates/labels.yaml" in line and key in line and reason in line, line


def _title(data: dict, text: str) -> None:
    data["title"] = text


def _section_title(data: dict, text: str) -> None:
    data["outputs"]["readout"]["sections"][0]["title"] = text


def _column_label(data: dict, text: str) -> None:
    data["outputs"]["readout"]["table"]["columns"][0]["label"] = text


CONFIG_WORDING = [
    pytest.param(_title, "Hybrid beats dense by 12 points", "title: a label holds no numbers ('12')",
                 id="title-with-number"),
    pytest.param(_section_title, "Verdict hybrid wins eighty-one queries",
                 "outputs.readout.sections[0].title: a label holds no numbers ('eighty-one')",
                 id="section-title-with-number"),
    pytest.param(_column_label, "Recall@5 up by half",
                 "outputs.readout.table.columns[0].label: a label holds no numbers ('half')",
                 id="column-label-with-number"),
    pytest.param(_column_label, "Recall@5 (up 0.2)", "outputs.readout.table.columns[0].label:",
                 id="column-label-with-decimal"),
    # HOLE: a claim as the report's title ("Hybrid beats dense") passes: no digits, no punctuation.
    pytest.param(_title, "Hybrid beats dense", "title", id="title-comparative-sentence"),
]


@pytest.mark.parametrize("change, text, reason", CONFIG_WORDING)
def test_sentences_in_readout_yaml_are_refused(tmp_path, make_project, monkeypatch, capsys, change, text, reason):
    root = make_project(tmp_path / "p")
    edit_config(root, lambda data: change(data, text))
    for args in (("check",), ("render",)):
        outcome = run_cli(root, monkeypatch, capsys, *args)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert "readout.yaml" in line and reason in line, line


PRIVATE_USE_IN_TEMPLATES = [
    pytest.param("report.md.j2", "\ue000", "U+E000", id="md-template-open-mark"),
    pytest.param("readout.html.j2", "\ue001", "U+E001", id="html-template-close-mark"),
    pytest.param("report.md.j2", "\ue010", "U+E010", id="md-template-placed-mark"),
    pytest.param("readout.css", "\ue000", "U+E000", id="stylesheet-open-mark"),
]


@pytest.mark.parametrize("template, mark, code_point", PRIVATE_USE_IN_TEMPLATES)
def test_private_use_marks_in_templates_are_refused(tmp_path, make_project, monkeypatch, capsys, template, mark,
                                                    code_point):
    root = make_project(tmp_path / "p", own_templates=True)
    path = root / "templates" / template
    path.write_text(path.read_text(encoding="utf-8") + f"{mark}Hybrid wins by 12 points{mark}\n", encoding="utf-8")
    for args in (("render",), ("render", "--check")):
        outcome = run_cli(root, monkeypatch, capsys, *args)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert f"templates/{template}:" in line and f"private-use character {code_point}" in line, line


def test_literal_sentence_in_a_template_is_an_orphan(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p", own_templates=True)
    path = root / "templates" / "report.md.j2"
    path.write_text(path.read_text(encoding="utf-8") + "Hybrid wins by 12 points\n", encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 1, outcome.out + outcome.err
    assert "Traceback" not in outcome.err
    assert "outputs/TEACHBACK.md:" in outcome.err and "orphan text 'Hybrid wins by 12 points'" in outcome.err
    assert not (root / "outputs" / "TEACHBACK.md").exists()


def _sealed_results_with_reason(root: Path, reason: str) -> None:
    """Re-write results.json with the real writer (sealed, re-derivable) and a not-measured reason
    of our choosing, as `skip_rerank_reason` in readout.yaml would give it."""
    from generator.evaluate.pipeline import write_sealed_results

    evaluation = fixture_evaluation()
    for row in evaluation.results["table"]:
        if row["search"] == "hybrid+rerank":
            row["not_measured_reason"] = reason
    write_sealed_results(root / "outputs" / "results.json", root / "outputs" / "runs", evaluation)


RESULT_STRINGS = [
    pytest.param("reranking lost 12 points", "holds the number '12'", id="number-in-reason"),
    pytest.param("reranking lost twelve points", "holds the number 'twelve'", id="number-word-in-reason"),
    pytest.param("it was slower. Hybrid is better than dense", "holds sentence punctuation",
                 id="sentence-in-reason"),
]


@pytest.mark.parametrize("reason_text, reason", RESULT_STRINGS)
def test_results_string_carrying_a_sentence_into_a_table_is_refused(tmp_path, make_project, monkeypatch, capsys,
                                                                    reason_text, reason):
    root = make_project(tmp_path / "p")
    _sealed_results_with_reason(root, reason_text)
    ledger = root / "claims" / "ledger.yaml"
    text = ledger.read_text()
    start = text.index("  - id: rerank-not-measured")  # the table is the only place left that shows it
    ledger.write_text(text[:start] + text[text.index("  - id: struck-speed"):])
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert "not_measured_reason" in line and reason in line, line


def test_results_string_carrying_a_number_into_a_claim_is_refused(tmp_path, make_project, monkeypatch, capsys):
    # HOLE: the fixture's claim "The rerank row was not measured: {why}." places the reason; a number
    # inside a *text* value counts as "filled from results" and the claim traced (check exit 0), although
    # render refuses the same string in the table.
    root = make_project(tmp_path / "p")
    _sealed_results_with_reason(root, "reranking lost 12 points")
    outcome = run_cli(root, monkeypatch, capsys, "check")
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("rerank-not-measured", "12"), outcome.out


# --- 10. remote content in the reports -----------------------------------------------------


BARE_ADDRESSES = ["https://evil.example/p", "www.evil.example", "rerank@evil.example"]


@pytest.mark.parametrize("address", BARE_ADDRESSES, ids=["https", "www", "email"])
def test_bare_addresses_render_as_code_not_links(tmp_path, make_project, monkeypatch, capsys, address):
    extra = (claim("in-teachback", f"The fusion rule is in the design, see {address} today.", FUSION,
                   output="teachback", section="rows")
             + claim("in-aar", f"The fusion rule is in the design, see {address} today.", FUSION, output="aar", section="why")
             + claim("in-readout", f"The fusion rule is in the design, see {address} today.", FUSION))
    root = make_project(tmp_path / "p", extra_claims=extra)
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.out + outcome.err
    for name in ("TEACHBACK.md", "AAR.md"):
        text = (root / "outputs" / name).read_text(encoding="utf-8")
        assert f"see `{address}` today." in text, name
        # GitHub autolinks a bare address: it must never appear outside a code span.
        assert address not in re.sub(r"`[^`]*`", "", text), name
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert "evil.example" in html and not re.search(r"""(?:href|src)\s*=\s*["']?[^"'>]*evil\.example""", html)
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


