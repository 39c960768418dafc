"""Issue 44's origins on the page (issue 45's shell): a sentence the tool wrote from the results
("frame"), a design document's words placed with their attribution ("quote") and the author's free
prose ("author") read differently in every output, the author's words marked as such; the trace
line counts each origin apart. The checker records `origin` on each checked claim and `by_origin`
on the report; a claim without one is the author's."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from tests.conftest import run_cli


def _rendered_with_origins(root: Path, origins: dict[str, str], by_origin: dict | None = None) -> dict[str, str]:
    from generator.claims.tracing.checker import check_project
    from generator.project import load_project
    from generator.render.renderer import render_outputs

    project = load_project(root)
    report = check_project(project, git_history=False)
    for result in report.results:
        if result.claim.id in origins:
            result.origin = origins[result.claim.id]
    # None: the report counts no origin itself, and the page counts them from the claims.
    report.by_origin = by_origin if by_origin is not None else {}
    return {output.path.name: output.text for output in render_outputs(project, report)}


ORIGINS = {"verdict-hybrid": "frame", "rrf-constant": "quote", "happened-hybrid": "frame"}


def test_the_authors_words_are_marked_and_stand_apart_from_the_tools_sentences(tmp_path, make_project):
    root = make_project(tmp_path / "p")
    pages = _rendered_with_origins(root, ORIGINS)
    soup = BeautifulSoup(pages["readout.html"], "html5lib")
    verdict = soup.select_one("#section-verdict p.prose")
    assert verdict["class"] == ["prose", "origin-frame"] and verdict.select_one(".origin-mark") is None
    results = soup.select("#section-results p.prose")
    assert [paragraph["class"][1] for paragraph in results] == ["origin-quote"]
    cost = soup.select_one("#section-cost p.prose")
    assert cost["class"] == ["prose", "origin-author"]
    mark = cost.select_one('.origin-mark[data-readout="origin"]')
    assert mark is not None and mark.get_text(strip=True) == "Author's words"
    aar = pages["AAR.md"]
    assert "\nHybrid's nDCG@5 is " in aar and "> **Author's words** Hybrid's nDCG@5" not in aar
    teachback = pages["TEACHBACK.md"]
    assert "> **Author's words** The design: \"The cross-encoder reorders" in teachback


def test_the_trace_line_counts_each_origin_apart(tmp_path, make_project):
    root = make_project(tmp_path / "p")
    counted = _rendered_with_origins(root, ORIGINS)
    trace = BeautifulSoup(counted["readout.html"], "html5lib").select_one('[data-readout="trace"]')
    parts = [" ".join(part.get_text().split()) for part in trace.select(".origin-score")]
    # Counted here when the report gives no `by_origin`: seven claims, three of them not the author's.
    assert parts == ["tool-written sentences 0/2", "design quotes 0/1", "author's words 0/4"]
    given = _rendered_with_origins(root, ORIGINS, by_origin={"author": (1, 4), "frame": (0, 2), "quote": (0, 1)})
    trace = BeautifulSoup(given["readout.html"], "html5lib").select_one('[data-readout="trace"]')
    assert [" ".join(part.get_text().split()) for part in trace.select(".origin-score")] == [
        "tool-written sentences 0/2", "design quotes 0/1", "author's words 1/4"]
    assert "· tool-written sentences 0/2 · design quotes 0/1 · author's words 1/4" in given["AAR.md"]


def test_a_claim_without_an_origin_is_the_authors(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    page = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(page, "html5lib")
    assert {tuple(p["class"]) for p in soup.select("p.prose")} == {("prose", "origin-author")}
    assert [" ".join(part.get_text().split()) for part in soup.select('[data-readout="trace"] .origin-score')] == [
        "author's words 0/7"]
