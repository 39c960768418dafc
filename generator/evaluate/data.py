"""Loading a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv), validated line by line.

Every problem is reported as one line naming the file, the line and the field, so a user can
open the file at that line and fix it. Nothing here imports a model library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from generator.errors import InputError
from generator.evaluate.options import SAMPLE_QUERY_COUNT
from generator.fileio import sha256_file

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels/test.tsv"
INPUT_FILES = (CORPUS_FILE, QUERIES_FILE, QRELS_FILE)

# SHA-256 of the public BEIR SciFact files (BEIR's scifact.zip); a run is a reproduction of the
# published readout only when its inputs hash to these.
SCIFACT_SHA256 = {
    CORPUS_FILE: "ae39e2b331413acd6c58c262e3d2c1bf2b4afb5407ccfa6d06dd3f06e5da1f28",
    QUERIES_FILE: "21a70458954ee3ada1875570da4835dc4bf5619f2e2e38c14a665e97e9059f9d",
    QRELS_FILE: "5602d9f31c96d309a906692e1b722a9acfc4138c5d52e06d47bbb89a9c4ab7c3",
}

DOWNLOAD_HINT = (
    "download BEIR SciFact (scifact.zip, about 2.7 MB, from the BEIR datasets page: "
    "https://github.com/beir-cellar/beir) and unpack it so that the directory holds "
    "corpus.jsonl, queries.jsonl and qrels/test.tsv, or pass --data DIR"
)


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str

    @property
    def retrieval_text(self) -> str:
        """What every row retrieves over: title + " " + text, stripped."""
        return (self.title + " " + self.text).strip()


@dataclass(frozen=True)
class Qrels:
    """Relevance judgements: query id -> document id -> integer score, in file order."""

    scores: dict[str, dict[str, int]]

    def query_ids_in_file_order(self) -> list[str]:
        return list(self.scores)

    def relevant(self, query_id: str) -> set[str]:
        """A query's relevant set: its judged documents with score > 0."""
        return {doc_id for doc_id, score in self.scores.get(query_id, {}).items() if score > 0}


@dataclass(frozen=True)
class Dataset:
    root: Path
    documents: list[Document]
    queries: dict[str, str]
    qrels: Qrels
    input_hashes: dict[str, dict[str, object]]

    @property
    def document_ids(self) -> list[str]:
        return [document.doc_id for document in self.documents]

    def test_query_ids(self) -> list[str]:
        return self.qrels.query_ids_in_file_order()

    def select_queries(self, query_set: str) -> list[str]:
        """'sample' is the first 20 test queries in qrels order; 'all' is every test query."""
        ordered = self.test_query_ids()
        if query_set == "sample":
            return ordered[:SAMPLE_QUERY_COUNT]
        if query_set == "all":
            return ordered
        raise InputError(f"unknown query set {query_set!r}; choose 'sample' or 'all'", field="--queries")

    def is_reproduction_of_scifact(self) -> tuple[bool, list[str]]:
        """Whether every input hashes to the published SciFact files; lists the ones that differ."""
        differing = [name for name, expected in SCIFACT_SHA256.items()
                     if self.input_hashes.get(name, {}).get("sha256") != expected]
        return (not differing, differing)


def _read_jsonl(path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> list[tuple[int, dict]]:
    records: list[tuple[int, dict]] = []
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"not valid JSON ({error.msg} at column {error.colno})",
                                 path=str(path), line=line_number) from None
            if not isinstance(record, dict):
                raise InputError("expected a JSON object", path=str(path), line=line_number)
            for field in required:
                if field not in record:
                    raise InputError("missing field", path=str(path), line=line_number, field=field)
            for field in required + optional:
                if field in record and not isinstance(record[field], str):
                    raise InputError(f"expected a string, found {type(record[field]).__name__}",
                                     path=str(path), line=line_number, field=field)
            if not record["_id"].strip():
                raise InputError("empty id", path=str(path), line=line_number, field="_id")
            records.append((line_number, record))
    if not records:
        raise InputError("file is empty: no records", path=str(path))
    return records


def _index_unique(path: Path, records: list[tuple[int, dict]]) -> dict[str, int]:
    first_line: dict[str, int] = {}
    for line_number, record in records:
        record_id = record["_id"]
        if record_id in first_line:
            raise InputError(f"duplicate id {record_id!r} (first on line {first_line[record_id]})",
                             path=str(path), line=line_number, field="_id")
        first_line[record_id] = line_number
    return first_line


def load_corpus(path: Path) -> list[Document]:
    records = _read_jsonl(path, required=("_id", "text"), optional=("title",))
    _index_unique(path, records)
    return [Document(doc_id=record["_id"], title=record.get("title", "") or "", text=record["text"])
            for _, record in records]


def load_queries(path: Path) -> dict[str, str]:
    records = _read_jsonl(path, required=("_id", "text"))
    _index_unique(path, records)
    return {record["_id"]: record["text"] for _, record in records}


def load_qrels(path: Path, known_queries: dict[str, str] | None = None,
               known_documents: set[str] | None = None) -> Qrels:
    scores: dict[str, dict[str, int]] = {}
    rows = 0
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            stripped = line.rstrip("\n").rstrip("\r")
            if not stripped.strip():
                continue
            columns = stripped.split("\t")
            if line_number == 1 and columns[0].strip().lower() in ("query-id", "query_id", "qid"):
                continue
            if len(columns) != 3:
                raise InputError(f"expected 3 tab-separated columns (query-id, corpus-id, score), "
                                 f"found {len(columns)}", path=str(path), line=line_number)
            query_id, doc_id, raw_score = (column.strip() for column in columns)
            try:
                score = int(raw_score)
            except ValueError:
                raise InputError(f"not an integer: {raw_score!r}", path=str(path), line=line_number,
                                 field="score") from None
            if known_queries is not None and query_id not in known_queries:
                raise InputError(f"unknown query {query_id!r} (not in queries.jsonl)", path=str(path),
                                 line=line_number, field="query-id")
            if known_documents is not None and doc_id not in known_documents:
                raise InputError(f"unknown document {doc_id!r} (not in corpus.jsonl)", path=str(path),
                                 line=line_number, field="corpus-id")
            judged = scores.setdefault(query_id, {})
            if doc_id in judged:
                raise InputError(f"duplicate judgement for query {query_id!r} and document {doc_id!r}",
                                 path=str(path), line=line_number, field="corpus-id")
            judged[doc_id] = score
            rows += 1
    if rows == 0:
        raise InputError("file is empty: no judgements", path=str(path))
    return Qrels(scores=scores)


def hash_inputs(root: Path) -> dict[str, dict[str, object]]:
    return {name: {"sha256": sha256_file(root / name), "bytes": (root / name).stat().st_size}
            for name in INPUT_FILES}


def check_dataset_layout(root: Path) -> None:
    if not root.is_dir():
        raise InputError(f"dataset directory not found; {DOWNLOAD_HINT}", path=str(root))
    for name in INPUT_FILES:
        if not (root / name).is_file():
            raise InputError(f"missing {name}; {DOWNLOAD_HINT}", path=str(root))


def load_dataset(root: str | Path) -> Dataset:
    root = Path(root)
    check_dataset_layout(root)
    documents = load_corpus(root / CORPUS_FILE)
    queries = load_queries(root / QUERIES_FILE)
    qrels = load_qrels(root / QRELS_FILE, known_queries=queries,
                       known_documents={document.doc_id for document in documents})
    return Dataset(root=root, documents=documents, queries=queries, qrels=qrels,
                   input_hashes=hash_inputs(root))
