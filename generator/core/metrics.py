"""Ranking metrics as pure functions: a per-query function and, where useful, a macro mean.

Pure Python (no numpy): the checker (generator.claims.tracing.rederive) imports this module and re-derives
every figure from the metric definitions a results manifest declares.

Conventions (they differ between toolkits, so they are settled here). For one query: d_1, d_2, ...
is the ranking (distinct documents, best first; a document's rank is its position, so ties were
already broken by whoever made the ranking); g(d) is d's grade in the judgements (an unjudged
document has grade 0); R = {d : g(d) > 0} is the relevant set (trec_eval's default relevance
level 1: grade >= 1, the same set for integer grades; zero and negative grades are not relevant);
"top k" is d_1 .. d_min(k, n). A query the ranking does not cover scores 0 on every metric, and a
mean is the plain mean over the evaluated queries (missing ones included, as `trec_eval -c`).

- Recall@k (`recall@k`) = |R in top k| / |R|; 0 when R is empty. trec_eval: recall_k.
- Precision@k (`P@k`) = |R in top k| / k, divided by k even when fewer than k documents were
  ranked. trec_eval: P_k.
- Reciprocal rank@k (`MRR@k`; its mean over queries is the MRR) = 1 / (rank of the first
  relevant document) if that rank is <= k, else 0. trec_eval: recip_rank (no cutoff) on the
  ranking truncated to its top k.
- Average precision@k (`MAP@k`; its mean is the MAP) = (1 / |R|) * sum over ranks r <= k with
  d_r in R of Precision@r; 0 when R is empty. The divisor is every relevant document, retrieved
  or not (not min(k, |R|)). trec_eval: map_cut_k.
- nDCG@k = DCG@k / IDCG@k; 0 when IDCG@k is 0. DCG@k = sum over r <= k of gain(g(d_r)) / log2(r + 1);
  IDCG@k is the same sum over the k largest gains among all judged documents of the query,
  retrieved or not. The gain is part of the metric's definition:
  - `linear` (`nDCG@k`, the default): gain max(g, 0), the grade itself. Equal to trec_eval's
    ndcg_cut_k on any judgements (trec_eval ignores zero and negative grades in the DCG and the
    ideal); the gain ir_measures' and ranx's `nDCG@k` use too, so a bare `nDCG@5` here is the
    figure anyone else publishes for the same run.
  - `binary` (`nDCG@k:binary`, the seed definition): gain 1 for a relevant document, else 0; so
    the ideal places min(k, |R|) relevant documents at the top. Equal to the linear gain when
    every relevant document has the same grade (SciFact: all 1), lower or higher on graded ones.
  - `exponential` (`nDCG@k:exponential`): gain 2^g - 1 for g > 0, else 0 (Burges et al.; ranx's
    ndcg_burges; the L03 sandbox and the ceiling). trec_eval's ndcg_cut_k gives the same on
    judgements whose grades were rewritten to 2^g - 1.
- Graded nDCG@k (`graded_ndcg_at_k`, the sandbox and the ceiling): the exponential gain above.

Metrics by name (`metric_from_name`), case-insensitive: `recall@k` (`R@k`, `Recall@k`,
trec_eval's `recall_k`), `P@k` (`precision@k`, `P_k`), `nDCG@k[:binary|:linear|:exponential]`
(`ndcg_cut_k`, trec_eval's name, and `nDCG@k:linear` both mean `nDCG@k`), `MRR@k` (`RR@k`),
`MAP@k` (`AP@k`, `map_cut_k`). Bare `nDCG@k` is the linear gain, as in trec_eval, ir_measures and
ranx; results written before that change record `gain: binary` in their manifest and keep it
(`Metric.from_manifest`).
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Mapping, Sequence

from generator.core.dataclass import dataclass


def _check_cutoff(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"cutoff k must be a positive integer, got {k!r}")


def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """|relevant in top k| / |relevant|; 0.0 for an empty relevant set."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    if not relevant_set:
        return 0.0
    return len(relevant_set.intersection(ranked[:k])) / len(relevant_set)


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Binary nDCG@k: DCG over relevant hits in the top k, over the ideal of min(k, |relevant|) hits."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    ideal = ordered_sum(_discount(rank) for rank in range(1, min(k, len(relevant_set)) + 1))
    if ideal == 0.0:
        return 0.0
    dcg = ordered_sum(_discount(rank) for rank, doc_id in enumerate(ranked[:k], start=1) if doc_id in relevant_set)
    return dcg / ideal


def graded_ndcg_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Graded nDCG@k: DCG = sum (2^rel - 1)/log2(rank + 1); ideal from grades sorted high to low."""
    _check_cutoff(k)
    for doc_id, grade in grades.items():
        if not isinstance(grade, int) or isinstance(grade, bool) or grade < 0:
            raise ValueError(f"grade of {doc_id!r} must be a non-negative integer, got {grade!r}")
    dcg = ordered_sum((2 ** grades.get(doc_id, 0) - 1) * _discount(rank)
                      for rank, doc_id in enumerate(ranked[:k], start=1))
    ideal_grades = sorted(grades.values(), reverse=True)[:k]
    ideal = ordered_sum((2 ** grade - 1) * _discount(rank) for rank, grade in enumerate(ideal_grades, start=1))
    return 0.0 if ideal == 0.0 else dcg / ideal


def graded_recall_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Recall@k where the relevant set is every document with grade > 0."""
    return recall_at_k(ranked, {doc_id for doc_id, grade in grades.items() if grade > 0}, k)


def precision_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """|relevant in top k| / k (k even when fewer than k documents were ranked), as trec_eval's P_k."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    return sum(1 for doc_id in ranked[:k] if doc_id in relevant_set) / k


def reciprocal_rank_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1 / rank of the first relevant document in the top k; 0.0 when none is there."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    for rank, doc_id in enumerate(ranked[:k], start=1):
        if doc_id in relevant_set:
            return 1.0 / rank
    return 0.0


def average_precision_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Sum of Precision@r over the ranks r <= k that hold a relevant document, divided by
    |relevant| (all of them, retrieved or not); 0.0 for an empty relevant set. trec_eval's map_cut_k."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    if not relevant_set:
        return 0.0
    hits = 0
    total = 0.0
    for rank, doc_id in enumerate(ranked[:k], start=1):
        if doc_id in relevant_set:
            hits += 1
            total += hits / rank
    return total / len(relevant_set)


def linear_ndcg_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """nDCG@k with gain = grade (zero and negative grades gain nothing): DCG = sum grade / log2(rank + 1),
    ideal from the positive grades sorted high to low. trec_eval's ndcg_cut_k on any judgements."""
    _check_cutoff(k)
    dcg = 0.0
    for rank, doc_id in enumerate(ranked[:k], start=1):
        grade = grades.get(doc_id, 0)
        if grade > 0:
            dcg += grade / math.log2(rank + 1)
    ideal = 0.0
    for rank, grade in enumerate(sorted((g for g in grades.values() if g > 0), reverse=True)[:k], start=1):
        ideal += grade / math.log2(rank + 1)
    return 0.0 if ideal == 0.0 else dcg / ideal


def ordered_sum(values: Iterable[float]) -> float:
    """The sum, added left to right in doubles. Python 3.12's `sum()` compensates rounding and
    3.11's does not, so the same figures would differ in the last bit between versions; one order
    of additions keeps every written number byte-identical on both (and equal to 3.11's sum)."""
    total = 0.0
    for value in values:
        total += value
    return total


def macro_mean(values: Iterable[float]) -> float:
    """The plain mean over queries; 0.0 for no queries."""
    collected = list(values)
    return float(ordered_sum(collected) / len(collected)) if collected else 0.0


def signed_delta(row_value: float, dense_value: float) -> float:
    """Row minus dense, sign kept."""
    return float(row_value - dense_value)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile with numpy's default ("linear") method, reproduced step by step in pure
    Python so that a checker without numpy derives the very same float: virtual index
    (n - 1) * q / 100, then numpy's two-sided interpolation between its neighbours."""
    if len(values) == 0:
        raise ValueError("the percentile of an empty list is undefined")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    ordered = sorted(float(value) for value in values)
    virtual = (len(ordered) - 1) * (q / 100)
    if virtual >= len(ordered) - 1:
        return ordered[-1]
    below = math.floor(virtual)
    low, high = ordered[below], ordered[below + 1]
    gamma = virtual - below
    difference = high - low
    return high - difference * (1 - gamma) if gamma >= 0.5 else low + difference * gamma


def p95(values: Sequence[float]) -> float:
    """The 95th percentile with numpy's default linear interpolation."""
    if len(values) == 0:
        raise ValueError("p95 of an empty list is undefined")
    return percentile(values, 95)



def same_candidate_sets(before: Mapping[str, Sequence[str]], after: Mapping[str, Sequence[str]]) -> bool:
    """True iff, for every query, the reordered list holds exactly the same documents."""
    if set(before) != set(after):
        return False
    return all(len(before[q]) == len(after[q]) and set(before[q]) == set(after[q]) for q in before)


@dataclass(frozen=True)
class Metric:
    """One reported measure at one cutoff, named as results.json keys it (`nDCG@5`).

    `measure` picks a definition of the module docstring: `recall` (Recall@k), `precision`
    (Precision@k), `mrr` (reciprocal rank@k), `map` (average precision@k) or `ndcg` (nDCG@k).
    `gain` says how a judgement counts in nDCG: `linear` (gain = grade: trec_eval's ndcg_cut on
    any judgements, the default for nDCG), `binary` (grade > 0 is relevant, every hit gains 1:
    the seed nDCG) or `exponential` (gain 2^grade - 1, the graded sandbox). The other measures
    are binary only: grade > 0 is relevant. Left out, the gain is the measure's default
    (DEFAULT_GAINS).

    `name` is free (the sandbox keys its exponential nDCG `nDCG@3`); `metric_from_name` builds a
    Metric from the spellings trec_eval, ir_measures and ranx use, named by `canonical_name`.
    The manifest entry `as_manifest()` is the whole definition: `from_manifest(name, entry)`
    rebuilds an equal Metric.
    """

    name: str
    measure: str
    cutoff: int
    gain: str | None = None

    def __post_init__(self) -> None:
        if self.gain is None:
            object.__setattr__(self, "gain", DEFAULT_GAINS.get(self.measure, "binary"))
        if self.measure not in MEASURES:
            raise ValueError(f"unknown measure {self.measure!r}; choose one of {', '.join(MEASURES)}")
        if self.gain not in GAINS:
            raise ValueError(f"unknown gain {self.gain!r}; choose one of {', '.join(GAINS)}")
        if self.measure != "ndcg" and self.gain != "binary":
            raise ValueError(f"metric {self.name!r}: gain {self.gain!r} applies to ndcg only; "
                             f"{self.measure} counts grade > 0 as relevant (gain binary)")
        _check_cutoff(self.cutoff)

    @property
    def canonical_name(self) -> str:
        """The spelling `metric_from_name` gives this definition (`recall@5`, `nDCG@5:linear`)."""
        return metric_name(self.measure, self.cutoff, self.gain)

    def per_query(self, ranked: Sequence[str], grades: Mapping[str, int]) -> float:
        """This metric for one query's ranking against its judgements (document -> grade)."""
        if self.measure == "ndcg" and self.gain == "exponential":
            return graded_ndcg_at_k(ranked, {d: g for d, g in grades.items() if g > 0}, self.cutoff)
        if self.measure == "ndcg" and self.gain == "linear":
            return linear_ndcg_at_k(ranked, grades, self.cutoff)
        relevant = {doc_id for doc_id, grade in grades.items() if grade > 0}
        return MEASURES[self.measure](ranked, relevant, self.cutoff)

    def as_manifest(self) -> dict[str, object]:
        return {"measure": self.measure, "cutoff": self.cutoff, "gain": self.gain}

    @classmethod
    def from_manifest(cls, name: str, entry: object) -> "Metric":
        """The metric a results manifest declares; ValueError names what is wrong."""
        if not isinstance(entry, Mapping) or set(entry) - {"measure", "cutoff", "gain"}:
            raise ValueError(f"metric {name!r}: expected {{measure, cutoff, gain}}, got {entry!r}")
        return cls(name, str(entry.get("measure")), entry.get("cutoff"), str(entry.get("gain", "binary")))  # type: ignore[arg-type]


MEASURES = {"recall": recall_at_k, "ndcg": ndcg_at_k, "precision": precision_at_k, "mrr": reciprocal_rank_at_k,
            "map": average_precision_at_k}
GAINS = ("binary", "exponential", "linear")
# What a bare name means: nDCG@k is trec_eval's ndcg_cut_k (and ir_measures' and ranx's nDCG@k).
DEFAULT_GAINS = {"ndcg": "linear"}

# The registry of names. Each measure's canonical prefix (the one results.json keys use) and the
# prefixes accepted before `@k` (lower case; matching is case-insensitive), then trec_eval's own
# measure names with their cutoff (`recall_5`, `ndcg_cut.10`) and the definition each one means.
CANONICAL_PREFIXES = {"recall": "recall", "precision": "P", "ndcg": "nDCG", "mrr": "MRR", "map": "MAP"}
NAME_PREFIXES = {"recall": "recall", "r": "recall", "p": "precision", "precision": "precision", "ndcg": "ndcg",
                 "mrr": "mrr", "rr": "mrr", "map": "map", "ap": "map"}
TREC_EVAL_NAMES = {"recall": ("recall", "binary"), "p": ("precision", "binary"), "ndcg_cut": ("ndcg", "linear"),
                   "map_cut": ("map", "binary")}
ACCEPTED_FORMS = ("recall@k (or R@k, recall_k), P@k (or precision@k, P_k), "
                  "nDCG@k with an optional gain :linear (the default, trec_eval's ndcg_cut_k), :binary or "
                  ":exponential, MRR@k (or RR@k), MAP@k (or AP@k, map_cut_k); k a positive integer, "
                  "names case-insensitive")
_AT_NAME = re.compile(r"([A-Za-z][A-Za-z0-9_]*)@([0-9]+)(?::([A-Za-z]+))?")
_TREC_NAME = re.compile(r"([A-Za-z_]+?)[_.]([0-9]+)")


def metric_name(measure: str, cutoff: int, gain: str | None = None) -> str:
    """The canonical spelling of a definition: `recall@5`, `P@10`, `nDCG@5` (linear gain),
    `nDCG@5:binary`, `nDCG@5:exponential`, `MRR@10`, `MAP@100`."""
    default = DEFAULT_GAINS.get(measure, "binary")
    gain = default if gain is None else gain
    if measure not in CANONICAL_PREFIXES:
        raise ValueError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    if gain not in GAINS or (measure != "ndcg" and gain != "binary"):
        raise ValueError(f"gain {gain!r} does not apply to {measure}; nDCG takes one of {', '.join(GAINS)}, "
                         f"the other measures binary only")
    _check_cutoff(cutoff)
    suffix = "" if gain == default else f":{gain}"
    return f"{CANONICAL_PREFIXES[measure]}@{cutoff}{suffix}"


def _parse_cutoff(name: str, digits: str) -> int:
    if digits.startswith("0"):
        raise ValueError(f"unknown metric name {name!r}: the cutoff must be a positive integer, written "
                         f"without leading zeros; accepted forms: {ACCEPTED_FORMS}")
    return int(digits)


def metric_from_name(name: str) -> Metric:
    """The Metric a name means, named by its canonical spelling (`metric_from_name("NDCG@10")`
    is `Metric("nDCG@10", "ndcg", 10, "linear")`, as is `"ndcg_cut_10"`; `"nDCG@10:binary"` is
    the binary gain)
    ValueError names the name and the accepted forms."""
    if not isinstance(name, str):
        raise ValueError(f"a metric name must be a string, got {name!r}; accepted forms: {ACCEPTED_FORMS}")
    at_form = _AT_NAME.fullmatch(name)
    if at_form:
        prefix, digits, gain = at_form.group(1).lower(), at_form.group(2), at_form.group(3)
        if prefix not in NAME_PREFIXES:
            raise ValueError(f"unknown metric name {name!r}: no measure is called {at_form.group(1)!r}; "
                             f"accepted forms: {ACCEPTED_FORMS}")
        measure = NAME_PREFIXES[prefix]
        gain = DEFAULT_GAINS.get(measure, "binary") if gain is None else gain.lower()
        if gain == "graded":
            raise ValueError(f"unknown metric name {name!r}: ':graded' is ambiguous; write ':linear' "
                             f"(gain = grade, trec_eval's ndcg_cut) or ':exponential' (gain 2^grade - 1)")
        if gain not in GAINS:
            raise ValueError(f"unknown metric name {name!r}: unknown gain {at_form.group(3)!r}; "
                             f"choose one of {', '.join(GAINS)}")
        if measure != "ndcg" and gain != "binary":
            raise ValueError(f"unknown metric name {name!r}: a gain applies to nDCG only; accepted forms: "
                             f"{ACCEPTED_FORMS}")
        cutoff = _parse_cutoff(name, digits)
    else:
        trec_form = _TREC_NAME.fullmatch(name)
        if not trec_form or trec_form.group(1).lower() not in TREC_EVAL_NAMES:
            hint = (" (trec_eval's recip_rank has no cutoff: write MRR@k)"
                    if name.lower().startswith("recip_rank") else "")
            raise ValueError(f"unknown metric name {name!r}{hint}; accepted forms: {ACCEPTED_FORMS}")
        measure, gain = TREC_EVAL_NAMES[trec_form.group(1).lower()]
        cutoff = _parse_cutoff(name, trec_form.group(2))
    return Metric(metric_name(measure, cutoff, gain), measure, cutoff, gain)


def metrics_from_names(names: Iterable[str]) -> tuple[Metric, ...]:
    """The Metrics a list of names means, in order; ValueError for an empty list, an unknown name,
    or two names of one definition (`R@5` and `recall@5`)."""
    if isinstance(names, str):
        raise ValueError(f"expected a list of metric names, got the single string {names!r}")
    metrics: list[Metric] = []
    seen: dict[str, str] = {}
    for name in names:
        metric = metric_from_name(name)
        if metric.name in seen:
            raise ValueError(f"metric names {seen[metric.name]!r} and {name!r} both mean {metric.name}")
        seen[metric.name] = name
        metrics.append(metric)
    if not metrics:
        raise ValueError(f"expected at least one metric name; accepted forms: {ACCEPTED_FORMS}")
    return tuple(metrics)


# What every BEIR row reports, and the metrics whose change over dense is reported.
ROW_METRICS = (Metric("recall@5", "recall", 5), Metric("recall@50", "recall", 50), Metric("nDCG@5", "ndcg", 5, "linear"))
DELTA_METRICS = ("recall@5", "recall@50", "nDCG@5")


def per_query_metrics(ranked: Sequence[str], grades: Mapping[str, int],
                      metrics: Sequence[Metric] = ROW_METRICS) -> dict[str, float]:
    return {metric.name: metric.per_query(ranked, grades) for metric in metrics}
