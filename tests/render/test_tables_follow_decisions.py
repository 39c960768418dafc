"""Issue 45 part 3: tables follow the decisions. The NFCorpus-like case: the verdict comes from the
every-query file while the project's table reads the 20-query sample; the page must show the
every-query tables under that verdict (first, open, captioned with the count), the sample beside
them as a labelled tab, never the sample alone."""

from __future__ import annotations

import json
from pathlib import Path

from bs4 import BeautifulSoup

from tests.conftest import add_design, edit_config, fixture_evaluation, run_cli

ALL = "results-300.json"

D7 = """
## D7. Hybrid replaces dense only when it pays for itself

```trigger
decision: D7
file: results-300.json
when: low > 0
fires: switch to hybrid
otherwise: keep dense
values:
  low: comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low
```
"""


def _nfcorpus_like(root: Path) -> dict:
    """An every-query file measured on other rankings than the sample's (hybrid_variant=2: hybrid
    further ahead), the decision reading it, the table the sample's."""
    from generator.evaluate.pipeline import write_sealed_results

    outputs = root / "outputs"
    evaluation = fixture_evaluation(hybrid_variant=2)
    evaluation.results["query_set"] = "all"
    write_sealed_results(outputs / ALL, outputs / "runs-300", evaluation, sample_path=outputs / "results.json")
    edit_config(root, lambda data: data.setdefault("evaluate", {}).update(all_results=ALL))
    add_design(root, D7)
    return json.loads((outputs / ALL).read_text(encoding="utf-8"))


def _table_values(table) -> dict[str, list[str]]:
    rows = {}
    for row in table.select("tbody tr"):
        cells = [cell.get_text(" ", strip=True) for cell in row.find_all(["th", "td"])]
        rows[cells[0]] = cells[1:]
    return rows


def test_the_verdicts_every_query_tables_stand_under_it_and_the_sample_is_a_labelled_tab(tmp_path, make_project,
                                                                                       monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    everything = _nfcorpus_like(root)
    sample = json.loads((root / "outputs" / "results.json").read_text(encoding="utf-8"))
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.out + outcome.err
    page = BeautifulSoup((root / "outputs" / "readout.html").read_text(encoding="utf-8"), "html5lib")
    # The decision says which queries it read.
    d7 = next(row for row in page.select("table.decisions:not(.values) tbody tr") if row.th.get_text() == "D7")
    assert "every test query, 20 queries" in d7.get_text(" ", strip=True)
    results = page.select_one("#section-results")
    sets = results.select_one('div.sets:has(> p.set-tabs[data-readout="query-sets"])')
    assert sets is not None, "both query sets are shown, as labelled tabs"
    tabs = [label.get_text(" ", strip=True) for label in sets.select(".set-tabs label")]
    assert tabs[0].startswith("every test query, 20 queries") and "what the decisions read" in tabs[0]
    assert tabs[1] == "release sample, 20 queries"
    choices = sets.select("input.set-choice")
    assert choices[0].has_attr("checked") and not choices[1].has_attr("checked")
    first, second = sets.select("div.set-panel")
    caption = first.select_one("table.rows caption").get_text(" ", strip=True)
    assert caption.endswith("(every test query, 20 queries)")
    hybrid_all = next(row for row in everything["table"] if row["search"] == "hybrid")
    hybrid_sample = next(row for row in sample["table"] if row["search"] == "hybrid")
    assert hybrid_all["nDCG@5"] != hybrid_sample["nDCG@5"], "the fixture's two files must differ"
    assert _table_values(first.select_one("table.rows"))["hybrid"][2] == f"{hybrid_all['nDCG@5']:.3f}"
    assert _table_values(second.select_one("table.rows"))["hybrid"][2] == f"{hybrid_sample['nDCG@5']:.3f}"
    # Every chart and table of the first panel reads the every-query file.
    for caption in first.select("caption .sample, p.chart-title .sample"):
        assert caption.get_text(strip=True) == "(every test query, 20 queries)", caption
    # The Markdown report shows both, the decisions' set first, each under its label.
    aar = (root / "outputs" / "AAR.md").read_text(encoding="utf-8")
    happened = aar.split("## What happened", 1)[1]
    assert happened.index("### every test query, 20 queries") < happened.index("### release sample, 20 queries")
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_a_page_whose_decisions_read_the_tables_file_shows_one_set_without_tabs(tmp_path, make_project, monkeypatch,
                                                                               capsys):
    root = make_project(tmp_path / "p")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    page = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert 'data-readout="query-sets"' not in page
    assert "(release sample, 20 queries)" in page
