"""The frontier and each reranker's cost in the reports: a table in every output, a chart in the
HTML one, the budget drawn, measured rows apart from rows priced by shape, and nothing shown
that the orphan scan cannot account for."""

import copy
import re

from generator.project import load_project
from generator.render.renderer import render_project

from tests.conftest import BUDGET_REQUIREMENTS, ROOT_CONFIG, d5_record, refreeze

FRONTIER = {("cross-encoder/ms-marco-MiniLM-L-6-v2", 5): 60, ("cross-encoder/ms-marco-MiniLM-L-6-v2", 10): 120,
            ("BAAI/bge-reranker-v2-m3", 50): 90000}


def _outputs():
    outputs = copy.deepcopy(ROOT_CONFIG["outputs"])
    for name in ("readout", "teachback"):
        sections = outputs[name]["sections"]
        sections[0] = {**sections[0], "show": list(sections[0].get("show", [])) + ["frontier", "rerank_cost"]}
    return outputs


def _rendered(make_project, tmp_path, draft=False, **results):
    project = make_project(tmp_path / "p", results=results, outputs=_outputs())
    (project / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    with (project / "design" / "decisions.md").open("a", encoding="utf-8") as handle:
        handle.write(d5_record())
    refreeze(project)
    outcome = render_project(load_project(project), draft=draft)
    assert not outcome.orphans and (draft or outcome.ok), outcome
    texts = {output.path.name: output.text for output in outcome.rendered}
    return texts["readout.html"], texts["TEACHBACK.md"]


def test_the_frontier_is_a_table_in_every_output_and_a_chart_in_html(make_project, tmp_path):
    html, markdown = _rendered(make_project, tmp_path, frontier_p95=FRONTIER, shape_milliseconds=90000)
    table = html[html.index('<table class="frontier">'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr") == 1 + len(FRONTIER)
    # Cheapest first; the two that fit the 500 ms budget are marked, the large shape is over it.
    assert table.count('<tr class="fits">') == 2 and table.count('<tr class="over">') == 1
    assert table.index("MiniLM-L-6") < table.index("bge-reranker-v2-m3")
    chart = html[html.index('id="chart-frontier-title"'):]
    assert chart[:chart.index("</svg>")].count('class="by-shape"') == len(FRONTIER)
    assert 'class="budget"' in chart[:chart.index("</svg>")]
    markdown_rows = [line for line in markdown.splitlines() if line.startswith("| ") and "reranker" in line.lower()
                     or "MiniLM" in line]
    assert len([line for line in markdown_rows if line.startswith("| ")]) >= len(FRONTIER)
    assert "<svg" not in markdown


def test_a_measured_row_is_a_square_at_its_own_score_and_priced_rows_are_circles(make_project, tmp_path):
    from tests.conftest import FIXTURE_QUERIES

    times = {q: 100.0 + i for i, q in enumerate(FIXTURE_QUERIES)}
    # A draft: the fixture ledger's sentence that the reranker was not measured no longer traces.
    html, _ = _rendered(make_project, tmp_path, draft=True, frontier_p95=FRONTIER, rerank_milliseconds=times)
    chart = html[html.index('id="chart-frontier-title"'):]
    chart = chart[:chart.index("</svg>")]
    (square,) = re.findall(r'<rect [^>]*class="measured">', chart)
    assert chart.count('class="by-shape"') == len(FRONTIER)
    assert "hybrid+rerank" in chart


def test_an_extrapolated_cost_says_from_how_many_layers(make_project, tmp_path):
    html, _ = _rendered(make_project, tmp_path, frontier_p95=FRONTIER, shape_milliseconds=90000)
    table = html[html.index('<table class="frontier">'):]
    assert "measured by shape, extrapolated from layers" in table
    assert re.search(r"\(2(?:<[^>]*>)* of (?:<[^>]*>)*12\)", table) or "(2 of 12)" in re.sub(r"<[^>]+>", "", table)
