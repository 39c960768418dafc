"""The reranker frontier (generator.core.frontier): the ceiling of a depth's candidates, the
configurations cheapest first, the one a budget admits, and the `evaluate.frontier` block."""

import itertools
import random

import pytest

from generator.core.frontier import ceiling_at_depth, parse_frontier
from generator.core.results.builders import frontier_block
from generator.core.results.model import cheapest_within, within_budget
from generator.core.metrics import macro_mean, metrics_from_names
from generator.storage.errors import InputError

NDCG5, RECALL5 = metrics_from_names(["nDCG@5", "recall@5"])


def _collection(seed: int, queries: int = 12, depth: int = 30):
    rng = random.Random(seed)
    over, judgements = {}, {}
    for q in range(queries):
        docs = [f"d{q}-{i}" for i in range(depth)]
        over[f"q{q}"] = docs
        judgements[f"q{q}"] = {doc: rng.choice((1, 2)) for doc in rng.sample(docs, rng.randint(0, 5))}
    return over, judgements


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("metric", [NDCG5, RECALL5])
def test_the_ceiling_never_falls_with_depth_and_never_drops_below_the_row_it_bounds(seed, metric):
    over, judgements = _collection(seed)
    queries = sorted(over)
    own = macro_mean(metric.per_query(over[q], judgements[q]) for q in queries)
    ceilings = [ceiling_at_depth(over, judgements, queries, metric, depth) for depth in (1, 2, 5, 10, 20, 30, 60)]
    assert all(low <= high + 1e-12 for low, high in itertools.pairwise(ceilings))
    assert ceilings[0] >= own - 1e-12
    # Reordering everything is the row's whole-list ceiling, the oracle of generator.core.headroom.
    assert ceilings[-1] == ceiling_at_depth(over, judgements, queries, metric, 30)


def test_the_ceiling_at_a_depth_moves_only_what_is_inside_the_depth():
    over = {"q": ["a", "b", "c", "d", "e", "f", "g"]}
    judgements = {"q": {"g": 1}}
    # The only relevant document is at rank 7: no reranker of the top 5 can bring it up.
    assert ceiling_at_depth(over, judgements, ["q"], NDCG5, 5) == 0.0
    assert ceiling_at_depth(over, judgements, ["q"], NDCG5, 7) == 1.0


def _configuration(model, depth, p95_ms, queries):
    return {"model": model, "depth": depth, "max_length": 256, "precision": "fp32", "batch_size": 5,
            "cost": "measured by shape, extrapolated from 2 of 6 layers", "quality": "not measured",
            "per_query_milliseconds": {q: p95_ms for q in queries}, "per_query_pairs": {q: depth for q in queries}}


def test_the_block_lists_configurations_cheapest_first_with_their_headroom():
    over, judgements = _collection(3)
    queries = sorted(over)
    configurations = [_configuration("big", 20, 900.0, queries), _configuration("small", 10, 80.0, queries),
                      _configuration("small", 20, 160.0, queries)]
    block = frontier_block(configurations, "hybrid", over, judgements, queries, NDCG5)
    assert [(c["model"], c["depth"]) for c in block["configurations"]] == [("small", 10), ("small", 20), ("big", 20)]
    for entry in block["configurations"]:
        assert entry["headroom"] == pytest.approx(entry["ceiling"] - block["over_mean"], abs=1e-15)
        assert entry["p95_milliseconds"] == pytest.approx(entry["per_query_milliseconds"][queries[0]])
    assert cheapest_within(block, 500)["depth"] == 10
    assert [c["depth"] for c in within_budget(block, 200)] == [10, 20]
    assert cheapest_within(block, 79.9) is None and within_budget(block, 79.9) == []
    # Exactly on the budget fits it (p95 <= budget).
    assert cheapest_within(block, 80.0)["model"] == "small"


@pytest.mark.parametrize("raw, field", [
    ("all", "evaluate.frontier"),
    ({"depth": [5]}, "evaluate.frontier.depth"),
    ({"depths": [0, 5]}, "evaluate.frontier.depths"),
    ({"depths": [True]}, "evaluate.frontier.depths"),
    ({"max_lengths": []}, "evaluate.frontier.max_lengths"),
    ({"precisions": ["fp16"]}, "evaluate.frontier.precisions"),
    ({"models": ["", "x"]}, "evaluate.frontier.models"),
    ({"metric": "nDCG@zero"}, "evaluate.frontier.metric"),
    ({"method": "guess"}, "evaluate.frontier.method"),
    ({"batch_size": 0}, "evaluate.frontier.batch_size"),
])
def test_a_bad_frontier_block_is_one_line_naming_its_key(raw, field):
    with pytest.raises(InputError) as raised:
        parse_frontier(raw, "readout.yaml")
    assert raised.value.field == field and raised.value.path == "readout.yaml"


def test_a_frontier_block_keeps_its_lists_sorted_and_once():
    spec = parse_frontier({"depths": [50, 5, 5, 10], "precisions": ["int8", "fp32"], "models": ["a", "a", "b"]},
                          "readout.yaml")
    assert spec.depths == (5, 10, 50) and spec.precisions == ("fp32", "int8") and spec.models == ("a", "b")
    assert parse_frontier({}, "readout.yaml").models[0] == "BAAI/bge-reranker-v2-m3"
