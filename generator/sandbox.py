"""The L03 sandbox: a ten-document teaching corpus run end to end with no model (spec section 5).

Pipeline, per topic (all pure functions below; `sandbox_command` does the reading and writing):

1. **BM25** (generator.sandbox_bm25): our own positive-IDF BM25 over title + text; a document
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
5. **Metrics** (generator.metrics): Recall@k and graded nDCG@k (gain 2^grade - 1,
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

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from generator.errors import FindingsError, InputError
from generator.sandbox_bm25 import TOKEN_PATTERN, BM25Index, document_tokens, tokenize
from generator.metrics import macro_mean, graded_ndcg_at_k as ndcg_at_k, graded_recall_at_k as recall_at_k

DEFAULT_PARAMETERS: dict[str, Any] = {
    "cutoff": 3,
    "depth": 5,
    "alpha": 0.55,
    "rerank_weight": 0.25,
    "k1": 1.2,
    "b": 0.75,
}
INPUT_FILES = {
    "corpus": "corpus.jsonl",
    "topics": "topics.jsonl",
    "qrels": "qrels.tsv",
    "opaque_run": "opaque_run.json",
    "acquisition_ledger": "acquisition_ledger.csv",
}
CORPUS_FIELDS = ("doc_id", "title", "text", "source_type", "license")
LEDGER_STAGES = ("declared", "discovered", "authorised", "usable", "parsed", "admitted")
RUN_ORDER = ("bm25", "opaque", "hybrid", "reranked")
RUN_FILES = {"bm25": "runs/bm25.tsv", "opaque": "runs/frozen_dense.tsv",
             "hybrid": "runs/hybrid.tsv", "reranked": "runs/reranked.tsv"}
RUN_LABELS = {"bm25": "BM25 (own implementation)", "opaque": "supplied opaque run (model_identity: none)",
              "hybrid": "min-max hybrid, alpha on BM25", "reranked": "transparent fixed-set reranker"}
RERANK_FEATURE = ("query-term coverage: distinct query tokens found in the document's title + text "
                  "divided by distinct query tokens")
SCORE_DECIMALS = 9
METRIC_DECIMALS = 6
VISIBILITY_REFUSAL = (
    "refused: a 'visibility' figure divides admitted locators by declared ones ({admitted}/{declared} "
    "= {percent:.1f} %) and hides where sources were lost; every stage ratio keeps its own "
    "denominator ({stages})")


# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SandboxInputs:
    corpus: list[dict[str, str]]
    topics: list[dict[str, str]]
    qrels: dict[str, dict[str, int]]
    opaque_scores: dict[str, dict[str, float]]
    opaque_metadata: dict[str, Any]
    ledger: list[dict[str, str]]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("input file is missing", path=str(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", path=str(path)) from None


def _read_jsonl(path: Path, fields: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    rows: list[tuple[int, dict[str, str]]] = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON ({error.msg})", path=str(path), line=number) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", path=str(path), line=number)
        for field in fields:
            if not isinstance(record.get(field), str) or not record[field].strip():
                raise InputError("missing or not a non-empty string", path=str(path), line=number,
                                 field=field)
        rows.append((number, record))
    if not rows:
        raise InputError("no records", path=str(path))
    return rows


def parse_corpus(path: Path) -> list[dict[str, str]]:
    records, seen = [], set()
    for number, record in _read_jsonl(path, CORPUS_FIELDS):
        if record["doc_id"] in seen:
            raise InputError(f"duplicate doc_id {record['doc_id']!r}", path=str(path), line=number,
                             field="doc_id")
        seen.add(record["doc_id"])
        records.append({field: record[field] for field in CORPUS_FIELDS})
    return records


def parse_topics(path: Path) -> list[dict[str, str]]:
    topics, seen = [], set()
    for number, record in _read_jsonl(path, ("topic_id", "query")):
        if record["topic_id"] in seen:
            raise InputError(f"duplicate topic_id {record['topic_id']!r}", path=str(path), line=number,
                             field="topic_id")
        if not tokenize(record["query"]):
            raise InputError("query has no tokens", path=str(path), line=number, field="query")
        seen.add(record["topic_id"])
        topics.append({"topic_id": record["topic_id"], "query": record["query"]})
    return topics


def parse_qrels(path: Path, topic_ids: set[str], doc_ids: set[str]) -> dict[str, dict[str, int]]:
    """TREC qrels: `topic_id 0 doc_id grade`, whitespace separated; grades are integers >= 0."""
    qrels: dict[str, dict[str, int]] = {topic_id: {} for topic_id in sorted(topic_ids)}
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 4:
            raise InputError(f"expected 4 columns (topic_id 0 doc_id grade), got {len(parts)}",
                             path=str(path), line=number)
        topic_id, _, doc_id, grade_text = parts
        if topic_id not in topic_ids:
            raise InputError(f"unknown topic {topic_id!r}", path=str(path), line=number, field="topic_id")
        if doc_id not in doc_ids:
            raise InputError(f"unknown document {doc_id!r}", path=str(path), line=number, field="doc_id")
        if not grade_text.isdigit():
            raise InputError(f"must be a non-negative integer, got {grade_text!r}", path=str(path),
                             line=number, field="grade")
        if doc_id in qrels[topic_id]:
            raise InputError(f"duplicate judgement for {topic_id} {doc_id}", path=str(path), line=number)
        qrels[topic_id][doc_id] = int(grade_text)
    return qrels


def parse_opaque_run(path: Path, topic_ids: set[str],
                     doc_ids: set[str]) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """`{"metadata": {"model_identity": ...}, "scores": [{"topic_id", "doc_id", "score"}, ...]}`."""
    text = _read_text(path)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=str(path), line=error.lineno) from None
    if not isinstance(payload, dict):
        raise InputError("expected a JSON object", path=str(path), line=1)
    metadata = payload.get("metadata")
    if not isinstance(metadata, dict) or "model_identity" not in metadata:
        raise InputError("missing: the supplied run must declare its model identity (\"none\" if unknown)",
                         path=str(path), field="metadata.model_identity")
    rows = payload.get("scores")
    if not isinstance(rows, list) or not rows:
        raise InputError("missing or empty list", path=str(path), field="scores")
    scores: dict[str, dict[str, float]] = {topic_id: {} for topic_id in sorted(topic_ids)}
    for index, row in enumerate(rows):
        field = f"scores[{index}]"
        if not isinstance(row, dict):
            raise InputError("expected an object", path=str(path), field=field)
        if row.get("topic_id") not in topic_ids:
            raise InputError(f"unknown topic {row.get('topic_id')!r}", path=str(path), field=f"{field}.topic_id")
        if row.get("doc_id") not in doc_ids:
            raise InputError(f"unknown document {row.get('doc_id')!r}", path=str(path), field=f"{field}.doc_id")
        score = row.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InputError(f"must be a finite number, got {score!r}", path=str(path), field=f"{field}.score")
        if row["doc_id"] in scores[row["topic_id"]]:
            raise InputError(f"duplicate score for {row['topic_id']} {row['doc_id']}", path=str(path), field=field)
        scores[row["topic_id"]][row["doc_id"]] = float(score)
    return scores, metadata


def parse_ledger(path: Path) -> list[dict[str, str]]:
    """CSV with locator_id, locator, one yes/no column per stage, doc_id, snapshot, note."""
    reader = csv.DictReader(io.StringIO(_read_text(path)))
    required = ("locator_id", "locator", *LEDGER_STAGES, "doc_id", "snapshot", "note")
    missing = [name for name in required if name not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", path=str(path), line=1)
    rows = []
    for row in reader:
        number = reader.line_num
        for stage in LEDGER_STAGES:
            if row[stage] not in ("yes", "no"):
                raise InputError(f"must be yes or no, got {row[stage]!r}", path=str(path), line=number,
                                 field=stage)
        flags = [row[stage] == "yes" for stage in LEDGER_STAGES]
        for earlier, later, stage in zip(flags, flags[1:], LEDGER_STAGES[1:]):
            if later and not earlier:
                raise InputError("a locator cannot pass a stage it never reached", path=str(path),
                                 line=number, field=stage)
        if (row["admitted"] == "yes") != bool(row["doc_id"].strip()):
            raise InputError("an admitted locator needs a doc_id, and only an admitted one",
                             path=str(path), line=number, field="doc_id")
        rows.append(dict(row))
    if not rows:
        raise InputError("no locators", path=str(path))
    return rows


def load_inputs(data_dir: Path) -> SandboxInputs:
    paths = {name: data_dir / file_name for name, file_name in INPUT_FILES.items()}
    corpus = parse_corpus(paths["corpus"])
    topics = parse_topics(paths["topics"])
    doc_ids = {record["doc_id"] for record in corpus}
    topic_ids = {topic["topic_id"] for topic in topics}
    qrels = parse_qrels(paths["qrels"], topic_ids, doc_ids)
    opaque_scores, opaque_metadata = parse_opaque_run(paths["opaque_run"], topic_ids, doc_ids)
    ledger = parse_ledger(paths["acquisition_ledger"])
    admitted = {row["doc_id"] for row in ledger if row["admitted"] == "yes"}
    if admitted != doc_ids:
        raise InputError(f"admitted documents {sorted(admitted)} differ from the corpus {sorted(doc_ids)}",
                         path=str(paths["acquisition_ledger"]), field="doc_id")
    return SandboxInputs(corpus, topics, qrels, opaque_scores, opaque_metadata, ledger)


# --- ranking and fusion (pure) ---------------------------------------------------------------


def rank_scores(scores: Mapping[str, float], depth: int | None = None) -> list[tuple[str, float]]:
    """(doc_id, score) by score descending, ties by doc_id ascending; the first `depth`."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ranked if depth is None else ranked[:depth]


def min_max_normalise(ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
    """(s - min) / (max - min) within one list; every score 1.0 when all are equal."""
    if not ranked:
        return {}
    values = [score for _, score in ranked]
    low, high = min(values), max(values)
    if high == low:
        return {doc_id: 1.0 for doc_id, _ in ranked}
    return {doc_id: (score - low) / (high - low) for doc_id, score in ranked}


def hybrid_scores(bm25: Sequence[tuple[str, float]], opaque: Sequence[tuple[str, float]],
                  alpha: float) -> dict[str, float]:
    """alpha * BM25_norm + (1 - alpha) * opaque_norm over the union; a missing side counts 0."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    lexical, opaque_norm = min_max_normalise(bm25), min_max_normalise(opaque)
    return {doc_id: alpha * lexical.get(doc_id, 0.0) + (1.0 - alpha) * opaque_norm.get(doc_id, 0.0)
            for doc_id in sorted(set(lexical) | set(opaque_norm))}


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


# --- evaluation and diagnosis (pure) -------------------------------------------------------


def diagnose(ranking: Sequence[str], candidates: Sequence[str], grades: Mapping[str, int],
             k: int) -> dict[str, Any]:
    """Misses in the top k and the diagnosis.

    - "candidate miss": a relevant document is not among the depth candidates at all, so no
      reordering can recover it;
    - "ordering problem": every relevant document is a candidate, but the top k is not ideal
      (a relevant document sits below k, or a lower grade is ranked above a higher one);
    - "none": nDCG@k is 1.
    """
    relevant = sorted(doc_id for doc_id, grade in grades.items() if grade > 0)
    top = list(ranking[:k])
    misses = [doc_id for doc_id in relevant if doc_id not in top]
    outside = [doc_id for doc_id in relevant if doc_id not in candidates]
    ndcg = ndcg_at_k(ranking, grades, k)
    if outside:
        diagnosis = "candidate miss"
    elif misses or ndcg < 1.0 - 1e-12:
        diagnosis = "ordering problem"
    else:
        diagnosis = "none"
    return {"relevant": relevant, "top": top, "misses": misses, "not_in_candidates": outside,
            "recall": recall_at_k(ranking, grades, k), "ndcg": ndcg, "diagnosis": diagnosis}


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
    k, depth = parameters["cutoff"], parameters["depth"]
    tokens = {record["doc_id"]: document_tokens(record["title"], record["text"]) for record in inputs.corpus}
    index = BM25Index.build(tokens.items(), k1=parameters["k1"], b=parameters["b"])
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {name: {} for name in RUN_ORDER}
    query_details: dict[str, Any] = {}
    bm25_top5: dict[str, Any] = {}
    for topic in inputs.topics:
        topic_id = topic["topic_id"]
        query_tokens = tokenize(topic["query"])
        distinct = list(dict.fromkeys(query_tokens))
        bm25_all = index.score_all(query_tokens)
        bm25 = rank_scores({doc_id: score for doc_id, score in bm25_all.items() if score > 0}, depth)
        opaque = rank_scores(inputs.opaque_scores.get(topic_id, {}), depth)
        hybrid = rank_scores(hybrid_scores(bm25, opaque, parameters["alpha"]), depth)
        coverage = {doc_id: query_term_coverage(query_tokens, tokens[doc_id]) for doc_id, _ in hybrid}
        reranked = rerank_fixed_set(hybrid, coverage, parameters["rerank_weight"])
        for name, ranked in zip(RUN_ORDER, (bm25, opaque, hybrid, reranked)):
            runs[name][topic_id] = ranked
        query_details[topic_id] = {
            "query": topic["query"],
            "tokens": query_tokens,
            "document_frequency": {term: index.document_frequency.get(term, 0) for term in distinct},
            "idf": {term: index.idf(term) for term in distinct},
            "rerank_coverage": coverage,
        }
        bm25_top5[topic_id] = [
            {"doc_id": doc_id, "score": score,
             "term_counts": {term: index.term_counts[doc_id][term] for term in distinct
                             if index.term_counts[doc_id][term]}}
            for doc_id, score in bm25]

    per_topic: dict[str, dict[str, Any]] = {name: {} for name in RUN_ORDER}
    error_rows: list[dict[str, Any]] = []
    table = []
    for name in RUN_ORDER:
        for topic in inputs.topics:
            topic_id = topic["topic_id"]
            ranked = runs[name][topic_id]
            ranking = [doc_id for doc_id, _ in ranked]
            # The reranker's candidates are the hybrid's: it cannot add what the hybrid missed.
            candidates = ranking
            found = diagnose(ranking, candidates, inputs.qrels[topic_id], k)
            per_topic[name][topic_id] = {
                f"top_{k}": found["top"], "candidates": ranking, f"recall@{k}": found["recall"],
                f"nDCG@{k}": found["ndcg"], "misses": found["misses"], "diagnosis": found["diagnosis"],
                "scores": [{"doc_id": doc_id, "score": score} for doc_id, score in ranked],
            }
            error_rows.append({"topic_id": topic_id, "run": name, **found})
        table.append({
            "search": name, "label": RUN_LABELS[name], "measured": True,
            f"recall@{k}": macro_mean([per_topic[name][t["topic_id"]][f"recall@{k}"] for t in inputs.topics]),
            f"nDCG@{k}": macro_mean([per_topic[name][t["topic_id"]][f"nDCG@{k}"] for t in inputs.topics]),
        })

    same_set = all(sorted(d for d, _ in runs["reranked"][t]) == sorted(d for d, _ in runs["hybrid"][t])
                   for t in runs["hybrid"])
    top_unchanged = all([d for d, _ in runs["reranked"][t][:k]] == [d for d, _ in runs["hybrid"][t][:k]]
                        for t in runs["hybrid"])
    funnel = acquisition_funnel(inputs.ledger)
    lengths = {doc_id: index.lengths[doc_id] for doc_id in index.doc_ids}
    results = {
        "status": "valid",
        "documents": len(inputs.corpus),
        "topics": len(inputs.topics),
        "positive_judgements": sum(1 for grades in inputs.qrels.values() for g in grades.values() if g > 0),
        "parameters": dict(parameters),
        "table": table,
        "per_topic": per_topic,
        "token_lengths": lengths,
        "mean_token_length": index.average_length,
        "queries": query_details,
        "bm25_top5": bm25_top5,
        "opaque_run": {"model_identity": inputs.opaque_metadata.get("model_identity"),
                       "metadata": inputs.opaque_metadata},
        "reranker": {"feature": RERANK_FEATURE, "weight": parameters["rerank_weight"],
                     "same_set_as_hybrid": same_set, f"top_{k}_unchanged": top_unchanged},
        "funnel": funnel,
        "runs": dict(RUN_FILES),
    }
    return SandboxResult(results, runs, error_rows, stage_boundary(results))


def stage_boundary(results: Mapping[str, Any]) -> dict[str, Any]:
    """What was observed at each stage, and what that observation cannot support."""
    funnel = results["funnel"]
    counts = funnel["counts"]
    k = results["parameters"]["cutoff"]
    depth = results["parameters"]["depth"]
    return {"stages": [
        {"stage": "acquisition",
         "observed": f"{counts['declared']} declared locators; " + ", ".join(
             f"{entry['stage']} {entry['label']}" for entry in funnel["stages"]),
         "cannot_claim": ["a single 'visibility' ratio such as admitted/declared: each stage keeps its "
                          "own denominator",
                          "anything about locators that were never discovered or could not be parsed"]},
        {"stage": "indexing",
         "observed": f"{results['documents']} documents in snapshot {', '.join(funnel['snapshots'])}; "
                     f"mean token length {results['mean_token_length']:g}",
         "cannot_claim": ["that the synthetic CC0 texts resemble any real collection"]},
        {"stage": "bm25",
         "observed": f"own BM25 top {depth} per topic (documents sharing at least one query token)",
         "cannot_claim": ["any document outside a topic's top candidates was judged or ranked"]},
        {"stage": "opaque run",
         "observed": f"supplied scores with model_identity {results['opaque_run']['model_identity']!r}",
         "cannot_claim": ["which model, training data or settings produced the scores",
                          "that the run can be reproduced"]},
        {"stage": "hybrid",
         "observed": f"per-topic min-max fusion, alpha {results['parameters']['alpha']} on BM25",
         "cannot_claim": ["that this alpha is optimal: it was fixed, not tuned"]},
        {"stage": "rerank",
         "observed": f"fixed-set reorder of the hybrid top {depth} by {results['reranker']['feature']}",
         "cannot_claim": ["a recall gain: the reranker cannot add a document the hybrid missed",
                          "the behaviour of a learned cross-encoder"]},
        {"stage": "evaluation",
         "observed": f"Recall@{k} and graded nDCG@{k} over {results['topics']} topics and "
                     f"{results['positive_judgements']} positive judgements",
         "cannot_claim": ["a general or statistically significant difference between rows: three "
                          "authored topics prove nothing beyond this fixture"]},
    ]}


# --- manifest and stop conditions -----------------------------------------------------------


def resolve_parameters(overrides: Mapping[str, Any] | None, config_path: Path) -> dict[str, Any]:
    parameters = dict(DEFAULT_PARAMETERS)
    for name, value in (overrides or {}).items():
        if name not in DEFAULT_PARAMETERS:
            raise InputError(f"unknown parameter; choose from {', '.join(DEFAULT_PARAMETERS)}",
                             path=str(config_path), field=f"sandbox.parameters.{name}")
        expected = type(DEFAULT_PARAMETERS[name])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                expected is int and not isinstance(value, int)):
            raise InputError(f"must be {'an integer' if expected is int else 'a number'}, got {value!r}",
                             path=str(config_path), field=f"sandbox.parameters.{name}")
        parameters[name] = float(value) if expected is float else value
    for name in ("cutoff", "depth"):
        if parameters[name] < 1:
            raise InputError("must be a positive integer", path=str(config_path), field=f"sandbox.parameters.{name}")
    for name in ("alpha", "rerank_weight", "b"):
        if not 0.0 <= parameters[name] <= 1.0:
            raise InputError("must be in [0, 1]", path=str(config_path), field=f"sandbox.parameters.{name}")
    if parameters["k1"] < 0:
        raise InputError("must be >= 0", path=str(config_path), field="sandbox.parameters.k1")
    return parameters


def compare_with_recorded(recorded: Mapping[str, Any] | None, inputs: Mapping[str, Mapping[str, Any]],
                          parameters: Mapping[str, Any],
                          branches: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(undocumented changes, changes a branch documents) versus the recorded manifest."""
    if recorded is None:
        return [], []
    invalid, accepted = [], []
    recorded_inputs = recorded.get("inputs") or {}
    recorded_parameters = recorded.get("parameters") or {}

    def branch_for(kind: str, name: str, value: Any) -> str | None:
        for branch in branches:
            if name in (branch.get(kind) or {}) and branch[kind][name] == value:
                return str(branch.get("id"))
        return None

    def hash_of(entry: Any) -> Any:
        return (entry or {}).get("sha256")

    comparisons = (
        ("inputs", {n: hash_of(e) for n, e in recorded_inputs.items()}, {n: hash_of(e) for n, e in inputs.items()},
         lambda name, new, old: f"input {name} changed (sha256 {str(new)[:12]} recorded {str(old)[:12]})"),
        ("parameters", recorded_parameters, parameters,
         lambda name, new, old: f"parameter {name} changed ({new!r} recorded {old!r})"),
    )
    for kind, recorded, current, describe in comparisons:
        for name in sorted(set(recorded) | set(current)):
            old, new = recorded.get(name), current.get(name)
            if old == new:
                continue
            branch = branch_for(kind, name, new)
            change = describe(name, new, old)
            if branch is None:
                invalid.append(change + " with no documented branch")
            else:
                accepted.append(f"{change}, documented by branch {branch}")
    return invalid, accepted


def _branches(config: Mapping[str, Any], config_path: Path) -> list[dict[str, Any]]:
    branches = config.get("branches") or []
    if not isinstance(branches, list):
        raise InputError("must be a list", path=str(config_path), field="sandbox.branches")
    for index, branch in enumerate(branches):
        field = f"sandbox.branches[{index}]"
        if not isinstance(branch, dict) or not isinstance(branch.get("id"), str) or not isinstance(
                branch.get("reason"), str) or not branch["reason"].strip():
            raise InputError("needs an id and a non-empty reason", path=str(config_path), field=field)
        for kind in ("inputs", "parameters"):
            if branch.get(kind) is not None and not isinstance(branch[kind], dict):
                raise InputError("must be a mapping", path=str(config_path), field=f"{field}.{kind}")
    return branches


# --- output formatting -----------------------------------------------------------------------


def format_run(run: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> str:
    """TREC run lines `topic Q0 doc rank score tag`, tab separated, scores to 9 decimals."""
    lines = []
    for topic_id in sorted(run):
        for rank, (doc_id, score) in enumerate(run[topic_id], start=1):
            lines.append(f"{topic_id}\tQ0\t{doc_id}\t{rank}\t{score:.{SCORE_DECIMALS}f}\t{tag}")
    return "\n".join(lines) + "\n"


def format_error_analysis(rows: Sequence[Mapping[str, Any]], k: int) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["topic_id", "run", "relevant", f"top_{k}", "misses", "not_in_candidates",
                     f"recall@{k}", f"ndcg@{k}", "diagnosis"])
    for row in rows:
        writer.writerow([row["topic_id"], row["run"], " ".join(row["relevant"]), " ".join(row["top"]),
                         " ".join(row["misses"]), " ".join(row["not_in_candidates"]),
                         f"{row['recall']:.{METRIC_DECIMALS}f}", f"{row['ndcg']:.{METRIC_DECIMALS}f}",
                         row["diagnosis"]])
    return buffer.getvalue()


# --- command ---------------------------------------------------------------------------------


def _hash_inputs(project_root: Path, data_dir: Path) -> dict[str, dict[str, Any]]:
    from generator.fileio import sha256_file

    hashed = {}
    for file_name in INPUT_FILES.values():
        path = data_dir / file_name
        try:
            name = path.relative_to(project_root).as_posix()
        except ValueError:
            name = str(path)
        hashed[name] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    return hashed


def _recorded_manifest(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"recorded manifest is not valid JSON ({error}); delete it to start a new baseline",
                         path=str(path)) from None
    if not isinstance(manifest, dict):
        raise InputError("recorded manifest is not a JSON object", path=str(path))
    if manifest.get("status") == "invalid":
        return manifest.get("recorded")  # an invalid run never becomes the reference
    return {"inputs": manifest.get("inputs"), "parameters": manifest.get("parameters")}


def sandbox_command(args: Any) -> int:
    """Run the sandbox on a project directory and write its outputs.

    Example: ``readout sandbox examples/l03``
    """
    from generator.fileio import atomic_write_json, atomic_write_text, display_path
    from generator.project import load_project

    project = load_project(args.project)
    if project.kind != "sandbox":
        raise InputError(f"kind is {project.kind!r}; `readout sandbox` needs kind: sandbox",
                         path=str(project.config_path), field="kind")
    config = project.config.get("sandbox") or {}
    if not isinstance(config, dict):
        raise InputError("must be a mapping", path=str(project.config_path), field="sandbox")
    parameters = resolve_parameters(config.get("parameters"), project.config_path)
    branches = _branches(config, project.config_path)
    data_dir = project.resolve(project.config.get("data", "data"))
    inputs = load_inputs(data_dir)
    funnel = acquisition_funnel(inputs.ledger)
    if getattr(args, "report_visibility", False):
        refuse_visibility(funnel)

    out = project.outputs_dir
    manifest_path = out / "run_manifest.json"
    hashed = _hash_inputs(project.root, data_dir)
    recorded = _recorded_manifest(manifest_path)
    invalid, accepted = compare_with_recorded(recorded, hashed, parameters, branches)
    manifest = {
        "status": "invalid" if invalid else "valid",
        "inputs": hashed,
        "parameters": parameters,
        "tokenizer": {"pattern": TOKEN_PATTERN, "flags": "IGNORECASE", "lowercase": True,
                      "fields": "title + ' ' + text"},
        "fusion": "alpha * minmax(bm25) + (1 - alpha) * minmax(opaque); alpha weights BM25",
        "reranker": {"feature": RERANK_FEATURE, "formula": "(1 - weight) * hybrid + weight * coverage"},
        "branches": [{"id": b["id"], "reason": b["reason"]} for b in branches],
        "opaque_model_identity": inputs.opaque_metadata.get("model_identity"),
    }
    if invalid:
        manifest["invalid_reasons"] = invalid
        manifest["recorded"] = recorded
        atomic_write_json(manifest_path, manifest)
        atomic_write_json(out / "results.json", {
            "status": "invalid", "invalid_reasons": invalid,
            "note": "no results are reported for an invalid run; document the change as a "
                    "sandbox.branches entry in readout.yaml or restore the recorded input"})
        raise FindingsError("run invalid: " + "; ".join(invalid) + f" (see {manifest_path})")

    result = run_pipeline(inputs, parameters)
    k = parameters["cutoff"]
    for name, relative in RUN_FILES.items():
        atomic_write_text(out / relative, format_run(result.runs[name], name))
    atomic_write_text(out / "topic_error_analysis.csv", format_error_analysis(result.error_rows, k))
    atomic_write_json(out / "stage_boundary.json", result.stage_boundary)
    atomic_write_json(out / "acquisition_funnel.json", result.results["funnel"])
    atomic_write_json(out / "results.json", result.results)
    atomic_write_json(manifest_path, manifest)

    for change in accepted:
        print(f"accepted: {change}")
    print(f"{project.title}: {result.results['documents']} documents, {result.results['topics']} topics, "
          f"cutoff {k}")
    for row in result.results["table"]:
        print(f"  {row['search']:<9} Recall@{k} {row[f'recall@{k}']:.6f}  nDCG@{k} {row[f'nDCG@{k}']:.6f}")
    print("  funnel: " + ", ".join(f"{s['stage']} {s['label']}" for s in funnel["stages"]))
    print(f"wrote {display_path(out)}")
    return 0
