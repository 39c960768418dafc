"""A table (and the charts drawn from it) may read any results file the project declares, and every
table and chart says which queries it is measured on and how many: a reader of the SciFact readout
can no longer take the 20-query table for the 300-query figures a sentence above it quotes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from generator.storage.errors import InputError
from generator.project import load_project
from generator.render.export import export_table
from generator.render.renderer import render_project
from generator.core.results import read_results

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scifact(tmp_path_factory) -> Path:
    """A copy of the SciFact review (its design, ledger and committed results)."""
    root = tmp_path_factory.mktemp("scifact")
    for name in ("design", "claims", "outputs"):
        shutil.copytree(REPOSITORY / name, root / name)
    shutil.copy(REPOSITORY / "readout.yaml", root / "readout.yaml")
    return root


def _with_table_file(root: Path, target: Path, file: str) -> Path:
    shutil.copytree(root, target)
    config = yaml.safe_load((target / "readout.yaml").read_text(encoding="utf-8"))
    for output in ("readout", "aar"):
        config["outputs"][output]["table"]["file"] = file
    (target / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return target


def _rendered(root: Path) -> dict[str, str]:
    outcome = render_project(load_project(root))
    assert outcome.ok, outcome.refused or outcome.orphans
    return {output.path.name: output.text for output in outcome.rendered}


def test_the_release_sample_table_says_it_is_the_release_sample(scifact):
    rendered = _rendered(scifact)
    assert "**The rows with their measures and changes** (release sample, 20 queries)" in rendered["AAR.md"]
    html = rendered["readout.html"]
    assert re.search(r"<caption>The rows with their measures and changes <span class=\"sample\"(?: data-readout=\"sample\")?>\(release sample, "
                     r"20 queries\)</span></caption>", html)
    # the charts drawn from it, the all-pairs tables, the per-query table and the costs say so too
    assert html.count('<span class="sample">(release sample, 20 queries)</span>') + \
        html.count('<span class="sample" data-readout="sample">(release sample, 20 queries)</span>') >= 8


def test_a_table_drawn_from_the_every_query_file_shows_its_count_and_its_figures(scifact, tmp_path):
    root = _with_table_file(scifact, tmp_path / "all", "results-300.json")
    everything = read_results(root / "outputs" / "results-300.json").model
    rendered = _rendered(root)
    aar = rendered["AAR.md"]
    assert "**The rows with their measures and changes** (every test query, 300 queries)" in aar
    hybrid = everything.row("hybrid")
    assert re.search(rf"\| hybrid \| {hybrid['recall@5']:.3f} \| {hybrid['nDCG@5']:.3f} \|", aar)
    # The decisions read the release sample: its table stands first, under its label, the
    # every-query file's beside it (tests/render/test_tables_follow_decisions.py).
    sample_hybrid = read_results(root / "outputs" / "results.json").model.row("hybrid")
    happened = aar.split("## What happened", 1)[1]
    sample_row = f"| hybrid | {sample_hybrid['recall@5']:.3f} | {sample_hybrid['nDCG@5']:.3f} |"
    assert happened.index("### release sample, 20 queries") < happened.index(sample_row) \
        < happened.index("### every test query, 300 queries")
    html = rendered["readout.html"]
    assert '<span class="sample" data-readout="sample">(every test query, 300 queries)</span></caption>' in html
    assert '<p class="chart-title" aria-hidden="true">' in html and \
        re.search(r'chart-title[^>]*>[^<]*<span class="sample">\(every test query, 300 queries\)', html)


def test_the_export_reads_the_tables_file_and_says_which_queries(scifact, tmp_path):
    root = _with_table_file(scifact, tmp_path / "export", "results-300.json")
    text = export_table(load_project(root), output="readout", fmt="latex")
    assert "results-300.json" in text.splitlines()[0]
    assert text.splitlines()[1] == "% measured on: every test query, 300 queries"


def test_a_table_file_the_project_does_not_declare_is_refused_naming_the_key(scifact, tmp_path):
    root = _with_table_file(scifact, tmp_path / "other", "results-other.json")
    with pytest.raises(InputError) as error:
        load_project(root)
    assert error.value.field == "outputs.readout.table.file"
    assert "not a results file this project declares; choose one of results.json, results-300.json" in str(error.value)
