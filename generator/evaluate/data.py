"""Loading a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv), validated line by line.

Every problem is reported as one line naming the file, the line and the field, so a user can
open the file at that line and fix it; an id or a value the message repeats is cut to
MAX_ECHO_CHARS characters. Nothing here imports a model library.

What is read, strictly:

- every file is UTF-8; a byte that is not is reported with its line and byte offset. A UTF-8 byte
  order mark at the start of a file is dropped (editors on Windows write one).
- corpus.jsonl and queries.jsonl hold one JSON object per line (blank lines skipped) with string
  fields; JSON's own grammar only (`generator.results.strict_json`): `NaN`, `Infinity`, numbers
  of more than 100 digits and a nesting beyond the parser's recursion limit are refused.
- qrels/test.tsv holds `query-id<TAB>corpus-id<TAB>score`, an optional header first. A score is
  ASCII digits with an optional sign (`+1` is read as 1, as BEIR's int() reads it), spaces around
  it allowed, at most MAX_SCORE_DIGITS digits. `1_0`, `1.0`, `1e0` and digits of other scripts
  (`١`) are refused: Python's int() reads `1_0` as 10 and `١` as 1, and a grade is not
  something to guess.
- a negative score is kept and means "judged not relevant", as in BEIR (and trec_eval): only a
  score > 0 makes a document relevant. How many there were is `Dataset.negative_judgements`, so a
  run's manifest can say so.
- every id (`_id` of both JSONL files, query-id and corpus-id of the qrels, spaces around a qrels
  column dropped) is what `generator.core.ids` allows: printable, no whitespace, at most 1,000
  characters, so every run line written from it has six fields.
- a line holds at most MAX_LINE_BYTES bytes, checked while it is read: a 50 MB line (a whole
  corpus without newlines) is refused after reading 16 MiB, not held. The corpus is read one record
  at a time into documents, so a document costs its text and under 300 bytes (a million documents
  of two words: 0.3 GB at peak, measured), never a second copy of the parsed file.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from generator.errors import InputError
from generator.core.ids import id_problem
from generator.core.options import SAMPLE_QUERY_COUNT
from generator.fileio import sha256_file
from generator.results import clip, excerpt, strict_json

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

# Published datasets, recognised by the sha256 of their files (add others as they are used).
KNOWN_DATASETS = {"BEIR SciFact test split": SCIFACT_SHA256}
CUSTOM_DATASET = "custom dataset"

# BEIR grades are small integers (SciFact: 1); nine digits leave room for any real grade scale.
MAX_SCORE_DIGITS = 9
_SCORE = re.compile(r" *([+-]?[0-9]+) *")
_BOM = b"\xef\xbb\xbf"
# The longest documents of real collections (a TREC news article, a whole web page) are a few
# hundred kilobytes; a line of more than 16 MiB is a file without newlines or not a corpus at all,
# and reading it whole (then decoding and parsing it: three copies) is what must not happen.
MAX_LINE_BYTES = 16 * 1024 * 1024

# Short enough that the error line, with a long dataset path before it, stays within the CLI's
# 300-character line.
DOWNLOAD_HINT = (
    "download BEIR SciFact (scifact.zip, 2.7 MB, from https://github.com/beir-cellar/beir) and unpack it "
    "to hold corpus.jsonl, queries.jsonl and qrels/test.tsv, or pass --data DIR"
)


# Slots: a corpus of a million short documents holds a million of these.
@dataclass(frozen=True, slots=True)
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

    @property
    def negative_judgements(self) -> int:
        """Judgements with a score below 0: kept, and read as not relevant (BEIR's meaning)."""
        return sum(1 for judged in self.scores.values() for score in judged.values() if score < 0)


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

    @property
    def negative_judgements(self) -> int:
        """How many qrels lines had a negative score (counted as not relevant, as BEIR does)."""
        return self.qrels.negative_judgements

    def test_query_ids(self) -> list[str]:
        return self.qrels.query_ids_in_file_order()

    def select_queries(self, query_set: str, *, size: int = SAMPLE_QUERY_COUNT, order: str = "qrels",
                       seed: int = 0) -> list[str]:
        """'all' is every test query, in qrels-file order. 'sample' is `size` of them: the first in
        qrels order, or (order 'seeded') a draw with `seed`, kept in qrels order so the sample
        reads the same way as the file."""
        ordered = self.test_query_ids()
        if query_set == "all":
            return ordered
        if query_set == "sample":
            if order == "seeded":
                chosen = set(random.Random(seed).sample(ordered, min(size, len(ordered))))
                return [query for query in ordered if query in chosen]
            return ordered[:size]
        raise InputError(f"unknown query set {excerpt(query_set)}; choose 'sample' or 'all'", field="--queries")

    def is_reproduction_of_scifact(self) -> tuple[bool, list[str]]:
        """Whether every input hashes to the published SciFact files; lists the ones that differ."""
        differing = [name for name, expected in SCIFACT_SHA256.items()
                     if self.input_hashes.get(name, {}).get("sha256") != expected]
        return (not differing, differing)

    def identify(self) -> dict[str, Any]:
        """Which published dataset these inputs are, by their sha256 (KNOWN_DATASETS): a
        reproduction when every file matches one, "not a reproduction" of it when only some do
        (a changed qrels file), and a custom dataset when none does."""
        for name, published in KNOWN_DATASETS.items():
            differing = [file for file, expected in published.items()
                         if self.input_hashes.get(file, {}).get("sha256") != expected]
            if len(differing) < len(published):
                return {"of": name, "is_reproduction": not differing, "differing_inputs": differing}
        return {"of": CUSTOM_DATASET, "is_reproduction": False, "differing_inputs": []}


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 file, a leading byte order mark dropped.

    Decoded line by line, so a bad byte is reported with its line and its byte offset in the file
    and a large corpus is never held twice; a line longer than MAX_LINE_BYTES is refused once that
    many bytes of it are read.
    """
    offset = 0
    try:
        with open(path, "rb") as handle:
            line_number = 0
            while raw := handle.readline(MAX_LINE_BYTES + 1):
                line_number += 1
                if len(raw) - (1 if raw.endswith(b"\n") else 0) > MAX_LINE_BYTES:
                    raise InputError(f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB "
                                     f"({MAX_LINE_BYTES:,} bytes), the most one line may hold",
                                     path=str(path), line=line_number)
                start = 0
                if line_number == 1 and raw.startswith(_BOM):
                    start = len(_BOM)
                try:
                    text = raw[start:].decode("utf-8")
                except UnicodeDecodeError as error:
                    raise InputError(f"not UTF-8 text (byte {offset + start + error.start:,} of the file, "
                                     f"0x{raw[start + error.start]:02x})", path=str(path),
                                     line=line_number) from None
                offset += len(raw)
                yield line_number, text
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path=str(path)) from None


def _check_id(value: str, path: Path, line_number: int, field: str) -> str:
    problem = id_problem(value)
    if problem is not None:
        raise InputError(problem, path=str(path), line=line_number, field=field)
    return value


def _records(path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Iterator[dict]:
    """Each record of a JSONL file, validated, one at a time (a corpus is never held as parsed
    JSON and as documents at once); a repeated `_id` is refused with the line of its first use."""
    first_line: dict[str, int] = {}
    for line_number, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = strict_json(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON: {error.msg} (column {error.colno})",
                             path=str(path), line=line_number) from None
        except ValueError as error:
            # NaN, Infinity, a number of hundreds of digits, a nesting beyond the recursion limit.
            raise InputError(f"not valid JSON: {clip(str(error), 120)}", path=str(path),
                             line=line_number) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", path=str(path), line=line_number)
        for field in required:
            if field not in record:
                raise InputError("missing field", path=str(path), line=line_number, field=field)
        for field in required + optional:
            if field in record and not isinstance(record[field], str):
                raise InputError(f"expected a string, found {type(record[field]).__name__}",
                                 path=str(path), line=line_number, field=field)
        record_id = _check_id(record["_id"], path, line_number, "_id")
        first = first_line.setdefault(record_id, line_number)
        if first != line_number:
            raise InputError(f"duplicate id {excerpt(record_id)} (first on line {first})",
                             path=str(path), line=line_number, field="_id")
        yield record
    if not first_line:
        raise InputError("file is empty: no records", path=str(path))


def load_corpus(path: Path) -> list[Document]:
    return [Document(doc_id=record["_id"], title=record.get("title", "") or "", text=record["text"])
            for record in _records(path, required=("_id", "text"), optional=("title",))]


def load_queries(path: Path) -> dict[str, str]:
    return {record["_id"]: record["text"] for record in _records(path, required=("_id", "text"))}


def _lenient_int(text: str) -> bool:
    try:
        int(text)
        return True
    except ValueError:
        return False


def _score(raw: str, path: Path, line_number: int) -> int:
    match = _SCORE.fullmatch(raw)
    if match is None:
        shown = raw.strip()
        # Say why when Python's int() would have read it (`1_0` as 10, `١` as 1).
        hint = " (ASCII digits only, with an optional sign)" if _lenient_int(shown[:50]) else ""
        if line_number == 1 and shown.lower() == "score":
            hint = " (a header line starts with query-id)"
        raise InputError(f"not an integer: {excerpt(shown)}{hint}", path=str(path), line=line_number,
                         field="score")
    digits = match.group(1).lstrip("+-")
    if len(digits) > MAX_SCORE_DIGITS:
        raise InputError(f"score of {len(digits):,} digits; a relevance grade has at most {MAX_SCORE_DIGITS}",
                         path=str(path), line=line_number, field="score")
    return int(match.group(1))


def load_qrels(path: Path, known_queries: dict[str, str] | None = None,
               known_documents: set[str] | None = None) -> Qrels:
    scores: dict[str, dict[str, int]] = {}
    rows = 0
    for line_number, line in _lines(path):
        stripped = line.rstrip("\n").rstrip("\r")
        if not stripped.strip():
            continue
        columns = stripped.split("\t")
        if line_number == 1 and columns[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(columns) != 3:
            raise InputError(f"expected 3 tab-separated columns (query-id, corpus-id, score), "
                             f"found {len(columns)}", path=str(path), line=line_number)
        query_id = _check_id(columns[0].strip(), path, line_number, "query-id")
        doc_id = _check_id(columns[1].strip(), path, line_number, "corpus-id")
        score = _score(columns[2], path, line_number)
        if known_queries is not None and query_id not in known_queries:
            raise InputError(f"unknown query {excerpt(query_id)} (not in queries.jsonl)", path=str(path),
                             line=line_number, field="query-id")
        if known_documents is not None and doc_id not in known_documents:
            raise InputError(f"unknown document {excerpt(doc_id)} (not in corpus.jsonl)", path=str(path),
                             line=line_number, field="corpus-id")
        judged = scores.setdefault(query_id, {})
        if doc_id in judged:
            raise InputError(f"duplicate judgement for query {excerpt(query_id)} and document {excerpt(doc_id)}",
                             path=str(path), line=line_number, field="corpus-id")
        judged[doc_id] = score
        rows += 1
    if rows == 0:
        raise InputError("file is empty: no judgements", path=str(path))
    return Qrels(scores=scores)


def hash_inputs(root: Path) -> dict[str, dict[str, object]]:
    return {name: {"sha256": sha256_file(root / name), "bytes": (root / name).stat().st_size}
            for name in INPUT_FILES}


def missing_data_hint(root: Path) -> str:
    """What to do about a dataset folder that is not there: SciFact's download for the SciFact
    review, and for any other project its own folder, never another project's dataset."""
    if "scifact" in root.as_posix().lower():
        return DOWNLOAD_HINT
    return ("put this project's BEIR folder there (corpus.jsonl, queries.jsonl, qrels/test.tsv): `data` in "
            "readout.yaml names it, relative to readout.yaml; or pass --data DIR")


def check_dataset_layout(root: Path) -> None:
    if not root.is_dir():
        raise InputError(f"dataset directory not found; {missing_data_hint(root)}", path=str(root))
    for name in INPUT_FILES:
        if not (root / name).is_file():
            raise InputError(f"missing {name}; {missing_data_hint(root)}", path=str(root))


def load_dataset(root: str | Path) -> Dataset:
    root = Path(root)
    check_dataset_layout(root)
    documents = load_corpus(root / CORPUS_FILE)
    queries = load_queries(root / QUERIES_FILE)
    qrels = load_qrels(root / QRELS_FILE, known_queries=queries,
                       known_documents={document.doc_id for document in documents})
    return Dataset(root=root, documents=documents, queries=queries, qrels=qrels,
                   input_hashes=hash_inputs(root))
