"""The forms BEIR files really come in (issue 39): gzip-compressed JSONL, TREC-form qrels, a
header after blank lines, CR-only line ends, ids in another Unicode form, and queries without
text. Each is read with the same figures as the plain form, or refused with its real cause."""

import gzip
import hashlib
import json
import unicodedata

import pytest

from generator.core.options import EvaluationOptions
from generator.core.rows import RowSpec
from generator.storage.errors import InputError
from generator.core import textlines
from generator.evaluate.data import hash_inputs, load_dataset
from generator.claims.tracing.rederive import verify_results
from generator.evaluate.pipeline import empty_queries_warning, evaluate, write_outputs
from generator.core.results import read_results


def _figures(dataset):
    return dataset.documents, dataset.queries, dataset.qrels.scores, dataset.test_query_ids()


def _error(root) -> InputError:
    with pytest.raises(InputError) as raised:
        load_dataset(root)
    return raised.value


def _gzip(path):
    packed = path.with_name(path.name + ".gz")
    packed.write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    return packed


def _qrels_rows(root):
    """(query, document, score) of the BEIR qrels fixture, header dropped."""
    return [line.split("\t") for line in (root / "qrels" / "test.tsv").read_text().splitlines()[1:]]


# --- gzip -------------------------------------------------------------------------------------------


def test_gzip_corpus_and_queries_are_read_with_the_same_figures_and_named_in_the_manifest(tmp_path,
                                                                                        make_small_dataset):
    plain = load_dataset(make_small_dataset(tmp_path / "plain"))
    root = make_small_dataset(tmp_path / "packed")
    packed = [_gzip(root / "corpus.jsonl"), _gzip(root / "queries.jsonl")]
    dataset = load_dataset(root)
    assert _figures(dataset) == _figures(plain)
    assert set(dataset.input_hashes) == {"corpus.jsonl.gz", "queries.jsonl.gz", "qrels/test.tsv"}
    for path in packed:
        # The sha256 of the file as stored (compressed), not of its text.
        assert dataset.input_hashes[path.name] == {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                                                   "bytes": path.stat().st_size}
    assert dataset.input_hashes["qrels/test.tsv"] == plain.input_hashes["qrels/test.tsv"]
    assert hash_inputs(root) == dataset.input_hashes        # what `build` compares to tell a stale run


def test_a_plain_and_a_gzip_file_side_by_side_are_refused_as_ambiguous(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    (root / "corpus.jsonl.gz").write_bytes(gzip.compress((root / "corpus.jsonl").read_bytes()))
    error = _error(root)
    assert str(error) == (f"{root}: both corpus.jsonl and corpus.jsonl.gz are here; keep one (remove or move "
                          "the other) so that what a run read is known")


def test_a_gzip_line_is_bounded_as_a_plain_one(tmp_path, make_small_dataset, monkeypatch):
    monkeypatch.setattr(textlines, "MAX_LINE_BYTES", 200)
    root = make_small_dataset(tmp_path / "d")
    queries = root / "queries.jsonl"
    lines = queries.read_text().splitlines()
    lines[2] = json.dumps({"_id": "q2", "text": "x" * 300})
    queries.write_text("\n".join(lines) + "\n")
    error = _error(root)        # corpus lines are ~230 bytes: the corpus is refused first
    assert (error.path, error.line) == (str(root / "corpus.jsonl"), 1) and "line longer than" in error.reason
    monkeypatch.setattr(textlines, "MAX_LINE_BYTES", 250)
    _gzip(queries)
    error = _error(root)
    assert (error.path, error.line) == (str(root / "queries.jsonl.gz"), 3)
    assert error.reason == "line longer than 0 MiB (250 bytes), the most one line may hold"


def test_a_cut_off_or_fake_gzip_file_is_refused_with_the_real_cause(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    packed = _gzip(root / "corpus.jsonl")
    whole = packed.read_bytes()
    packed.write_bytes(whole[:len(whole) // 2])
    error = _error(root)
    assert error.path == str(packed) and error.reason.startswith("the gzip data ends early, after ")
    assert "cut-off download" in error.reason
    packed.write_bytes(gzip.decompress(whole))      # a plain file under a .gz name
    assert str(_error(root)) == f"{packed}: not a gzip file, though its name ends in .gz"


# --- TREC qrels -------------------------------------------------------------------------------------


@pytest.mark.parametrize("iteration, separator", [("0", " "), ("Q0", "\t"), ("0", "  ")])
def test_trec_qrels_give_the_same_qrels_and_the_manifest_says_trec(tmp_path, make_small_dataset, iteration,
                                                                   separator):
    plain = load_dataset(make_small_dataset(tmp_path / "plain"))
    root = make_small_dataset(tmp_path / "trec")
    qrels = root / "qrels" / "test.tsv"
    qrels.write_text("".join(separator.join([q, iteration, d, s]) + "\n" for q, d, s in _qrels_rows(root)))
    dataset = load_dataset(root)
    assert _figures(dataset) == _figures(plain)
    assert dataset.input_hashes["qrels/test.tsv"]["form"] == "trec"
    assert hash_inputs(root) == dataset.input_hashes
    assert "form" not in plain.input_hashes["qrels/test.tsv"]


def test_a_trec_qrels_line_of_another_shape_is_refused_with_its_line(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    qrels = root / "qrels" / "test.tsv"
    rows = [f"{q} 0 {d} {s}" for q, d, s in _qrels_rows(root)]
    rows[2] = rows[2].replace(" 0 ", " 7 ")
    qrels.write_text("\n".join(rows) + "\n")
    assert str(_error(root)) == f"{qrels}:3: iteration: expected 0 or Q0 (TREC's unused iteration column), found '7'"
    rows[2] = "q1\tdoc001\t1"
    qrels.write_text("\n".join(rows) + "\n")
    error = _error(root)
    assert (error.line, error.reason) == (3, "expected 4 whitespace-separated fields (query-id 0 corpus-id score), "
                                             "as the first line of this TREC-form qrels, found 3")


def test_a_qrels_file_under_another_name_is_refused_with_the_rename(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    (root / "qrels" / "test.tsv").rename(root / "qrels" / "test.txt")
    assert str(_error(root)) == (f"{root}: missing qrels/test.tsv; qrels/test.txt is here: rename it to "
                                 "qrels/test.tsv (BEIR's TSV and TREC's `qid 0 docid rel` are both read there)")


# --- a header after blank lines ---------------------------------------------------------------------


def test_a_header_after_blank_lines_is_read_as_a_header(tmp_path, make_small_dataset):
    plain = load_dataset(make_small_dataset(tmp_path / "plain"))
    root = make_small_dataset(tmp_path / "blank")
    qrels = root / "qrels" / "test.tsv"
    qrels.write_text("\n  \n" + qrels.read_text())
    assert _figures(load_dataset(root)) == _figures(plain)
    # Only the first non-blank line may be a header: one further down is a bad row.
    qrels.write_text(qrels.read_text() + "query-id\tcorpus-id\tscore\n")
    error = _error(root)
    assert (error.line, error.field, error.reason) == (16, "score", "not an integer: 'score'")


# --- look-alike ids ---------------------------------------------------------------------------------


def _with_document_id(root, doc_id_in_corpus, doc_id_in_qrels):
    corpus = root / "corpus.jsonl"
    lines = corpus.read_text().splitlines()
    lines[1] = json.dumps({"_id": doc_id_in_corpus, "text": "a document"})
    corpus.write_text("\n".join(lines) + "\n")
    qrels = root / "qrels" / "test.tsv"
    lines = qrels.read_text().splitlines()
    lines[2] = f"q0\t{doc_id_in_qrels}\t1"
    qrels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return qrels


def test_an_nfd_id_in_the_qrels_names_the_nfc_one_in_the_corpus_with_code_points(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    nfc, nfd = unicodedata.normalize("NFC", "café-1"), unicodedata.normalize("NFD", "café-1")
    assert nfc != nfd
    qrels = _with_document_id(root, nfc, nfd)
    assert str(_error(root)) == (
        f"{qrels}:3: corpus-id: unknown document {nfd!r} (not in corpus.jsonl), but {nfc!r} is: the same text "
        "in another Unicode normalisation (the qrels write U+0065 U+0301 where corpus.jsonl has U+00E9)")


def test_a_fullwidth_id_names_its_compatibility_form(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    qrels = _with_document_id(root, "doc-7", "ｄｏｃ-7")
    error = _error(root)
    assert error.path == str(qrels) and error.field == "corpus-id"
    assert error.reason.endswith("but 'doc-7' is: the same letters in a Unicode compatibility form (the qrels "
                                 "write U+FF44 U+FF4F U+FF43 where corpus.jsonl has U+0064 U+006F U+0063)")


def test_an_id_with_no_look_alike_keeps_the_plain_message(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    qrels = _with_document_id(root, "doc-7", "doc-8")
    assert str(_error(root)) == f"{qrels}:3: corpus-id: unknown document 'doc-8' (not in corpus.jsonl)"


# --- CR-only line ends ------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1024 * 1024, 7, 1])
def test_cr_only_line_ends_are_read_as_lines(tmp_path, make_small_dataset, monkeypatch, chunk):
    monkeypatch.setattr(textlines, "_CHUNK_BYTES", chunk)     # a CR at a chunk's edge included
    plain = load_dataset(make_small_dataset(tmp_path / "plain"))
    root = make_small_dataset(tmp_path / "mac")
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        path = root / name
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r"))
    assert _figures(load_dataset(root)) == _figures(plain)
    # The line numbers are the file's: a bad third record is named as line 3.
    corpus = root / "corpus.jsonl"
    records = corpus.read_bytes().split(b"\r")
    records[2] = b'{"_id": "doc002", "text": '
    corpus.write_bytes(b"\r".join(records))
    error = _error(root)
    assert (error.path, error.line) == (str(corpus), 3) and error.reason.startswith("not valid JSON")


def test_cr_only_gzip_and_crlf_files_give_the_same_figures(tmp_path, make_small_dataset, monkeypatch):
    monkeypatch.setattr(textlines, "_CHUNK_BYTES", 5)
    plain = load_dataset(make_small_dataset(tmp_path / "plain"))
    root = make_small_dataset(tmp_path / "mixed")
    corpus = root / "corpus.jsonl"
    corpus.write_bytes(corpus.read_bytes().replace(b"\n", b"\r"))
    _gzip(corpus)
    qrels = root / "qrels" / "test.tsv"
    qrels.write_bytes(qrels.read_bytes().replace(b"\n", b"\r\n"))
    assert _figures(load_dataset(root)) == _figures(plain)


# --- queries without text (issue 39 part 8) ---------------------------------------------------------


def test_queries_without_text_are_counted_warned_about_and_recorded(tmp_path, make_small_dataset):
    root = make_small_dataset(tmp_path / "d")
    queries = root / "queries.jsonl"
    lines = queries.read_text().splitlines()
    lines[1] = json.dumps({"_id": "q1", "text": ""})
    lines[4] = json.dumps({"_id": "q4", "text": " \t\u3000"})
    queries.write_text("\n".join(lines) + "\n")
    dataset = load_dataset(root)
    assert dataset.queries_without_text(dataset.test_query_ids()) == ["q1", "q4"]
    assert dataset.queries_without_text(["q0", "q4"]) == ["q4"]
    options = EvaluationOptions(data=root, outputs_dir=tmp_path / "outputs", cache_dir=tmp_path / "cache",
                                progress=False, bootstrap_resamples=100, query_set="all", skip_rerank=True,
                                rows=(RowSpec("bm25", "sparse"), RowSpec("bm25-k1", "sparse", k1=1.2)))
    log: list[str] = []
    evaluation = evaluate(options, log=log.append, dataset=dataset)
    warning = ("warning: 2 test queries have no text (q1, q4): they are evaluated as they are; a BM25 row ranks "
               "nothing for them (every metric 0) and a dense row ranks by the embedding of an empty text")
    assert warning in log
    assert evaluation.results["manifest"]["queries_without_text"] == 2
    # What the warning says of a BM25 row: it ranks nothing for them.
    assert evaluation.rankings["bm25"]["q1"] == [] and evaluation.rankings["bm25"]["q4"] == []
    assert evaluation.rankings["bm25"]["q0"]
    # The manifest's new count does not stop its figures re-deriving (what `readout check` runs).
    written = write_outputs(evaluation, options, log=log.append)
    assert read_results(written).model.manifest["queries_without_text"] == 2
    assert verify_results(read_results(written), written.parent) is None


def test_the_warning_names_one_query_or_the_first_five():
    assert empty_queries_warning(["q1"]).startswith("warning: 1 test query has no text (q1): it is evaluated as")
    many = empty_queries_warning([f"q{n}" for n in range(8)])
    assert "8 test queries have no text (q0, q1, q2, q3, q4, ... (3 more))" in many
