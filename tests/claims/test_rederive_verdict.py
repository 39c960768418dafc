"""A sealed results file whose comparisons, ceiling or rerank cost were edited and re-sealed is refused
(generator/claims/tracing/rederive.py): the seal only says the bytes are the ones the tool wrote, so a forger
who re-seals must still be caught by re-deriving every figure from the run files and judgements.

Each case starts from a fixture results file (tests/conftest.py `write_fixture_results`) that verifies
untouched, edits one figure (re-sealing as anyone can, as tests/test_adversarial.py does) and expects
`readout check`'s path (ResultsFiles) and `verify_results` to refuse it with a reason naming what was
edited.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.claims.tracing.measured import ResultsFiles
from generator.claims.tracing.rederive import verify_results
from generator.core.results.builders import timing_summary
from generator.core.results import read_results, seal, seal_problem
from tests.conftest import FIXTURE_QUERIES, write_fixture_results

WRITER = "readout evaluate 0.1.0"
RERANK_MILLISECONDS = {query: 10.0 + index for index, query in enumerate(FIXTURE_QUERIES)}
VARIANTS = {
    "plain": {},
    "shape": {"shape_milliseconds": 900},
    "measured": {"rerank_milliseconds": RERANK_MILLISECONDS},
}


# --- helpers --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> dict[str, Path]:
    """One outputs/ directory per fixture variant, written once; tests work on copies."""
    root = tmp_path_factory.mktemp("pristine")
    dirs = {}
    for name, variant in VARIANTS.items():
        write_fixture_results(root / name, **variant)
        dirs[name] = root / name
    return dirs


@pytest.fixture
def outputs(pristine, tmp_path):
    """A factory: a fresh copy of one variant's outputs/."""
    def make(variant: str) -> Path:
        target = tmp_path / f"outputs-{variant}"
        shutil.copytree(pristine[variant], target)
        return target
    return make


def problem_of(outputs_dir: Path) -> str | None:
    """Why the results file cannot be used, by both entry points; they must agree."""
    _, through_check = ResultsFiles(outputs_dir).for_decision("results.json")
    direct = verify_results(read_results(outputs_dir / "results.json"), outputs_dir, None)
    assert through_check == direct
    return direct


def tamper(outputs_dir: Path, change) -> dict:
    """Edit results.json and re-seal it as anyone can; returns the tampered data."""
    path = outputs_dir / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    before = json.dumps(data)  # key order counts: reordering the queries is a change
    change(data)
    assert json.dumps(data) != before, "the tampering changed nothing"
    data = seal(data, WRITER)  # seal() drops the old manifest.seal before hashing
    assert seal_problem(data) is None
    path.write_text(json.dumps(data), encoding="utf-8")
    return data


def row(data: dict, name: str) -> dict:
    return next(entry for entry in data["table"] if entry["search"] == name)


def hybrid_ndcg(data: dict) -> dict:
    return data["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]


def resummarise(cost: dict) -> None:
    """What a careful forger does after editing the times: recompute the summary so it agrees."""
    cost.update(timing_summary(cost["per_query_milliseconds"], cost["per_query_pairs"]))


def assert_refused(outputs_dir: Path, change, expected: str) -> str:
    assert problem_of(outputs_dir) is None, "the untouched fixture must verify"
    tamper(outputs_dir, change)
    reason = problem_of(outputs_dir)
    assert reason is not None, "a tampered, re-sealed file was accepted"
    assert "seal broken" not in reason and "not sealed" not in reason
    assert expected in reason, reason
    return reason


# --- the fixture itself ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_untouched_fixture_verifies(outputs, variant):
    assert problem_of(outputs(variant)) is None


def test_the_fixture_interval_of_hybrid_vs_dense_includes_zero(pristine):
    # The premise of the `distinguishable` case: nothing may call this comparison distinguishable.
    stats = hybrid_ndcg(json.loads((pristine["plain"] / "results.json").read_text()))
    assert stats["ci95_low"] < 0.0 < stats["ci95_high"]
    assert stats["distinguishable"] is False and stats["excludes_zero"] is False


def test_a_resealed_file_with_no_change_still_verifies(outputs):
    # Re-sealing alone is not tampering: the refusals below come from the edited figures.
    outputs_dir = outputs("plain")
    path = outputs_dir / "results.json"
    path.write_text(json.dumps(seal(json.loads(path.read_text()), WRITER)), encoding="utf-8")
    assert problem_of(outputs_dir) is None


# --- comparisons ----------------------------------------------------------------------------------

# Edits of comparisons.hybrid_vs_dense.metrics.nDCG@5: (field, new value or function of the old one).
STAT_EDITS = [
    pytest.param("distinguishable", lambda old: True, id="distinguishable-flipped-while-interval-holds-zero"),
    pytest.param("excludes_zero", lambda old: True, id="excludes-zero-flipped"),
    pytest.param("delta", lambda old: old + 0.01, id="delta-changed"),
    pytest.param("wins", lambda old: old + 1, id="wins-changed"),
    pytest.param("agreement", lambda old: "disagree" if old != "disagree" else "agree", id="agreement-text-changed"),
    pytest.param("p_value", lambda old: old / 20, id="exact-p-value-changed"),
]


@pytest.mark.parametrize("field, edit", STAT_EDITS)
def test_edited_comparison_is_refused_naming_it(outputs, field, edit):
    """The comparisons block is the one record of a comparison: its own check refuses an edit."""
    def change(data):
        stats = hybrid_ndcg(data)
        stats[field] = edit(stats[field])

    reason = assert_refused(outputs("plain"), change, f"comparisons.hybrid_vs_dense.metrics.nDCG@5.{field} is ")
    assert reason.startswith(f"comparisons.hybrid_vs_dense.metrics.nDCG@5.{field} is ")


def test_edited_comparison_is_refused_naming_the_comparison(outputs):
    def change(data):
        hybrid_ndcg(data)["delta"] += 0.01

    reason = assert_refused(outputs("plain"), change, "")
    assert "comparisons.hybrid_vs_dense" in reason


@pytest.mark.parametrize("copy", [
    pytest.param(lambda data: json.loads(json.dumps(data["comparisons"]["hybrid_vs_dense"]["metrics"])),
                 id="an-exact-copy"),
    pytest.param(lambda data: {"nDCG@5": {**hybrid_ndcg(data), "ci95_low": 0.01}}, id="a-copy-that-clears-zero"),
])
def test_a_second_copy_of_a_comparison_in_the_table_is_refused(outputs, copy):
    # Format 1 kept each row's comparison with the baseline twice (table[search=R].paired_vs_B);
    # format 2 keeps it once: a copy added to a current file is a value no builder writes.
    def change(data):
        row(data, "hybrid")["paired_vs_dense"] = copy(data)

    reason = assert_refused(outputs("plain"), change, "table[search=hybrid].paired_vs_dense is ")
    assert "no such value" in reason


def _swap_in_place(data):
    entry = data["comparisons"]["hybrid_vs_dense"]
    entry["row"], entry["baseline"] = entry["baseline"], entry["row"]


def _swap_and_rename(data):
    entry = data["comparisons"].pop("hybrid_vs_dense")
    entry["row"], entry["baseline"] = entry["baseline"], entry["row"]
    data["comparisons"]["dense_vs_hybrid"] = entry


def _rerank_invented_measured(data):
    entry = data["comparisons"]["hybrid+rerank_vs_hybrid"]
    entry["measured"] = True
    entry.pop("not_measured_reason", None)
    entry["metrics"] = json.loads(json.dumps(data["comparisons"]["hybrid_vs_dense"]["metrics"]))


def _rerank_invented_figures_unmeasured(data):
    entry = data["comparisons"]["hybrid+rerank_vs_hybrid"]
    entry["metrics"] = json.loads(json.dumps(data["comparisons"]["hybrid_vs_dense"]["metrics"]))


def _measured_comparison_marked_unmeasured(data):
    entry = data["comparisons"]["sparse_vs_dense"]
    entry["measured"] = False
    del entry["metrics"]


@pytest.mark.parametrize("change, expected", [
    pytest.param(_swap_in_place, "comparisons.hybrid_vs_dense compares dense with hybrid: its name says otherwise",
                 id="row-and-baseline-swapped"),
    pytest.param(_swap_and_rename, "comparisons.dense_vs_hybrid.metrics.nDCG@5.delta is ",
                 id="row-and-baseline-swapped-and-renamed"),
    pytest.param(_rerank_invented_measured, "comparisons.hybrid+rerank_vs_hybrid.measured is True",
                 id="unmeasured-rerank-comparison-marked-measured-with-invented-metrics"),
    pytest.param(_rerank_invented_figures_unmeasured,
                 "comparisons.hybrid+rerank_vs_hybrid gives figures although hybrid+rerank or hybrid was not measured",
                 id="unmeasured-rerank-comparison-given-figures"),
    pytest.param(_measured_comparison_marked_unmeasured, "comparisons.sparse_vs_dense.measured is False",
                 id="measured-comparison-marked-unmeasured"),
])
def test_edited_comparison_entry_is_refused(outputs, change, expected):
    assert_refused(outputs("plain"), change, expected)


# --- ceiling --------------------------------------------------------------------------------------


def _raise_ceiling(data):
    data["ceiling"]["rows"]["hybrid"]["nDCG@5"]["ceiling"] += 0.05


def _raise_ceiling_and_headroom_in_step(data):
    entry = data["ceiling"]["rows"]["hybrid"]["nDCG@5"]
    entry["ceiling"] += 0.05
    entry["headroom"] = entry["ceiling"] - entry["row"]


def _change_one_per_query_ceiling(data):
    per_query = data["ceiling"]["per_query"]["hybrid"]["q03"]
    per_query["nDCG@5"] = 0.123 if per_query["nDCG@5"] != 0.123 else 0.456


def _change_headroom(data):
    data["ceiling"]["rows"]["hybrid"]["recall@50"]["headroom"] = 0.1


def _change_row_mean(data):
    data["ceiling"]["rows"]["sparse"]["recall@5"]["row"] += 0.01


def _change_note(data):
    data["ceiling"]["note"] = "what a reranker of these candidates scores"


def _drop_a_query(data):
    del data["ceiling"]["per_query"]["dense"]["q20"]


@pytest.mark.parametrize("change, expected", [
    pytest.param(_raise_ceiling, "ceiling.rows.hybrid.nDCG@5.", id="row-ceiling-raised"),
    pytest.param(_raise_ceiling_and_headroom_in_step, "ceiling.rows.hybrid.nDCG@5.",
                 id="row-ceiling-and-headroom-raised-in-step"),
    pytest.param(_change_one_per_query_ceiling, "ceiling.per_query.", id="one-per-query-ceiling-changed"),
    pytest.param(_change_headroom, "ceiling.rows.hybrid.recall@50.", id="headroom-changed"),
    pytest.param(_change_row_mean, "ceiling.rows.sparse.recall@5.", id="row-mean-changed"),
    pytest.param(_change_note, "ceiling.note is ", id="upper-bound-note-reworded"),
    pytest.param(_drop_a_query, "ceiling.per_query.dense.q20 is missing", id="one-query-dropped"),
])
def test_edited_ceiling_is_refused(outputs, change, expected):
    reason = assert_refused(outputs("plain"), change, expected)
    assert reason.startswith(expected)


def test_edited_ceiling_of_the_measured_rerank_row_is_refused(outputs):
    # The measured rerank row is an oracle order: its headroom is 0; claiming room left is refused.
    def change(data):
        entry = data["ceiling"]["rows"]["hybrid+rerank"]["nDCG@5"]
        assert entry["headroom"] == 0.0
        entry["ceiling"] += 0.1
        entry["headroom"] = 0.1

    assert_refused(outputs("measured"), change, "ceiling.rows.hybrid+rerank.nDCG@5.")


# --- rerank cost ----------------------------------------------------------------------------------


def _cost(data):
    return data["rerank_costs"]["hybrid+rerank"]


def _p95_changed(data):
    _cost(data)["p95_milliseconds"] += 1.0


def _p50_changed(data):
    _cost(data)["p50_milliseconds"] -= 1.0


def _pairs_changed(data):
    _cost(data)["per_query_pairs"]["q07"] += 1
    resummarise(_cost(data))


def _quality_claimed(data):
    _cost(data)["quality"] = "measured"


def _cost_claimed_measured(data):
    _cost(data)["cost"] = "measured"
    _cost(data)["quality"] = "measured"


def _query_deleted(data):
    del _cost(data)["per_query_milliseconds"]["q11"]
    resummarise(_cost(data))


def _query_deleted_from_both(data):
    del _cost(data)["per_query_milliseconds"]["q11"]
    del _cost(data)["per_query_pairs"]["q11"]
    resummarise(_cost(data))


def _queries_reordered(data):
    times = _cost(data)["per_query_milliseconds"]
    _cost(data)["per_query_milliseconds"] = dict(reversed(list(times.items())))


def _query_renamed(data):
    times = _cost(data)["per_query_milliseconds"]
    times["q99"] = times.pop("q04")


def _negative_time(data):
    _cost(data)["per_query_milliseconds"]["q04"] = -903.0
    resummarise(_cost(data))


def _zero_time(data):
    _cost(data)["per_query_milliseconds"]["q04"] = 0.0
    resummarise(_cost(data))


def _string_time(data):
    _cost(data)["per_query_milliseconds"]["q04"] = "903"


SHAPE_CASES = [
    pytest.param(_p95_changed, "rerank_costs.hybrid+rerank.p95_milliseconds is ", id="p95-changed"),
    pytest.param(_p50_changed, "rerank_costs.hybrid+rerank.p50_milliseconds is ", id="p50-changed"),
    pytest.param(_pairs_changed, "rerank_costs.hybrid+rerank.per_query_pairs.q07 is ", id="one-pair-count-changed-summary-in-step"),
    pytest.param(_quality_claimed,
                 "rerank_costs.hybrid+rerank says cost 'measured by shape' with quality 'measured': a cost measured by shape never "
                 "measures quality", id="quality-claimed-on-a-cost-by-shape"),
    pytest.param(_cost_claimed_measured, "rerank_costs.hybrid+rerank says cost 'measured', but the hybrid+rerank row was not measured",
                 id="cost-by-shape-relabelled-measured"),
    pytest.param(_query_deleted, "rerank_costs.hybrid+rerank.per_query_milliseconds does not hold one entry per query of "
                 "manifest.query_ids (missing", id="one-query-deleted-from-the-times"),
    pytest.param(_query_deleted_from_both, "rerank_costs.hybrid+rerank.per_query_milliseconds does not hold one entry per query of "
                 "manifest.query_ids (missing", id="one-query-deleted-from-times-and-pairs"),
    pytest.param(_query_renamed, "rerank_costs.hybrid+rerank.per_query_milliseconds does not hold one entry per query of "
                 "manifest.query_ids (missing 'q04'; not evaluated 'q99')", id="one-query-renamed"),
    pytest.param(_negative_time, "rerank_costs.hybrid+rerank.per_query_milliseconds holds a time that is not a positive number",
                 id="negative-time"),
    pytest.param(_zero_time, "rerank_costs.hybrid+rerank.per_query_milliseconds holds a time that is not a positive number",
                 id="zero-time"),
    pytest.param(_string_time, "rerank_costs.hybrid+rerank.per_query_milliseconds holds a time that is not a positive number",
                 id="time-as-text"),
]


@pytest.mark.parametrize("change, expected", SHAPE_CASES)
def test_edited_cost_by_shape_is_refused(outputs, change, expected):
    outputs_dir = outputs("shape")
    assert _cost(json.loads((outputs_dir / "results.json").read_text()))["cost"] == "measured by shape"
    assert_refused(outputs_dir, change, expected)


def test_a_cost_block_in_another_key_order_is_the_same_block(outputs):
    """results.json is written with sorted keys and manifest.query_ids keeps the qrels order: the
    order of a per-query mapping carries nothing, so reversing it changes no figure."""
    outputs_dir = outputs("shape")
    tamper(outputs_dir, _queries_reordered)
    assert list(_cost(json.loads((outputs_dir / "results.json").read_text()))["per_query_milliseconds"])[0] == "q20"
    assert problem_of(outputs_dir) is None


def _times_differ_from_the_row(data):
    _cost(data)["per_query_milliseconds"]["q05"] += 1.0
    resummarise(_cost(data))


def _cost_relabelled_by_shape(data):
    _cost(data)["cost"] = "measured by shape"
    _cost(data)["quality"] = "not measured"


def _measured_p95_changed(data):
    _cost(data)["p95_milliseconds"] = data["p95_rerank_milliseconds"] + 1.0


@pytest.mark.parametrize("change, expected", [
    pytest.param(_times_differ_from_the_row, "rerank_costs.hybrid+rerank.per_query_milliseconds.q05 is ",
                 id="cost-times-differ-from-rerank-milliseconds"),
    pytest.param(_cost_relabelled_by_shape,
                 "rerank_costs.hybrid+rerank says cost 'measured by shape', but the hybrid+rerank row was measured",
                 id="measured-cost-relabelled-by-shape"),
    pytest.param(_measured_p95_changed, "rerank_costs.hybrid+rerank.p95_milliseconds is ", id="measured-p95-changed"),
])
def test_edited_measured_rerank_cost_is_refused(outputs, change, expected):
    outputs_dir = outputs("measured")
    data = json.loads((outputs_dir / "results.json").read_text())
    assert data["rerank_milliseconds"] == RERANK_MILLISECONDS
    assert _cost(data)["per_query_milliseconds"] == RERANK_MILLISECONDS
    reason = assert_refused(outputs_dir, change, expected)
    assert reason.startswith(expected)


def test_the_measured_p95_the_checker_expects_is_numpys_linear_percentile(pristine):
    # Independent arithmetic: times 10..29 ms; virtual index 19 * 0.95 = 18.05 between 28 and 29
    # -> 28 + 0.05 * 1 = 28.05. p50: index 9.5 between 19 and 20 -> 19.5. Pairs per second:
    # pairs / (sum 10..29 = 390 ms = 0.39 s).
    data = json.loads((pristine["measured"] / "results.json").read_text())
    cost = _cost(data)
    assert cost["p95_milliseconds"] == pytest.approx(28.05)
    assert cost["p50_milliseconds"] == pytest.approx(19.5)
    assert cost["pairs_per_second"] == pytest.approx(sum(cost["per_query_pairs"].values()) / 0.39)
    assert data["p95_rerank_milliseconds"] == pytest.approx(28.05)


def test_a_rerank_cost_that_is_not_measured_cannot_state_a_time(outputs):
    def change(data):
        _cost(data)["p95_milliseconds"] = 12.0

    outputs_dir = outputs("plain")
    assert _cost(json.loads((outputs_dir / "results.json").read_text()))["measured"] is False
    assert_refused(outputs_dir, change, "rerank_costs.hybrid+rerank is not measured but states a cost or a quality")
