"""Every pair of measured rows, with Holm's correction (generator.core.all_pairs): the
adjustment by hand, the family, the figures shared with `comparisons`, what `check` re-derives,
and the table the readout shows."""

import json

import pytest

from generator.claims.tracing.rederive import verify_results
from generator.core.all_pairs import all_pairs_block, family_pairs, holm_adjusted
from generator.core.results import read_results, seal


def test_holm_by_hand():
    # m = 4. Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04, but
    # never below the step before: 0.06).
    assert holm_adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    # Capped at 1, and one test is its own family.
    assert holm_adjusted([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm_adjusted([0.2]) == [0.2]
    assert holm_adjusted([]) == []


def test_holm_never_lowers_a_p_value_and_keeps_the_order():
    import random

    rng = random.Random(5)
    for _ in range(200):
        p = [rng.random() ** 3 for _ in range(rng.randint(1, 12))]
        adjusted = holm_adjusted(p)
        assert all(a >= raw for a, raw in zip(adjusted, p)) and all(a <= 1.0 for a in adjusted)
        ranked = sorted(range(len(p)), key=lambda i: p[i])
        assert [adjusted[i] for i in ranked] == sorted(adjusted[i] for i in ranked)


def test_the_family_is_every_later_row_against_every_earlier_one():
    assert family_pairs(["dense", "sparse", "hybrid", "team"]) == [
        ("sparse", "dense"), ("hybrid", "dense"), ("team", "dense"),
        ("hybrid", "sparse"), ("team", "sparse"), ("team", "hybrid")]


def test_the_block_leaves_out_unmeasured_rows_and_adjusts_per_metric():
    p_values = {"b_vs_a": 0.01, "c_vs_a": 0.04, "c_vs_b": 0.03}

    def compare_pair(row, baseline, key, metric):
        p = p_values[key] if metric == "m1" else 0.5
        return {"delta": 0.1, "ci95_low": 0.05, "ci95_high": 0.2, "p_value": p, "excludes_zero": True}

    block = all_pairs_block(["a", "b", "skipped", "c"], {"a": True, "b": True, "skipped": False, "c": True},
                            ["m1", "m2"], compare_pair)
    assert block["rows"] == ["a", "b", "c"] and block["left_out"] == ["skipped"]
    family = block["metrics"]["m1"]
    assert family["family"] == 3 and sorted(family["pairs"]) == ["b_vs_a", "c_vs_a", "c_vs_b"]
    assert family["pairs"]["b_vs_a"]["p_holm"] == pytest.approx(0.03)
    assert family["pairs"]["c_vs_b"]["p_holm"] == pytest.approx(0.06)
    assert family["pairs"]["c_vs_a"]["p_holm"] == pytest.approx(0.06)
    assert [family["pairs"][k]["distinguishable_holm"] for k in ("b_vs_a", "c_vs_a", "c_vs_b")] == [True, False, False]
    assert all(entry["p_holm"] == 1.0 for entry in block["metrics"]["m2"]["pairs"].values())


def test_the_fixture_results_hold_every_pair_and_share_figures_with_comparisons(tmp_path, write_fixture_results):
    results = write_fixture_results(tmp_path / "outputs")
    block = results["all_pairs"]
    rows = [row["search"] for row in results["table"] if row.get("measured", True) is not False]
    assert block["rows"] == rows
    for metric, family in block["metrics"].items():
        assert family["family"] == len(rows) * (len(rows) - 1) // 2
        for key, entry in family["pairs"].items():
            known = results["comparisons"].get(key)
            if known and known.get("measured"):
                shared = {field: value for field, value in entry.items()
                          if field not in ("row", "baseline", "p_holm", "distinguishable_holm")}
                assert shared == known["metrics"][metric], key
            assert entry["p_holm"] >= entry["p_value"]


@pytest.mark.parametrize("change", ["p_holm", "distinguishable_holm", "drop_pair", "drop_metric", "drop_row"])
def test_check_re_derives_the_block_and_refuses_an_edit(tmp_path, write_fixture_results, change):
    outputs = tmp_path / "outputs"
    write_fixture_results(outputs)
    path = outputs / "results.json"
    assert verify_results(read_results(path), outputs) is None
    data = json.loads(path.read_text())
    family = data["all_pairs"]["metrics"]["nDCG@5"]
    key = sorted(family["pairs"])[0]
    if change == "p_holm":
        family["pairs"][key]["p_holm"] = family["pairs"][key]["p_value"]     # "no correction needed"
    elif change == "distinguishable_holm":
        family["pairs"][key]["distinguishable_holm"] = not family["pairs"][key]["distinguishable_holm"]
    elif change == "drop_pair":
        del family["pairs"][key]
    elif change == "drop_metric":
        del data["all_pairs"]["metrics"]["nDCG@5"]
    else:   # a row taken out of the family shrinks m, so every Holm p-value drops
        data["all_pairs"]["rows"] = data["all_pairs"]["rows"][:-1]
    data.pop("seal", None)
    path.write_text(json.dumps(seal(data, writer="readout evaluate 0.1.0")))
    problem = verify_results(read_results(path), outputs)
    assert problem is not None and "all_pairs" in problem, problem


def test_the_readout_shows_every_pair_with_holm(tmp_path, make_project):
    from generator.project import load_project
    from generator.render.renderer import render_project

    # The fixture project's outputs are the SciFact review's, whose "How sure we are" shows all_pairs.
    root = make_project(tmp_path / "p")
    render_project(load_project(root), draft=True)
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert html.count('<table class="all-pairs">') == 3      # one per metric
    assert "p after Holm" in html and "Holm step-down" in html
    results = json.loads((root / "outputs" / "results.json").read_text())
    pair = results["all_pairs"]["metrics"]["nDCG@5"]["pairs"]["hybrid_vs_sparse"]
    assert f"{pair['p_holm']:.4f}" in html
