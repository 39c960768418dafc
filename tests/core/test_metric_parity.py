"""Every metric family equals trec_eval (through pytrec_eval) to 1e-9, per query and in the mean.

Three sources of runs and judgements:
- the shipped SciFact runs (outputs/runs/{dense,sparse,hybrid}.trec with the judgements copy
  outputs/runs/qrels.tsv: binary judgements, 20 queries, 50 documents each);
- a graded fixture (tests/core/data/graded/: Cranfield-style grades -1..4, a query with no
  relevant document, a query no run covers, a query only the runs hold, runs shorter than the
  cutoff, a relevant document past rank 10, and raw scores with exact ties, written by the
  tool's run writer so that every reader keeps the tool's order);
- a seeded random graded fixture written the same way (40 judged queries, two runs).

The trec_eval counterpart of each family:
- recall@k -> recall_k; P@k -> P_k; MAP@k -> map_cut_k (judgements as they are);
- MRR@k -> recip_rank on the run truncated to its top k (recip_rank has no cutoff);
- nDCG@k (and nDCG@k:linear) -> ndcg_cut_k (gain = grade) on the judgements as they are;
- nDCG@k:binary -> ndcg_cut_k on the judgements with every positive grade set to 1 (on
  binary judgements, SciFact's, that is the judgements as they are);
- nDCG@k:exponential -> ndcg_cut_k on the judgements with every positive grade g set to 2^g - 1,
  and an independent computation from the definition.

Means: trec_eval averages the queries both the run and the judgements hold (pytrec_eval returns
only those); the tool averages over its evaluated queries, the judged ones, and a query the run
does not cover scores 0 (`trec_eval -c`). Parity is per query, and for means taken the tool's way.
"""

import json
import math
import random
from functools import lru_cache
from pathlib import Path

import pytest
import pytrec_eval

from generator.core.metrics import Metric, macro_mean, metric_from_name
from generator.core.runfiles import format_qrels, format_run, read_qrels, read_run, write_run

REPOSITORY = Path(__file__).resolve().parents[2]
SCIFACT_RUNS = REPOSITORY / "outputs" / "runs"
GRADED = Path(__file__).resolve().parent / "data" / "graded"
L03_OUTPUTS = REPOSITORY / "examples" / "l03" / "outputs"
CUTOFFS = (1, 5, 10, 50)
TOLERANCE = 1e-9

# name template -> (judgements given to trec_eval, trec_eval measure, truncate the run to k)
FAMILIES = {
    "recall@{k}": ("as judged", "recall_{k}", False),
    "R@{k}": ("as judged", "recall_{k}", False),
    "P@{k}": ("as judged", "P_{k}", False),
    "MAP@{k}": ("as judged", "map_cut_{k}", False),
    "MRR@{k}": ("as judged", "recip_rank", True),
    "nDCG@{k}": ("as judged", "ndcg_cut_{k}", False),
    "nDCG@{k}:binary": ("binary", "ndcg_cut_{k}", False),
    "nDCG@{k}:linear": ("as judged", "ndcg_cut_{k}", False),
    "ndcg_cut_{k}": ("as judged", "ndcg_cut_{k}", False),
    "nDCG@{k}:exponential": ("exponential", "ndcg_cut_{k}", False),
}
SOURCES = [("scifact", "dense"), ("scifact", "sparse"), ("scifact", "hybrid"),
           ("graded", "bm25"), ("graded", "dense"), ("random", "one"), ("random", "two")]


# The graded fixture. Grades as in the Cranfield collection's usual TREC form: -1 (of no
# interest) up to 4 (a complete answer); 0 judged not relevant. Raw scores hold exact ties; the
# list order is the tool's order, which trec_eval would not keep on the raw scores (it breaks a
# tie by document id, descending).
GRADED_JUDGEMENTS = {
    "1": {"184": 4, "29": 3, "31": 3, "12": 2, "486": 2, "51": 1, "102": 0, "13": -1},   # every grade
    "2": {"12": 2, "56": 2, "57": 2, "66": 2},      # one positive grade: binary nDCG is trec_eval's
    "3": {"100": 0, "101": -1, "102": 0},           # no relevant document
    "4": {"700": 3, "701": 1},                      # relevant, never retrieved
    "5": {"12": 4, "13": 1},                        # in no run: every metric 0
    "6": {"41": 1, "42": 3, "43": 2},               # runs shorter than the cutoffs
    "7": {"999": 4, "998": 0},                      # the one relevant document at rank 12
    "8": {**{str(800 + 4 * i): i % 4 + 1 for i in range(14)}, "900": 4, "901": 4, "802": -1},  # 16 relevant
}


def _graded_bm25() -> dict[str, list[tuple[str, float]]]:
    seven = [(str(950 + i), 20.0 - i) for i in range(14)]
    seven.insert(11, ("999", 8.5))
    return {
        "1": [("13", 9.0), ("29", 8.0), ("102", 8.0), ("184", 8.0), ("77", 7.5), ("51", 7.0), ("12", 6.0),
              ("78", 6.0), ("31", 5.0), ("79", 4.0), ("80", 3.0), ("81", 2.0)],
        "2": [("56", 3.2), ("12", 3.1), ("90", 3.1), ("57", 2.0), ("91", 1.0), ("66", 0.5)],
        "3": [("100", 2.0), ("103", 1.5), ("101", 1.0)],
        "4": [("710", 5.0), ("711", 4.0), ("712", 4.0), ("713", 1.0)],
        "6": [("42", 1.0), ("44", 0.9)],
        "7": seven,
        "8": [(str(800 + i), round(6.0 - (i // 3) * 0.25, 2)) for i in range(60)],     # ties in threes
        "x9": [("12", 1.0), ("13", 0.5)],           # not judged: no evaluated query
    }


def _graded_dense() -> dict[str, list[tuple[str, float]]]:
    # Another order of each bm25 list (query 4 missing): a coarse score with many ties, ties by
    # document id ascending (the tool's order), the opposite of trec_eval's raw-score order.
    rankings = {}
    for query, ranking in _graded_bm25().items():
        if query == "4":
            continue
        scored = [(doc, round(((int(doc) * 37 + len(query) * 11) % 17) / 10, 1)) for doc, _ in ranking]
        rankings[query] = sorted(scored, key=lambda item: (-item[1], item[0]))
    return rankings


GRADED_RUNS = {"bm25": _graded_bm25, "dense": _graded_dense}


def _random_fixture() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, list[tuple[str, float]]]]]:
    rng = random.Random(20240512)
    judgements: dict[str, dict[str, int]] = {}
    for number in range(40):
        pool = rng.sample(range(200), 30)
        choices = [-1, 0] if number % 7 == 3 else [-1, 0, 0, 0, 1, 1, 2, 3, 4]
        judgements[f"r{number:02d}"] = {f"d{doc}": rng.choice(choices) for doc in pool}
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
    for tag in ("one", "two"):
        rankings = {}
        for query in [*judgements, "u0", "u1"]:
            if int(query[1:]) % 9 == (2 if tag == "one" else 5):
                continue                              # the run misses this query
            documents = rng.sample(range(200), rng.choice([3, 20, 60, 60]))
            scored = [(f"d{doc}", round(rng.random() * 5, 1)) for doc in documents]  # ties are common
            rankings[query] = sorted(scored, key=lambda item: -item[1])               # stable: draw order
        runs[tag] = rankings
    return judgements, runs


def ranking_of(scores: dict[str, float]) -> list[str]:
    """The order every reader sees in a written run: by score, and no two scores equal."""
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    assert len({score for _, score in ordered}) == len(ordered), "a written run must hold no tie"
    return [doc for doc, _ in ordered]


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    written = tmp_path_factory.mktemp("random")
    random_judgements, random_runs = _random_fixture()
    for tag, rankings in random_runs.items():
        write_run(written / f"{tag}.trec", rankings, tag)
    (written / "qrels.tsv").write_text(format_qrels(random_judgements))
    return {
        "scifact": (read_qrels(SCIFACT_RUNS / "qrels.tsv"),
                    {tag: read_run(SCIFACT_RUNS / f"{tag}.trec") for tag in ("dense", "sparse", "hybrid")}),
        "graded": (read_qrels(GRADED / "qrels.tsv"), {tag: read_run(GRADED / f"{tag}.trec") for tag in GRADED_RUNS}),
        "random": (read_qrels(written / "qrels.tsv"), {tag: read_run(written / f"{tag}.trec") for tag in random_runs}),
    }


def _judgements_for(qrels: dict[str, dict[str, int]], form: str) -> dict[str, dict[str, int]]:
    if form == "binary":
        return {q: {d: 1 if g > 0 else g for d, g in docs.items()} for q, docs in qrels.items()}
    if form == "exponential":
        return {q: {d: 2 ** g - 1 if g > 0 else g for d, g in docs.items()} for q, docs in qrels.items()}
    return qrels


_TREC_CACHE: dict[tuple, dict] = {}


def trec_eval(sources, source: str, tag: str, form: str, measure: str, truncate: int | None = None) -> dict:
    """pytrec_eval's per-query values of `measure` (queries in both run and judgements)."""
    key = (source, tag, form, measure, truncate)
    if key not in _TREC_CACHE:
        qrels, runs = sources[source]
        run = runs[tag]
        if truncate is not None:
            run = {q: {d: run[q][d] for d in ranking_of(run[q])[:truncate]} for q in run}
        evaluator = pytrec_eval.RelevanceEvaluator(_judgements_for(qrels, form), {measure})
        _TREC_CACHE[key] = {q: values[measure] for q, values in evaluator.evaluate(run).items()}
    return _TREC_CACHE[key]


# Independent definitions, written from the module docstring's text (trec_eval's relevance
# threshold: grade >= 1), to check the tool without trec_eval, notably the exponential gain.
def _gain(grade: int, gain: str) -> float:
    if grade < 1:
        return 0.0
    return {"binary": 1.0, "linear": float(grade), "exponential": 2.0 ** grade - 1.0}[gain]


def reference(metric: Metric, ranking: list[str], grades: dict[str, int]) -> float:
    k, top = metric.cutoff, ranking[:metric.cutoff]
    relevant = {d for d, g in grades.items() if g >= 1}
    hits = [d in relevant for d in top]
    if metric.measure == "recall":
        return sum(hits) / len(relevant) if relevant else 0.0
    if metric.measure == "precision":
        return sum(hits) / k
    if metric.measure == "mrr":
        return 1.0 / (hits.index(True) + 1) if True in hits else 0.0
    if metric.measure == "map":
        precisions = [sum(hits[:r]) / r for r in range(1, len(hits) + 1) if hits[r - 1]]
        return sum(precisions) / len(relevant) if relevant else 0.0
    discounted = lambda gains: sum(g / math.log2(i + 2) for i, g in enumerate(gains))  # noqa: E731
    ideal = discounted(sorted((_gain(g, metric.gain) for g in grades.values()), reverse=True)[:k])
    return discounted([_gain(grades.get(d, 0), metric.gain) for d in top]) / ideal if ideal else 0.0


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("source,tag", SOURCES)
def test_each_query_and_the_mean_equal_trec_eval(sources, source, tag, family, k):
    qrels, runs = sources[source]
    run = runs[tag]
    metric = metric_from_name(family.format(k=k))
    form, measure, truncate = FAMILIES[family]
    expected = trec_eval(sources, source, tag, form, measure.format(k=k), k if truncate else None)
    query_ids = sorted(qrels)                    # the tool evaluates the judged queries
    assert set(expected) == set(query_ids) & set(run)
    values = {}
    for query in query_ids:
        ranking = ranking_of(run[query]) if query in run else []
        values[query] = metric.per_query(ranking, qrels[query])
        # trec_eval -c: a judged query the run misses scores 0
        assert values[query] == pytest.approx(expected.get(query, 0.0), abs=TOLERANCE), (query, metric.name)
        assert values[query] == pytest.approx(reference(metric, ranking, qrels[query]), abs=TOLERANCE)
    trec_eval_c_mean = math.fsum(expected.values()) / len(query_ids)
    assert macro_mean(values[q] for q in query_ids) == pytest.approx(trec_eval_c_mean, abs=TOLERANCE)


@pytest.mark.parametrize("source,tag", SOURCES)
def test_map_and_mrr_past_the_run_depth_equal_uncut_trec_eval(sources, source, tag):
    qrels, runs = sources[source]
    run = runs[tag]
    cut_map = trec_eval(sources, source, tag, "as judged", "map")
    reciprocal = trec_eval(sources, source, tag, "as judged", "recip_rank")
    for query in set(qrels) & set(run):
        ranking = ranking_of(run[query])
        assert metric_from_name("MAP@1000").per_query(ranking, qrels[query]) == pytest.approx(
            cut_map[query], abs=TOLERANCE)
        assert metric_from_name("MRR@1000").per_query(ranking, qrels[query]) == pytest.approx(
            reciprocal[query], abs=TOLERANCE)


def test_the_graded_fixture_files_are_the_run_writers_output():
    assert (GRADED / "qrels.tsv").read_text() == format_qrels(GRADED_JUDGEMENTS)
    for tag, rankings in GRADED_RUNS.items():
        assert (GRADED / f"{tag}.trec").read_text() == format_run(rankings(), tag), tag


def test_the_graded_fixture_holds_the_cases_it_is_for(sources):
    qrels, runs = sources["graded"]
    grades = {g for docs in qrels.values() for g in docs.values()}
    assert grades == {-1, 0, 1, 2, 3, 4}
    assert not any(g > 0 for g in qrels["3"].values())                      # no relevant document
    assert all("5" not in run for run in runs.values())                      # a query no run covers
    assert all("x9" in run and "x9" not in qrels for run in runs.values())   # a query nobody judged
    assert all(len(run["6"]) < 5 for run in runs.values())                   # shorter than the cutoff
    assert ranking_of(runs["bm25"]["7"]).index("999") == 11                  # relevant at rank 12
    for tag, rankings in GRADED_RUNS.items():
        raw = rankings()
        assert any(len({s for _, s in r}) < len(r) for r in raw.values()), f"{tag}: no tie in the raw scores"
        # The written file keeps the tool's order of every tie.
        assert {q: ranking_of(scores) for q, scores in runs[tag].items()} == {
            q: [d for d, _ in r] for q, r in raw.items()}


def test_trec_eval_on_raw_tied_scores_would_reorder_the_ties(sources):
    # trec_eval breaks a tie by document id, descending: on the raw scores of bm25 query 1 it
    # puts 184 (grade 4) at rank 3 where the tool ranked it 4th, so its nDCG differs.
    raw = {q: dict(r) for q, r in _graded_bm25().items()}
    judgements = sources["graded"][0]
    evaluator = pytrec_eval.RelevanceEvaluator(judgements, {"ndcg_cut_5"})
    on_raw = evaluator.evaluate(raw)["1"]["ndcg_cut_5"]
    on_written = evaluator.evaluate(sources["graded"][1]["bm25"])["1"]["ndcg_cut_5"]
    tool = metric_from_name("nDCG@5:linear").per_query([d for d, _ in _graded_bm25()["1"]], judgements["1"])
    assert tool == pytest.approx(on_written, abs=TOLERANCE)
    assert abs(on_raw - on_written) > 1e-3


def test_trec_eval_means_over_the_run_s_queries_differ_from_the_tool_s(sources):
    # Query 5 is judged (two relevant documents) but in no run: pytrec_eval leaves it out of the
    # mean, as trec_eval without -c; the tool counts it as 0.
    qrels, runs = sources["graded"]
    expected = trec_eval(sources, "graded", "bm25", "as judged", "recall_5")
    assert "5" not in expected and "x9" not in expected
    metric = metric_from_name("recall@5")
    tool_mean = macro_mean(metric.per_query(ranking_of(runs["bm25"][q]) if q in runs["bm25"] else [], qrels[q])
                           for q in sorted(qrels))
    trec_eval_mean = sum(expected.values()) / len(expected)
    assert tool_mean == pytest.approx(trec_eval_mean * len(expected) / len(qrels), abs=TOLERANCE)
    assert tool_mean < trec_eval_mean - 1e-3


def test_binary_ndcg_equals_ndcg_cut_only_where_relevant_documents_share_one_grade(sources):
    # Query 1 has grades 1-4: trec_eval's ndcg_cut (gain = grade) and the binary nDCG part; query 2's
    # relevant documents are all grade 2, so the two agree.
    qrels, runs = sources["graded"]
    ndcg_cut = trec_eval(sources, "graded", "bm25", "as judged", "ndcg_cut_5")
    binary = metric_from_name("nDCG@5:binary")
    assert metric_from_name("nDCG@5").per_query(ranking_of(runs["bm25"]["1"]), qrels["1"]) == pytest.approx(
        ndcg_cut["1"], abs=TOLERANCE)
    assert abs(binary.per_query(ranking_of(runs["bm25"]["1"]), qrels["1"]) - ndcg_cut["1"]) > 1e-3
    assert binary.per_query(ranking_of(runs["bm25"]["2"]), qrels["2"]) == pytest.approx(ndcg_cut["2"], abs=TOLERANCE)
    # SciFact's judgements are binary (every grade 1): there the three gains agree.
    scifact_qrels, scifact_runs = sources["scifact"]
    assert {g for docs in scifact_qrels.values() for g in docs.values()} == {1}
    for query, scores in scifact_runs["hybrid"].items():
        values = {metric_from_name(f"nDCG@5{g}").per_query(ranking_of(scores), scifact_qrels[query])
                  for g in ("", ":binary", ":linear", ":exponential")}
        assert max(values) - min(values) <= 1e-15


@lru_cache(maxsize=None)
def _published(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("results,runs_key", [(REPOSITORY / "outputs" / "results.json", "per_query"),
                                               (L03_OUTPUTS / "results.json", "per_query")])
def test_the_published_figures_are_what_the_metrics_give_from_the_written_runs(results, runs_key):
    # The SciFact results and the L03 sandbox results are published: every per-query figure
    # is exactly (==) what its manifest's metric definitions give on the run files beside it.
    published = _published(results)
    manifest = published["manifest"]
    metrics = [Metric.from_manifest(name, entry) for name, entry in manifest["metrics"].items()]
    qrels = read_qrels(results.parent / "runs" / "qrels.tsv")
    runs = published["runs"]
    assert runs
    for row, relative in runs.items():
        run = read_run(results.parent / relative)
        for query in manifest["query_ids"]:
            ranking = ranking_of(run[query]) if query in run else []
            for metric in metrics:
                assert published[runs_key][row][query][metric.name] == metric.per_query(ranking, qrels.get(query, {})), \
                    (results.name, row, query, metric.name)


def test_the_l03_sandbox_ndcg_is_trec_eval_ndcg_cut_on_exponential_grades():
    published = _published(L03_OUTPUTS / "results.json")
    qrels = read_qrels(L03_OUTPUTS / "runs" / "qrels.tsv")
    evaluator = pytrec_eval.RelevanceEvaluator(_judgements_for(qrels, "exponential"), {"ndcg_cut_3"})
    for row, relative in published["runs"].items():
        measured = evaluator.evaluate(read_run(L03_OUTPUTS / relative))
        for query in published["manifest"]["query_ids"]:
            assert published["per_query"][row][query]["nDCG@3"] == pytest.approx(
                measured[query]["ndcg_cut_3"], abs=TOLERANCE), (row, query)
