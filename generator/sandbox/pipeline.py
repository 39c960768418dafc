"""The L03 sandbox: a ten-document teaching corpus run end to end with no model (spec section 5).

Pipeline, per topic (all pure functions here; generator.sandbox.runner reads and writes):

1. **BM25** (generator.sandbox.bm25): our own positive-IDF BM25 over title + text; a document
   is retrieved only if it shares a token with the query; top `depth` (5) by score, ties by
   document id.
2. **Supplied opaque run** (data/opaque_run.json): authored scores whose metadata says
   `model_identity: none`. Nothing is known about what produced them; the top `depth` are kept.
3. **Hybrid**: min-max normalise each list's scores within the topic (max -> 1, min -> 0; a list
   whose scores are all equal gets 1.0), then
   ``hybrid = alpha * bm25_norm + (1 - alpha) * opaque_norm`` with alpha = 0.55:
   **alpha weights the BM25 (lexical) side**. A document missing from one list gets 0 on that
   side. Candidates are the union of both lists; the top `depth` are kept.
4. **Transparent fixed-set reranker**: reorders exactly the hybrid top `depth`, nothing enters or
   leaves. Feature: *query-term coverage* = distinct query tokens found in the document's
   title + text / distinct query tokens. ``reranked = (1 - weight) * hybrid + weight * coverage``
   with weight = 0.25; ties by document id.
5. **Metrics** (generator.core.metrics): Recall@k and graded nDCG@k (gain 2^grade - 1,
   discount log2(rank + 1)), k = 3, macro mean over topics.

Stop conditions: `outputs/run_manifest.json` records the sha256 of every input and the
parameters. A later run whose input hash or parameter differs from the recorded one, and is not
documented by a `sandbox.branches` entry of readout.yaml, is marked invalid (run_manifest.json
and results.json say which input or parameter changed, no results are reported) and the command
exits 1. A branch entry looks like::

    sandbox:
      branches:
        - id: BR-001
          reason: why the change is deliberate
          inputs: {data/corpus.jsonl: <new sha256>}
          parameters: {alpha: 0.6}

A "visibility" figure (admitted / declared locators, 10/12) is refused: every acquisition stage
ratio keeps its own denominator (discovered 11/12, authorised 11/11, usable 10/11, parsed 10/10,
admitted 10/10).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.core.diagnosis import diagnose, ndcg_verdict
from generator.core.fusion import min_max_fusion
from generator.core.metrics import Metric
from generator.core.results.builders import (RowRun, per_query_block, ranked_ids, sandbox_document, table_block,
                                             topic_diagnosis_entry)
from generator.core.results.model import ResultsModel, SandboxFigures, sandbox_figures
from generator.sandbox.bm25 import BM25Index, document_tokens, tokenize
from generator.sandbox.inputs import LEDGER_STAGES, SandboxInputs

RUN_ORDER = ("bm25", "opaque", "hybrid", "reranked")
RUN_FILES = {"bm25": "runs/bm25.tsv", "opaque": "runs/frozen_dense.tsv",
             "hybrid": "runs/hybrid.tsv", "reranked": "runs/reranked.tsv"}
RUN_LABELS = {"bm25": "BM25 (own implementation)", "opaque": "supplied opaque run (model_identity: none)",
              "hybrid": "min-max hybrid, alpha on BM25", "reranked": "transparent fixed-set reranker"}
RERANK_FEATURE = ("query-term coverage: distinct query tokens found in the document's title + text "
                  "divided by distinct query tokens")
VISIBILITY_REFUSAL = (
    "refused: a 'visibility' figure divides admitted locators by declared ones ({admitted}/{declared} "
    "= {percent:.1f} %) and hides where sources were lost; every stage ratio keeps its own "
    "denominator ({stages})")


def metrics_for(cutoff: int) -> tuple[Metric, Metric]:
    """The sandbox's two measures: Recall@k and graded nDCG@k (gain 2^grade - 1)."""
    return Metric(f"recall@{cutoff}", "recall", cutoff), Metric(f"nDCG@{cutoff}", "ndcg", cutoff, "exponential")


def rank_scores(scores: Mapping[str, float], depth: int | None = None) -> list[tuple[str, float]]:
    """(doc_id, score) by score descending, ties by doc_id ascending; the first `depth`."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ranked if depth is None else ranked[:depth]


def query_term_coverage(query_tokens: Sequence[str], doc_tokens: Sequence[str]) -> float:
    """Distinct query tokens present in the document / distinct query tokens (0.0 for none)."""
    distinct = set(query_tokens)
    return len(distinct.intersection(doc_tokens)) / len(distinct) if distinct else 0.0


def rerank_fixed_set(candidates: Sequence[tuple[str, float]], coverage: Mapping[str, float],
                     weight: float) -> list[tuple[str, float]]:
    """Reorder exactly `candidates` by (1 - weight) * score + weight * coverage; ties by doc_id."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rerank weight must be in [0, 1], got {weight}")
    rescored = {doc_id: (1.0 - weight) * score + weight * coverage[doc_id] for doc_id, score in candidates}
    reranked = rank_scores(rescored)
    if sorted(doc_id for doc_id, _ in reranked) != sorted(doc_id for doc_id, _ in candidates):
        raise AssertionError("the fixed-set reranker changed the candidate set")  # cannot happen
    return reranked


def acquisition_funnel(ledger: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Counts per stage and each stage's ratio over the stage before it (its own denominator)."""
    counts = {stage: sum(1 for row in ledger if row[stage] == "yes") for stage in LEDGER_STAGES}
    stages = []
    for previous, stage in zip(LEDGER_STAGES, LEDGER_STAGES[1:]):
        numerator, denominator = counts[stage], counts[previous]
        stages.append({
            "stage": stage, "count": numerator, "denominator_stage": previous, "denominator": denominator,
            "ratio": numerator / denominator if denominator else 0.0,
            "label": f"{numerator}/{denominator}",
        })
    lost = []
    for row in ledger:
        failed = next((stage for stage in LEDGER_STAGES if row[stage] != "yes"), None)
        if failed is not None:
            lost.append({"locator_id": row["locator_id"], "failed_stage": failed, "note": row["note"]})
    snapshots = sorted({row["snapshot"] for row in ledger if row["admitted"] == "yes" and row["snapshot"]})
    return {"counts": counts, "stages": stages, "lost": lost, "snapshots": snapshots}


def refuse_visibility(funnel: Mapping[str, Any]) -> None:
    """Always raises: a single admitted/declared 'visibility' ratio is not reported."""
    counts = funnel["counts"]
    declared, admitted = counts["declared"], counts["admitted"]
    stages = ", ".join(f"{entry['stage']} {entry['label']}" for entry in funnel["stages"])
    raise InputError(VISIBILITY_REFUSAL.format(admitted=admitted, declared=declared,
                                               percent=100.0 * admitted / declared if declared else 0.0,
                                               stages=stages), field="--report-visibility")


@dataclass(frozen=True)
class SandboxResult:
    results: dict[str, Any]
    runs: dict[str, dict[str, list[tuple[str, float]]]]
    error_rows: list[dict[str, Any]]
    stage_boundary: dict[str, Any]


def run_pipeline(inputs: SandboxInputs, parameters: Mapping[str, Any]) -> SandboxResult:
    """Everything the sandbox computes, as data (no I/O)."""
    k = parameters["cutoff"]
    tokens = {record["doc_id"]: document_tokens(record["title"], record["text"]) for record in inputs.corpus}
    index = BM25Index.build(tokens.items(), k1=parameters["k1"], b=parameters["b"])
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {name: {} for name in RUN_ORDER}
    query_details: dict[str, Any] = {}
    bm25_top5: dict[str, Any] = {}
    for topic in inputs.topics:
        topic_id = topic["topic_id"]
        ranked, query_details[topic_id], bm25_top5[topic_id] = _rank_topic(topic, inputs, index, tokens, parameters)
        for name, ranking in zip(RUN_ORDER, ranked):
            runs[name][topic_id] = ranking
    topic_ids = [topic["topic_id"] for topic in inputs.topics]
    metrics = metrics_for(k)
    per_query = per_query_block({name: ranked_ids(runs[name], topic_ids) for name in RUN_ORDER}, inputs.qrels,
                                topic_ids, metrics)
    diagnosis = {name: {t: topic_diagnosis_entry(runs[name][t], inputs.qrels[t], k) for t in topic_ids}
                 for name in RUN_ORDER}
    same_set = all(sorted(d for d, _ in runs["reranked"][t]) == sorted(d for d, _ in runs["hybrid"][t])
                   for t in runs["hybrid"])
    top_unchanged = all([d for d, _ in runs["reranked"][t][:k]] == [d for d, _ in runs["hybrid"][t][:k]]
                        for t in runs["hybrid"])
    funnel = acquisition_funnel(inputs.ledger)
    results = sandbox_document(
        documents=len(inputs.corpus), queries=len(inputs.topics),
        positive_judgements=sum(1 for grades in inputs.qrels.values() for g in grades.values() if g > 0),
        parameters=dict(parameters),
        table=table_block([RowRun(name, RUN_LABELS[name], runs[name]) for name in RUN_ORDER], per_query, topic_ids,
                          metrics, None, describe="label"),
        per_query=per_query, diagnosis=diagnosis,
        token_lengths={doc_id: index.lengths[doc_id] for doc_id in index.doc_ids},
        mean_token_length=index.average_length, query_details=query_details, bm25_top5=bm25_top5,
        opaque_run={"model_identity": inputs.opaque_metadata.get("model_identity"), "metadata": inputs.opaque_metadata},
        reranker={"feature": RERANK_FEATURE, "weight": parameters["rerank_weight"], "same_set_as_hybrid": same_set,
                  f"top_{k}_unchanged": top_unchanged},
        funnel=funnel, runs=dict(RUN_FILES))
    error_rows = [{"topic_id": t, "run": name, "relevant": found.relevant, "top": found.top, "misses": found.misses,
                   "not_in_candidates": found.not_in_candidates, "recall": found.recall, "ndcg": found.ndcg,
                   "diagnosis": ndcg_verdict(found)}
                  for name in RUN_ORDER for t in topic_ids
                  for found in (diagnose([d for d, _ in runs[name][t]], inputs.qrels[t], k),)]
    return SandboxResult(results, runs, error_rows, stage_boundary(sandbox_figures(ResultsModel(results))))


def _rank_topic(topic: Mapping[str, Any], inputs: SandboxInputs, index: BM25Index,
                tokens: Mapping[str, list[str]], parameters: Mapping[str, Any]) -> tuple[tuple, dict, list]:
    """One topic's four rankings (in RUN_ORDER), what its query tokens weigh, and its BM25 top list."""
    depth = parameters["depth"]
    topic_id = topic["topic_id"]
    query_tokens = tokenize(topic["query"])
    distinct = list(dict.fromkeys(query_tokens))
    bm25_all = index.score_all(query_tokens)
    bm25 = rank_scores({doc_id: score for doc_id, score in bm25_all.items() if score > 0}, depth)
    opaque = rank_scores(inputs.opaque_scores.get(topic_id, {}), depth)
    hybrid = rank_scores(min_max_fusion(bm25, opaque, parameters["alpha"]), depth)
    coverage = {doc_id: query_term_coverage(query_tokens, tokens[doc_id]) for doc_id, _ in hybrid}
    reranked = rerank_fixed_set(hybrid, coverage, parameters["rerank_weight"])
    details = {
        "query": topic["query"],
        "tokens": query_tokens,
        "document_frequency": {term: index.document_frequency.get(term, 0) for term in distinct},
        "idf": {term: index.idf(term) for term in distinct},
        "rerank_coverage": coverage,
    }
    top = [{"doc_id": doc_id, "score": score,
            "term_counts": {term: index.term_counts[doc_id][term] for term in distinct
                            if index.term_counts[doc_id][term]}}
           for doc_id, score in bm25]
    return (bm25, opaque, hybrid, reranked), details, top


def stage_boundary(figures: SandboxFigures) -> dict[str, Any]:
    """What was observed at each stage, and what that observation cannot support."""
    funnel = figures.funnel
    counts = funnel["counts"]
    k = figures.parameters["cutoff"]
    depth = figures.parameters["depth"]
    return {"stages": [
        {"stage": "acquisition",
         "observed": f"{counts['declared']} declared locators; " + ", ".join(
             f"{entry['stage']} {entry['label']}" for entry in funnel["stages"]),
         "cannot_claim": ["a single 'visibility' ratio such as admitted/declared: each stage keeps its "
                          "own denominator",
                          "anything about locators that were never discovered or could not be parsed"]},
        {"stage": "indexing",
         "observed": f"{figures.documents} documents in snapshot {', '.join(funnel['snapshots'])}; "
                     f"mean token length {figures.mean_token_length:g}",
         "cannot_claim": ["that the synthetic CC0 texts resemble any real collection"]},
        {"stage": "bm25",
         "observed": f"own BM25 top {depth} per topic (documents sharing at least one query token)",
         "cannot_claim": ["any document outside a topic's top candidates was judged or ranked"]},
        {"stage": "opaque run",
         "observed": f"supplied scores with model_identity {figures.opaque_model_identity!r}",
         "cannot_claim": ["which model, training data or settings produced the scores",
                          "that the run can be reproduced"]},
        {"stage": "hybrid",
         "observed": f"per-topic min-max fusion, alpha {figures.parameters['alpha']} on BM25",
         "cannot_claim": ["that this alpha is optimal: it was fixed, not tuned"]},
        {"stage": "rerank",
         "observed": f"fixed-set reorder of the hybrid top {depth} by {figures.rerank_feature}",
         "cannot_claim": ["a recall gain: the reranker cannot add a document the hybrid missed",
                          "the behaviour of a learned cross-encoder"]},
        {"stage": "evaluation",
         "observed": f"Recall@{k} and graded nDCG@{k} over {figures.queries} topics and "
                     f"{figures.positive_judgements} positive judgements",
         "cannot_claim": ["a general or statistically significant difference between rows: three "
                          "authored topics prove nothing beyond this fixture"]},
    ]}
