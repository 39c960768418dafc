"""Datasets named by an ir_datasets identifier (`data: irds:beir/scifact/test`), exported once to
the BEIR layout every other stage reads.

ir_datasets is an optional extra (`pip install 'traced-readout[ir-datasets]'`) and downloads
what it has not cached, so this needs the network the first time. The export goes to the readout
cache (`<cache>/irds/<identifier>-<hash>/`): corpus.jsonl (`_id`, `title`, `text`),
queries.jsonl (`_id`, `text`) and qrels/test.tsv, written as one set with `source.json` (the
identifier and the ir_datasets version) last, so a half-written export is never read. From then
on the dataset is a BEIR folder like any other: hashed, fingerprinted ("custom dataset" unless
its bytes match a known one) and evaluated without ir_datasets. The manifest records the
identifier, not the cache path. An id the BEIR loader would refuse (`generator.core.ids`: with
whitespace, a control character, or too long) stops the export, naming the record and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from generator.core.data_source import PREFIX
from generator.core.ids import id_problem
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_bytes, sha256_file, write_set
from generator.storage.paths import display_home_path

SOURCE_FILE = "source.json"
EXTRA = "pip install 'traced-readout[ir-datasets]'"

EXPORTED_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")


def is_exported(target: Path, identifier: str) -> bool:
    """Whether the cache holds the whole export of `identifier`: source.json names it and every
    file still has the sha256 it was written with (a damaged export is exported again)."""
    try:
        source = json.loads((target / SOURCE_FILE).read_text(encoding="utf-8"))
        return (isinstance(source, dict) and source.get("identifier") == identifier
                and all(sha256_file(target / name) == source.get("sha256", {}).get(name) for name in EXPORTED_FILES))
    except (OSError, ValueError, AttributeError):
        return False


def ensure_exported(identifier: str, target: Path, log: Callable[[str], None] = print,
                    load: Callable[[str], Any] | None = None) -> Path:
    """The BEIR folder of `identifier`, exported first when the cache does not hold it."""
    if is_exported(target, identifier):
        return target
    field = "data"
    if load is None:
        try:
            import ir_datasets
        except ImportError:
            raise InputError(f"{PREFIX}{identifier} needs the ir_datasets package: {EXTRA} (or give a BEIR folder)",
                             field=field) from None
        load, version = ir_datasets.load, getattr(ir_datasets, "__version__", "unknown")
    else:
        version = "supplied loader"
    try:
        dataset = load(identifier)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {identifier!r} (see ir-datasets.com for identifiers)",
                         field=field) from None
    missing = [part for part in ("docs", "queries", "qrels") if not getattr(dataset, f"has_{part}")()]
    if missing:
        raise InputError(f"{PREFIX}{identifier} has no {' and no '.join(missing)}: choose an identifier with "
                         "documents, queries and relevance judgements (a test split, such as beir/scifact/test)",
                         field=field)
    log(f"data: exporting {PREFIX}{identifier} from ir_datasets to {display_home_path(target)} (once)")

    def checked(value: Any, records: str, number: int, id_field: str) -> str:
        return _exported_id(value, identifier, records, number, id_field)

    try:
        corpus = "".join(json.dumps({"_id": checked(doc.doc_id, "documents", number, "doc_id"),
                                     "title": str(getattr(doc, "title", "") or ""), "text": _text(doc)},
                                    ensure_ascii=False) + "\n"
                         for number, doc in enumerate(dataset.docs_iter(), start=1))
        queries = "".join(json.dumps({"_id": checked(query.query_id, "queries", number, "query_id"),
                                      "text": _text(query)}, ensure_ascii=False) + "\n"
                          for number, query in enumerate(dataset.queries_iter(), start=1))
        qrels = "query-id\tcorpus-id\tscore\n" + "".join(
            f"{checked(qrel.query_id, 'qrels', number, 'query_id')}\t{checked(qrel.doc_id, 'qrels', number, 'doc_id')}"
            f"\t{int(qrel.relevance)}\n" for number, qrel in enumerate(dataset.qrels_iter(), start=1))
    except InputError:
        raise
    except Exception as error:   # a download refused offline, a broken archive: ir_datasets' own words
        detail = " ".join(str(error).split())[:160]
        raise InputError(f"ir_datasets could not provide {identifier!r}: {type(error).__name__}: {detail}",
                         field=field) from None
    files = dict(zip(EXPORTED_FILES, (corpus.encode("utf-8"), queries.encode("utf-8"), qrels.encode("utf-8"))))
    source = {"identifier": identifier, "ir_datasets": version,
              "sha256": {name: sha256_bytes(data) for name, data in files.items()},
              "note": "exported by readout from ir_datasets; corpus, queries and qrels in the BEIR layout"}
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    write_set([*((target / name, data) for name, data in files.items()),
               (target / SOURCE_FILE, (json.dumps(source, indent=2, sort_keys=True) + "\n").encode("utf-8"))])
    return target


def _text(record: Any) -> str:
    """A record's text: its `text` field, or ir_datasets' own default_text() for other layouts."""
    text = getattr(record, "text", None)
    if text is None and hasattr(record, "default_text"):
        text = record.default_text()
    return str(text or "")


def _exported_id(value: Any, identifier: str, records: str, number: int, field: str) -> str:
    """`value` as the id it is exported as, or the InputError the BEIR loader would raise for it,
    naming the record (`documents record 3`) instead of a line of a file not yet written."""
    text = str(value)
    problem = id_problem(text)
    if problem is not None:
        raise InputError(f"{records} record {number:,}: {problem}", path=f"{PREFIX}{identifier}", field=field)
    return text
