"""Issue 45 part 4: the per-query table and every chart work for whatever metrics the team
configured (evaluate.metrics: MRR@k, P@k, nDCG@k at any cutoff, ...), or say on the page why a view
is absent; nothing disappears silently."""

from __future__ import annotations

import copy
import re
from pathlib import Path

from bs4 import BeautifulSoup

from tests.conftest import ROOT_CONFIG, claim, fixture_evaluation, run_cli

METRICS = ["MRR@10", "nDCG@10", "P@5"]


def _results_with(root: Path, monkeypatch, names: list[str]) -> None:
    """The fixture's rankings scored with other metrics, sealed as `evaluate` writes them."""
    import generator.core.metrics as metrics_module
    from generator.core.metrics import metrics_from_names
    from generator.evaluate.pipeline import write_sealed_results

    chosen = metrics_from_names(names)
    with monkeypatch.context() as patch:
        patch.setattr(metrics_module, "ROW_METRICS", tuple(chosen))
        evaluation = fixture_evaluation()
    write_sealed_results(root / "outputs" / "results.json", root / "outputs" / "runs", evaluation, metrics=chosen)


def _outputs(deltas_metrics: list[str] | None) -> dict:
    outputs = copy.deepcopy(ROOT_CONFIG["outputs"])
    readout = outputs["readout"]
    readout["table"]["columns"] = [{"key": name, "label": name} for name in METRICS]
    readout["charts"]["deltas"] = {"baseline": "dense", "delta": "delta_{metric}_vs_dense",
                                   "interval": "paired_vs_dense.{metric}"}
    if deltas_metrics is not None:
        readout["charts"]["deltas"]["metrics"] = deltas_metrics
    readout["charts"]["quality_vs_time"] = {"time": "rerank_costs.hybrid+rerank.p95_milliseconds",
                                            "time_row": "hybrid+rerank"}
    for section in readout["sections"]:
        if section["id"] == "results":
            section["show"] = ["table", "deltas", "quality_vs_time", "per_query"]
    outputs["aar"]["table"]["columns"] = [{"key": name, "label": name} for name in METRICS]
    return outputs


CLAIM = claim("mrr", "Hybrid reaches MRR@10 {h:.3f}.", "- measured: {values: {h: 'table[search=hybrid].MRR@10'}}",
              kind="performance")


def _project(make_project, tmp_path, monkeypatch, deltas_metrics=None) -> Path:
    root = make_project(tmp_path / "p", outputs=_outputs(deltas_metrics))
    _results_with(root, monkeypatch, METRICS)
    ledger = root / "claims" / "ledger.yaml"
    text = ledger.read_text(encoding="utf-8")
    # The fixture's claims read nDCG@5; these results hold other metrics: keep the claims that do not.
    kept = [block for block in re.split(r"(?m)^(?=  - id: )", text) if "nDCG@5" not in block]
    ledger.write_text("".join(kept) + "\n".join("  " + line if line else line for line in CLAIM.splitlines()) + "\n",
                      encoding="utf-8")
    return root


def test_the_per_query_table_and_the_charts_follow_the_configured_metrics(tmp_path, make_project, monkeypatch,
                                                                         capsys):
    root = _project(make_project, tmp_path, monkeypatch)
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.out + outcome.err
    soup = BeautifulSoup((root / "outputs" / "readout.html").read_text(encoding="utf-8"), "html5lib")
    columns = [cell.get_text(strip=True) for cell in soup.select("table.per-query thead th")]
    assert columns[0] == "Query" and columns[-1] == "Diagnosis"
    assert {column.split()[-1] for column in columns[1:-1]} == set(METRICS), columns
    assert len(soup.select("table.per-query tbody tr")) == 20
    charts = {svg["aria-labelledby"].split("-title")[0]: sorted(key.get_text(strip=True)
                                                                 for key in svg.find_next("p", class_="legend").select(".key"))
              for svg in soup.select("#section-results figure svg.chart")
              if svg["aria-labelledby"].startswith(("chart-quality", "chart-deltas"))}
    assert charts == {"chart-quality": sorted(METRICS), "chart-deltas": sorted(METRICS)}, charts
    assert "Not in these results" not in soup.get_text()


def test_a_chart_metric_the_results_do_not_hold_is_said_under_the_chart(tmp_path, make_project, monkeypatch, capsys):
    root = _project(make_project, tmp_path, monkeypatch, deltas_metrics=["nDCG@5", "MRR@10"])
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    soup = BeautifulSoup((root / "outputs" / "readout.html").read_text(encoding="utf-8"), "html5lib")
    notes = [note.get_text(" ", strip=True) for note in soup.select("figure p.figure-note")]
    assert "Not in these results: nDCG@5" in notes, notes


def test_a_results_file_without_per_query_values_says_so_where_the_table_would_be(tmp_path, make_project,
                                                                                  monkeypatch, capsys):
    from generator.render.doors import HtmlDoor
    from generator.render.labels import Labels, load_labels, package_labels_path
    from generator.render.tables import per_query_view
    from generator.core.results import read_results

    root = make_project(tmp_path / "p")
    results = read_results(root / "outputs" / "results.json")
    results.model.data["per_query"] = {}
    labels = Labels(load_labels(package_labels_path()), HtmlDoor(), "labels.yaml")
    view = per_query_view(results, HtmlDoor(), labels, ["nDCG@5"])
    assert "no per-query values in this results file" in str(view["absent"])
