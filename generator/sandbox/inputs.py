"""The L03 sandbox's inputs: a CC0 corpus, topics, graded qrels, a supplied opaque run and the
acquisition ledger, each validated line by line (one InputError naming file, line and field)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any, Sequence

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path
from generator.sandbox.bm25 import tokenize

INPUT_FILES = {
    "corpus": "corpus.jsonl",
    "topics": "topics.jsonl",
    "qrels": "qrels.tsv",
    "opaque_run": "opaque_run.json",
    "acquisition_ledger": "acquisition_ledger.csv",
}
CORPUS_FIELDS = ("doc_id", "title", "text", "source_type", "license")
LEDGER_STAGES = ("declared", "discovered", "authorised", "usable", "parsed", "admitted")


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
        return read_input(path, "sandbox input").decode("utf-8")
    except FileNotFoundError:
        raise InputError("input file is missing", path=display_path(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", path=display_path(path)) from None


def _read_jsonl(path: Path, fields: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    rows: list[tuple[int, dict[str, str]]] = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON ({error.msg})", path=display_path(path), line=number) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", path=display_path(path), line=number)
        for field in fields:
            if not isinstance(record.get(field), str) or not record[field].strip():
                raise InputError("missing or not a non-empty string", path=display_path(path), line=number,
                                 field=field)
        rows.append((number, record))
    if not rows:
        raise InputError("no records", path=display_path(path))
    return rows


def parse_corpus(path: Path) -> list[dict[str, str]]:
    records, seen = [], set()
    for number, record in _read_jsonl(path, CORPUS_FIELDS):
        if record["doc_id"] in seen:
            raise InputError(f"duplicate doc_id {record['doc_id']!r}", path=display_path(path), line=number,
                             field="doc_id")
        seen.add(record["doc_id"])
        records.append({field: record[field] for field in CORPUS_FIELDS})
    return records


def parse_topics(path: Path) -> list[dict[str, str]]:
    topics, seen = [], set()
    for number, record in _read_jsonl(path, ("topic_id", "query")):
        if record["topic_id"] in seen:
            raise InputError(f"duplicate topic_id {record['topic_id']!r}", path=display_path(path), line=number,
                             field="topic_id")
        if not tokenize(record["query"]):
            raise InputError("query has no tokens", path=display_path(path), line=number, field="query")
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
                             path=display_path(path), line=number)
        topic_id, _, doc_id, grade_text = parts
        if topic_id not in topic_ids:
            raise InputError(f"unknown topic {topic_id!r}", path=display_path(path), line=number, field="topic_id")
        if doc_id not in doc_ids:
            raise InputError(f"unknown document {doc_id!r}", path=display_path(path), line=number, field="doc_id")
        if not grade_text.isdigit():
            raise InputError(f"must be a non-negative integer, got {grade_text!r}", path=display_path(path),
                             line=number, field="grade")
        if doc_id in qrels[topic_id]:
            raise InputError(f"duplicate judgement for {topic_id} {doc_id}", path=display_path(path), line=number)
        qrels[topic_id][doc_id] = int(grade_text)
    return qrels


def parse_opaque_run(path: Path, topic_ids: set[str],
                     doc_ids: set[str]) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """`{"metadata": {"model_identity": ...}, "scores": [{"topic_id", "doc_id", "score"}, ...]}`."""
    text = _read_text(path)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=display_path(path), line=error.lineno) from None
    if not isinstance(payload, dict):
        raise InputError("expected a JSON object", path=display_path(path), line=1)
    metadata = payload.get("metadata")
    if not isinstance(metadata, dict) or "model_identity" not in metadata:
        raise InputError("missing: the supplied run must declare its model identity (\"none\" if unknown)",
                         path=display_path(path), field="metadata.model_identity")
    rows = payload.get("scores")
    if not isinstance(rows, list) or not rows:
        raise InputError("missing or empty list", path=display_path(path), field="scores")
    scores: dict[str, dict[str, float]] = {topic_id: {} for topic_id in sorted(topic_ids)}
    for index, row in enumerate(rows):
        field = f"scores[{index}]"
        if not isinstance(row, dict):
            raise InputError("expected an object", path=display_path(path), field=field)
        if row.get("topic_id") not in topic_ids:
            raise InputError(f"unknown topic {row.get('topic_id')!r}", path=display_path(path), field=f"{field}.topic_id")
        if row.get("doc_id") not in doc_ids:
            raise InputError(f"unknown document {row.get('doc_id')!r}", path=display_path(path), field=f"{field}.doc_id")
        score = row.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InputError(f"must be a finite number, got {score!r}", path=display_path(path), field=f"{field}.score")
        if row["doc_id"] in scores[row["topic_id"]]:
            raise InputError(f"duplicate score for {row['topic_id']} {row['doc_id']}", path=display_path(path), field=field)
        scores[row["topic_id"]][row["doc_id"]] = float(score)
    return scores, metadata


def parse_acquisition_ledger(path: Path) -> list[dict[str, str]]:
    """CSV with locator_id, locator, one yes/no column per stage, doc_id, snapshot, note."""
    reader = csv.DictReader(io.StringIO(_read_text(path)))
    required = ("locator_id", "locator", *LEDGER_STAGES, "doc_id", "snapshot", "note")
    missing = [name for name in required if name not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", path=display_path(path), line=1)
    rows = []
    for row in reader:
        number = reader.line_num
        for stage in LEDGER_STAGES:
            if row[stage] not in ("yes", "no"):
                raise InputError(f"must be yes or no, got {row[stage]!r}", path=display_path(path), line=number,
                                 field=stage)
        flags = [row[stage] == "yes" for stage in LEDGER_STAGES]
        for earlier, later, stage in zip(flags, flags[1:], LEDGER_STAGES[1:]):
            if later and not earlier:
                raise InputError("a locator cannot pass a stage it never reached", path=display_path(path),
                                 line=number, field=stage)
        if (row["admitted"] == "yes") != bool(row["doc_id"].strip()):
            raise InputError("an admitted locator needs a doc_id, and only an admitted one",
                             path=display_path(path), line=number, field="doc_id")
        rows.append(dict(row))
    if not rows:
        raise InputError("no locators", path=display_path(path))
    return rows


def load_inputs(data_dir: Path) -> SandboxInputs:
    """Read and cross-check the five inputs; every problem is one InputError naming file and line."""
    paths = {name: data_dir / file_name for name, file_name in INPUT_FILES.items()}
    corpus = parse_corpus(paths["corpus"])
    topics = parse_topics(paths["topics"])
    doc_ids = {record["doc_id"] for record in corpus}
    topic_ids = {topic["topic_id"] for topic in topics}
    qrels = parse_qrels(paths["qrels"], topic_ids, doc_ids)
    opaque_scores, opaque_metadata = parse_opaque_run(paths["opaque_run"], topic_ids, doc_ids)
    ledger = parse_acquisition_ledger(paths["acquisition_ledger"])
    admitted = {row["doc_id"] for row in ledger if row["admitted"] == "yes"}
    if admitted != doc_ids:
        raise InputError(f"admitted documents {sorted(admitted)} differ from the corpus {sorted(doc_ids)}",
                         path=display_path(paths["acquisition_ledger"]), field="doc_id")
    return SandboxInputs(corpus, topics, qrels, opaque_scores, opaque_metadata, ledger)


def hash_inputs(project_root: Path, data_dir: Path) -> dict[str, dict[str, Any]]:
    """sha256 and size of every input, named relative to the project when inside it."""
    hashed = {}
    for file_name in INPUT_FILES.values():
        path = data_dir / file_name
        try:
            name = path.relative_to(project_root).as_posix()
        except ValueError:
            name = str(path)
        hashed[name] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    return hashed
