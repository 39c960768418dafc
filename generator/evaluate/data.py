"""Loading a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv), validated line by line.

Every problem is reported as one line naming the file, the line and the field, so a user can
open the file at that line and fix it; an id or a value the message repeats is cut to
MAX_ECHO_CHARS characters. Nothing here imports a model library.

What is read, strictly:

- every file is UTF-8; a byte that is not is reported with its line and byte offset. A UTF-8 byte
  order mark at the start of a file is dropped (editors on Windows write one).
- corpus.jsonl and queries.jsonl hold one JSON object per line (blank lines skipped) with string
  fields; JSON's own grammar only (`generator.core.results.strict_json`): `NaN`, `Infinity`, numbers
  of more than 100 digits and a nesting beyond the parser's recursion limit are refused.
- corpus.jsonl and queries.jsonl may be gzip-compressed instead (corpus.jsonl.gz, queries.jsonl.gz,
  as some BEIR mirrors ship them), read as a stream with the same line bound; both forms of one
  file in the folder is refused as ambiguous. The manifest's `inputs` name the file read, with the
  sha256 of its bytes as stored.
- a line ends with LF or CRLF; a file whose first line holds a CR and no LF (an old Mac file) is
  read with CR line ends.
- qrels/test.tsv holds `query-id<TAB>corpus-id<TAB>score`, an optional header first (the first
  non-blank line). It may be in TREC form instead, `qid 0 docid rel` separated by whitespace with
  no header: a first non-blank line of four fields whose second is `0` or `Q0` says so, every line
  is then read that way, and the qrels' `inputs` entry says `"form": "trec"`. A score is
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
import unicodedata
from pathlib import Path
from typing import Any, Iterable, Iterator

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.core.ids import code_points, id_form, id_problem
from generator.core.textlines import MAX_LINE_BYTES  # noqa: F401 - the loaders' bound, named here too
from generator.core.textlines import GZIP_SUFFIX, lines as _lines
from generator.core.options import SAMPLE_QUERY_COUNT
from generator.storage.fileio import sha256_file
from generator.core.results import clip, excerpt, strict_json

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels/test.tsv"
INPUT_FILES = (CORPUS_FILE, QUERIES_FILE, QRELS_FILE)
# corpus.jsonl and queries.jsonl may be stored gzip-compressed under this suffix.
COMPRESSIBLE_FILES = (CORPUS_FILE, QUERIES_FILE)
# Names a TREC qrels file goes by; read only as qrels/test.tsv (the refusal says to rename it).
OTHER_QRELS_NAMES = ("qrels/test.txt", "qrels/test.qrels")
# The qrels forms: BEIR's TSV (no `form` in the manifest entry) and TREC's `qid 0 docid rel`.
QRELS_BEIR = "beir"
QRELS_TREC = "trec"
_TREC_ITERATION = ("0", "Q0")
_QRELS_HEADER = ("query-id", "query_id", "qid")

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

    def queries_without_text(self, query_ids: Iterable[str]) -> list[str]:
        """Those of `query_ids` whose text is empty or only whitespace, in the order given."""
        return [query for query in query_ids if not self.queries.get(query, "").strip()]

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


def _check_id(value: str, path: Path, line_number: int, field: str) -> str:
    problem = id_problem(value)
    if problem is not None:
        raise InputError(problem, path=str(path), line=line_number, field=field)
    return value


def _records(path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Iterator[dict]:
    """Each record of a JSONL file, validated, one at a time (a corpus is never held as parsed
    JSON and as documents at once); a repeated `_id` is refused with the line of its first use."""
    first_line: dict[str, int] = {}
    spelled: dict[str, str] = {}   # each id by its NFC form: one spelling per id in a file
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
        other = spelled.setdefault(id_form(record_id), record_id)
        if other != record_id:
            raise InputError(f"id {excerpt(record_id, 40)} is id {excerpt(other, 40)} of line {first_line[other]} in "
                             f"another Unicode normalisation ({code_points(record_id)} against {code_points(other)}): "
                             "two ids that look the same are one id; spell it one way", path=str(path),
                             line=line_number, field="_id")
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


def _score(raw: str, path: Path, line_number: int, *, first_row: bool = False) -> int:
    match = _SCORE.fullmatch(raw)
    if match is None:
        shown = raw.strip()
        # Say why when Python's int() would have read it (`1_0` as 10, `١` as 1).
        hint = " (ASCII digits only, with an optional sign)" if _lenient_int(shown[:50]) else ""
        if first_row and shown.lower() == "score":
            hint = " (a header line starts with query-id)"
        raise InputError(f"not an integer: {excerpt(shown)}{hint}", path=str(path), line=line_number,
                         field="score")
    digits = match.group(1).lstrip("+-")
    if len(digits) > MAX_SCORE_DIGITS:
        raise InputError(f"score of {len(digits):,} digits; a relevance grade has at most {MAX_SCORE_DIGITS}",
                         path=str(path), line=line_number, field="score")
    return int(match.group(1))


def _is_trec_row(line: str) -> bool:
    fields = line.split()
    return len(fields) == 4 and fields[1] in _TREC_ITERATION


def qrels_form(path: Path) -> str:
    """QRELS_TREC when the first non-blank line is `qid 0 docid rel` (four whitespace-separated
    fields, the second `0` or `Q0`), else QRELS_BEIR (BEIR's TSV, a header allowed)."""
    for _, line in _lines(path):
        if line.strip():
            return QRELS_TREC if _is_trec_row(line) else QRELS_BEIR
    return QRELS_BEIR


def _form_or_beir(path: Path) -> str:
    """qrels_form, or QRELS_BEIR for a file whose first line cannot be read (hashing a broken
    file still says it changed; reading it is where it is refused)."""
    try:
        return qrels_form(path)
    except InputError:
        return QRELS_BEIR


def _look_alike(value: str, known: Iterable[str]) -> tuple[str, str] | None:
    """(the known id that is `value` in another Unicode form, how it differs), or None.

    NFC first (the same text composed or decomposed: é as U+00E9 or as e + U+0301), then NFKC
    (compatibility forms: a fullwidth ｄ, a ligature ﬁ). Only on the way to a refusal, so the
    index over the known ids is built then and never on a good file."""
    for form, why in (("NFC", "the same text in another Unicode normalisation"),
                      ("NFKC", "the same letters in a Unicode compatibility form")):
        target = unicodedata.normalize(form, value)
        match = next((other for other in known if other != value and unicodedata.normalize(form, other) == target),
                     None)
        if match is not None:
            return match, why
    return None


def _unknown(kind: str, value: str, known: Iterable[str], file_name: str) -> str:
    """`unknown document 'x' (not in corpus.jsonl)`, and when the file holds the same id in
    another Unicode form, which one and the code points that differ."""
    message = f"unknown {kind} {excerpt(value, 40)} (not in {file_name})"
    found = _look_alike(value, known)
    if found is None:
        return message
    other, why = found
    prefix = 0
    while prefix < min(len(value), len(other)) and value[prefix] == other[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < len(value) - prefix and suffix < len(other) - prefix
           and value[len(value) - 1 - suffix] == other[len(other) - 1 - suffix]):
        suffix += 1
    return (f"{message}, but {excerpt(other, 40)} is: {why} (the qrels write "
            f"{code_points(value[prefix:len(value) - suffix])} where {file_name} has "
            f"{code_points(other[prefix:len(other) - suffix])})")


def load_qrels(path: Path, known_queries: dict[str, str] | None = None,
               known_documents: set[str] | None = None, *, queries_name: str = QUERIES_FILE,
               corpus_name: str = CORPUS_FILE) -> Qrels:
    """BEIR's TSV (`query-id<TAB>corpus-id<TAB>score`, a header first allowed) or TREC's
    `qid 0 docid rel` (whitespace-separated, no header), told apart by the first non-blank line."""
    scores: dict[str, dict[str, int]] = {}
    rows = 0
    form: str | None = None
    for line_number, line in _lines(path):
        stripped = line.rstrip("\n").rstrip("\r")
        if not stripped.strip():
            continue
        first_row = form is None
        if form is None:
            form = QRELS_TREC if _is_trec_row(stripped) else QRELS_BEIR
            if form == QRELS_BEIR and stripped.split("\t")[0].strip().lower() in _QRELS_HEADER:
                continue
        if form == QRELS_TREC:
            fields = stripped.split()
            if len(fields) != 4:
                raise InputError(f"expected 4 whitespace-separated fields (query-id 0 corpus-id score), as "
                                 f"the first line of this TREC-form qrels, found {len(fields)}", path=str(path),
                                 line=line_number)
            if fields[1] not in _TREC_ITERATION:
                raise InputError(f"expected 0 or Q0 (TREC's unused iteration column), found {excerpt(fields[1])}",
                                 path=str(path), line=line_number, field="iteration")
            columns = [fields[0], fields[2], fields[3]]
        else:
            columns = stripped.split("\t")
            if len(columns) != 3:
                raise InputError(f"expected 3 tab-separated columns (query-id, corpus-id, score), "
                                 f"found {len(columns)}", path=str(path), line=line_number)
        query_id = _check_id(columns[0].strip(), path, line_number, "query-id")
        doc_id = _check_id(columns[1].strip(), path, line_number, "corpus-id")
        score = _score(columns[2], path, line_number, first_row=first_row)
        if known_queries is not None and query_id not in known_queries:
            raise InputError(_unknown("query", query_id, known_queries, queries_name), path=str(path),
                             line=line_number, field="query-id")
        if known_documents is not None and doc_id not in known_documents:
            raise InputError(_unknown("document", doc_id, known_documents, corpus_name), path=str(path),
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


def input_files(root: Path) -> dict[str, str]:
    """Which file is read for each of INPUT_FILES: the name itself, or for corpus.jsonl and
    queries.jsonl the .gz beside it when only that is there. Refused: a missing file, and a plain
    and a compressed form of one file side by side (which one the run read would be a guess)."""
    return {name: input_file(root, name) for name in INPUT_FILES}


def input_file(root: Path, name: str) -> str:
    """The file read for `name` in the dataset folder `root` (input_files), by its stored name."""
    plain = (root / name).is_file()
    packed = name in COMPRESSIBLE_FILES and (root / (name + GZIP_SUFFIX)).is_file()
    if plain and packed:
        raise InputError(f"both {name} and {name}{GZIP_SUFFIX} are here; keep one (remove or move the other) "
                         "so that what a run read is known", path=str(root))
    if not plain and not packed:
        other = next((o for o in OTHER_QRELS_NAMES if (root / o).is_file()), None) if name == QRELS_FILE else None
        if other is not None:
            raise InputError(f"missing {name}; {other} is here: rename it to {name} "
                             "(BEIR's TSV and TREC's `qid 0 docid rel` are both read there)", path=str(root))
        raise InputError(f"missing {name}; {missing_data_hint(root)}", path=str(root))
    return name if plain else name + GZIP_SUFFIX


def hash_inputs(root: Path) -> dict[str, dict[str, object]]:
    """The manifest's `inputs`: each file read, under its own name (corpus.jsonl.gz when that is
    what was read), with the sha256 and size of its bytes as stored; a TREC-form qrels says so
    with `"form": "trec"` (no `form`: BEIR's TSV)."""
    hashes: dict[str, dict[str, object]] = {}
    for name, stored in input_files(root).items():
        entry: dict[str, object] = {"sha256": sha256_file(root / stored), "bytes": (root / stored).stat().st_size}
        if name == QRELS_FILE and _form_or_beir(root / stored) == QRELS_TREC:
            entry["form"] = QRELS_TREC
        hashes[stored] = entry
    return hashes


def missing_data_hint(root: Path) -> str:
    """What to do about a dataset folder that is not there: SciFact's download for the SciFact
    review, and for any other project its own folder, never another project's dataset."""
    if "scifact" in root.as_posix().lower():
        return DOWNLOAD_HINT
    return ("put this project's BEIR folder there (corpus.jsonl, queries.jsonl, qrels/test.tsv): `data` in "
            "readout.yaml names it, relative to readout.yaml; or pass --data DIR")


def check_dataset_layout(root: Path) -> dict[str, str]:
    """The files to read (input_files), or the one-line refusal of a folder that is not there."""
    if not root.is_dir():
        raise InputError(f"dataset directory not found; {missing_data_hint(root)}", path=str(root))
    return input_files(root)


def load_dataset(root: str | Path) -> Dataset:
    root = Path(root)
    files = check_dataset_layout(root)
    documents = load_corpus(root / files[CORPUS_FILE])
    queries = load_queries(root / files[QUERIES_FILE])
    qrels = load_qrels(root / files[QRELS_FILE], known_queries=queries,
                       known_documents={document.doc_id for document in documents},
                       queries_name=files[QUERIES_FILE], corpus_name=files[CORPUS_FILE])
    return Dataset(root=root, documents=documents, queries=queries, qrels=qrels,
                   input_hashes=hash_inputs(root))
