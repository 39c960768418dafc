"""The oracle reranking ceiling: how good could any reranker over this candidate pool be?

A small calculator (spec section 6). For one query and a handful of documents:

- lexical score = number of distinct query tokens the document contains (tokenizer of
  generator.sandbox.bm25; this is a count, not BM25);
- dense score = cosine of the 2-D document vector and the query vector; a zero vector (either
  side) has no direction and gets the fixed sentinel ZERO_VECTOR_COSINE = -2.0, below every real
  cosine, so it ranks last;
- each score gives ranks from 1, ties kept in document order (so an empty query, where every
  lexical score is 0, keeps the input order);
- fused = w / (k + lexical rank) + (1 - w) / (k + dense rank); fused ties keep document order;
- the candidate pool is the fused top `pool`; documents outside it are not retrieved;
- the oracle (generator.core.headroom.oracle_order, the same one the readout's ceiling on real
  candidates uses) sorts only the pool by the supplied relevance (ties keep fused order). It reads the
  labels it is scored on - a label leak - so its numbers are an upper bound for any reranker of
  this pool, never a model's result;
- Recall@cutoff = relevant (grade > 0) in the top cutoff / all relevant documents given;
  nDCG@cutoff with DCG = sum (2^rel - 1) / log2(rank + 1) and the ideal over all documents, so
  a pool smaller than the relevant set keeps the ceiling below 1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.core.headroom import oracle_order
from generator.core.metrics import graded_ndcg_at_k, graded_recall_at_k
from generator.storage.paths import reading
from generator.sandbox.bm25 import tokenize

ZERO_VECTOR_COSINE = -2.0
LABEL_LEAK_NOTICE = ("Upper bound, not a model: the oracle sorts the pool by the relevance labels it is "
                     "scored on (a label leak). Never report it as a reranker's result.")

PRESET: dict[str, Any] = {
    "query": "KV cache memory",
    "query_vector": [1.0, 0.1],
    "documents": [
        {"id": "D1", "text": "KV cache stores keys and values for generation", "vector": [1.0, 0.1],
         "relevance": 3},
        {"id": "D2", "text": "Cache restaurant menu and opening hours", "vector": [0.1, 1.0], "relevance": 0},
        {"id": "D3", "text": "Grouped query attention reduces memory", "vector": [0.95, 0.2], "relevance": 2},
        {"id": "D4", "text": "KV cache memory footprint depends on sequence length", "vector": [0.8, 0.3],
         "relevance": 3},
        {"id": "D5", "text": "Tokenization splits input text", "vector": [0.4, 0.8], "relevance": 0},
    ],
    "w": 0.5,
    "k": 60,
    "pool": 5,
    "cutoff": 3,
    "oracle": True,
}


@dataclass(frozen=True)
class VectorDocument:
    """A calculator document: text for the lexical count, a 2-D vector for the dense cosine."""

    id: str
    text: str
    vector: tuple[float, float]
    relevance: int


@dataclass(frozen=True)
class Case:
    query: str
    query_vector: tuple[float, float]
    documents: tuple[VectorDocument, ...]
    w: float
    k: float
    pool: int
    cutoff: int
    oracle: bool


# --- validation ------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _vector(value: Any, source: str, field: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(_is_number(x) for x in value):
        raise InputError(f"must be a list of 2 finite numbers, got {json.dumps(value)}", path=source, field=field)
    return float(value[0]), float(value[1])


def _positive_int(value: Any, source: str, field: str) -> int:
    if not _is_int(value) or value < 1:
        raise InputError(f"must be a positive integer, got {json.dumps(value)}", path=source, field=field)
    return value


def parse_case(data: Any, source: str = "<preset>") -> Case:
    """Validate a case mapping; raise InputError naming the first bad field."""
    if not isinstance(data, Mapping):
        raise InputError("expected a JSON object", path=source)
    query = data.get("query", "")
    if not isinstance(query, str):
        raise InputError(f"must be a string, got {json.dumps(query)}", path=source, field="query")
    if "query_vector" not in data:
        raise InputError("missing (a list of 2 numbers)", path=source, field="query_vector")
    query_vector = _vector(data["query_vector"], source, "query_vector")
    documents = data.get("documents")
    if not isinstance(documents, list) or not documents:
        raise InputError("must be a non-empty list", path=source, field="documents")
    parsed, seen = [], set()
    for index, doc in enumerate(documents):
        field = f"documents[{index}]"
        if not isinstance(doc, Mapping):
            raise InputError("must be an object with id, text, vector, relevance", path=source, field=field)
        doc_id = doc.get("id")
        if not isinstance(doc_id, str) or not doc_id:
            raise InputError(f"must be a non-empty string, got {json.dumps(doc_id)}", path=source,
                             field=f"{field}.id")
        if doc_id in seen:
            raise InputError(f"duplicate id {doc_id!r}", path=source, field=f"{field}.id")
        seen.add(doc_id)
        text = doc.get("text")
        if not isinstance(text, str):
            raise InputError(f"must be a string, got {json.dumps(text)}", path=source, field=f"{field}.text")
        vector = _vector(doc.get("vector"), source, f"{field}.vector")
        relevance = doc.get("relevance")
        if not _is_int(relevance) or relevance < 0:
            raise InputError(f"must be a non-negative integer, got {json.dumps(relevance)}", path=source,
                             field=f"{field}.relevance")
        parsed.append(VectorDocument(doc_id, text, vector, relevance))
    w = data.get("w", 0.5)
    if not _is_number(w) or not 0.0 <= w <= 1.0:
        raise InputError(f"must be a number in [0, 1], got {json.dumps(w)}", path=source, field="w")
    k = data.get("k", 60)
    if not _is_number(k) or k < 0:
        raise InputError(f"must be a number >= 0, got {json.dumps(k)}", path=source, field="k")
    pool = _positive_int(data.get("pool", len(parsed)), source, "pool")
    cutoff = _positive_int(data.get("cutoff", 3), source, "cutoff")
    oracle = data.get("oracle", True)
    if not isinstance(oracle, bool):
        raise InputError(f"must be true or false, got {json.dumps(oracle)}", path=source, field="oracle")
    return Case(query, query_vector, tuple(parsed), float(w), float(k), pool, cutoff, oracle)


# --- scoring (pure) --------------------------------------------------------------------------


def lexical_score(query: str, text: str) -> int:
    """How many distinct query tokens occur in the text."""
    return len(set(tokenize(query)).intersection(tokenize(text)))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two 2-D vectors; ZERO_VECTOR_COSINE when either has length 0."""
    norm = math.hypot(*a) * math.hypot(*b)
    if norm == 0.0:
        return ZERO_VECTOR_COSINE
    return (a[0] * b[0] + a[1] * b[1]) / norm


def ranks_by_score(scores: Sequence[float]) -> list[int]:
    """Rank (from 1) of each position: score descending, ties in input order."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    ranks = [0] * len(scores)
    for rank, index in enumerate(order, start=1):
        ranks[index] = rank
    return ranks


def compute_ceiling(case: Case) -> dict[str, Any]:
    """Scores, ranks, the fused pool, the final order and its Recall/nDCG at the cutoff."""
    docs = case.documents
    lexical = [lexical_score(case.query, doc.text) for doc in docs]
    dense = [cosine(doc.vector, case.query_vector) for doc in docs]
    lexical_rank, dense_rank = ranks_by_score(lexical), ranks_by_score(dense)
    fused = [case.w / (case.k + lexical_rank[i]) + (1.0 - case.w) / (case.k + dense_rank[i])
             for i in range(len(docs))]
    fused_order = sorted(range(len(docs)), key=lambda i: (-fused[i], i))
    pool = fused_order[:case.pool]
    grades = {doc.id: doc.relevance for doc in docs}
    pooled = [docs[i].id for i in pool]
    ranking = oracle_order(pooled, grades) if case.oracle else pooled
    relevant = sum(1 for doc in docs if doc.relevance > 0)
    return {
        "query": case.query,
        "parameters": {"w": case.w, "k": case.k, "pool": case.pool, "cutoff": case.cutoff,
                       "oracle": case.oracle, "zero_vector_cosine": ZERO_VECTOR_COSINE},
        "documents": [
            {"id": docs[i].id, "lexical": lexical[i], "lexical_rank": lexical_rank[i], "dense": dense[i],
             "dense_rank": dense_rank[i], "fused": fused[i], "relevance": docs[i].relevance}
            for i in range(len(docs))],
        "fused_order": [docs[i].id for i in fused_order],
        "pool": [docs[i].id for i in pool],
        "ranking": ranking,
        "relevant": relevant,
        "relevant_in_pool": sum(1 for i in pool if docs[i].relevance > 0),
        f"recall@{case.cutoff}": graded_recall_at_k(ranking, grades, case.cutoff),
        f"nDCG@{case.cutoff}": graded_ndcg_at_k(ranking, grades, case.cutoff),
        "upper_bound": case.oracle,
        "notice": LABEL_LEAK_NOTICE if case.oracle else "fused order, no labels used",
    }


# --- command ---------------------------------------------------------------------------------


def load_case(path: Path | None) -> tuple[dict[str, Any], str]:
    if path is None:
        return json.loads(json.dumps(PRESET)), "<preset>"
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("input file not found", path=source) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read ({error})", path=source) from None
    with reading(path):
        try:
            return json.loads(text), source
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON ({error.msg})", path=source, line=error.lineno) from None


def format_text(report: Mapping[str, Any], source: str) -> str:
    cutoff = report["parameters"]["cutoff"]
    p = report["parameters"]
    lines = [f"Reranking ceiling for query {report['query']!r} ({source})",
             f"w {p['w']:g}, k {p['k']:g}, pool {p['pool']}, cutoff {cutoff}, oracle {'on' if p['oracle'] else 'off'}",
             "id    lexical (rank)  dense (rank)     fused     relevance"]
    for doc in report["documents"]:
        lines.append(f"{doc['id']:<5} {doc['lexical']:>7} ({doc['lexical_rank']})  {doc['dense']:>8.4f} "
                     f"({doc['dense_rank']})  {doc['fused']:.6f}  {doc['relevance']}")
    lines.append("pool (fused order): " + " ".join(report["pool"]))
    lines.append(("oracle order: " if p["oracle"] else "final order: ") + " ".join(report["ranking"]))
    lines.append(f"relevant in pool: {report['relevant_in_pool']} of {report['relevant']}")
    lines.append(f"Recall@{cutoff} = {report[f'recall@{cutoff}']:.4f}")
    lines.append(f"nDCG@{cutoff} = {report[f'nDCG@{cutoff}']:.4f}")
    lines.append(report["notice"])
    return "\n".join(lines) + "\n"
