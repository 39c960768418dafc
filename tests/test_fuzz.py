"""Property-based fuzz (issue 14): mutated inputs never crash a reader.

Small valid inputs (a BEIR folder; the fixture project's ledger, readout.yaml, sealed results file,
design freeze and history) are mutated: bytes flipped, files truncated, lines inserted, deleted or
replaced, values swapped for hostile ones (NaN, 5,000-digit numbers, lone surrogates, aliases,
deep nesting, byte order marks, non-UTF-8 bytes, enormous ids). Then:

- the BEIR loader (called directly: an evaluation loads models) returns a dataset or raises
  `InputError` with a one-line message of at most 300 characters, and nothing else;
- `readout check PROJECT --no-record` exits 0, 1 or 2 with at most one stderr line of at most 300
  characters and no traceback. For the ledger and readout.yaml it also runs with `--debug`,
  so an exception that is not a `ReadoutError` prints its traceback and fails the property.

The results, freeze and history properties hold the CLI contract only by default: the re-derivation
of a forged-seal results file (generator/claims/rederive.py) and the freeze and history readers
(generator/claims/freeze.py) still end in an internal error on some inputs. READOUT_FUZZ_STRICT=1
holds them to the strict property too; READOUT_FUZZ_EXAMPLES=N runs N examples per property
instead of the default (the whole file then takes well under a minute).

No deadline and no example database, and Hypothesis's cache lives in the temporary directory, so
nothing is written into the repository; a failure prints the smallest mutation that reproduces it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from generator.cli import main
from generator.errors import InputError
from generator.evaluate.data import load_dataset
from tests.conftest import _make_project, write_beir

# Hypothesis caches what it learns (constants from the source) under ./.hypothesis even with no
# example database: keep it out of the working tree.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "readout-hypothesis")

LONGEST_LINE = 300
EXAMPLES = int(os.environ.get("READOUT_FUZZ_EXAMPLES", "0"))
STRICT = os.environ.get("READOUT_FUZZ_STRICT", "").strip() not in ("", "0")
FUZZ = settings(max_examples=EXAMPLES or 150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
FUZZ_CLI = settings(FUZZ, max_examples=EXAMPLES or 60)


# --- mutations -------------------------------------------------------------------------------------

HOSTILE_TEXT = [
    "", " ", "\t", "\ufeff", "\x00", "\u2028", "\u0661", "\uff11", "1_0", "+1", "-1", "1e999", "NaN", "Infinity",
    "-Infinity", "1" * 5000, "x" * 20_000, "[" * 3000, "{" * 3000, "yes", "no", "~", "null", "&a", "*a", "!!str",
    "!!python/object/apply:os.system ['true']", "{h:2000000000}", "{h:.999f}", "{h!r}", "{{", "}}", "{0}",
    "<script>", "é", "\udcff",
]
HOSTILE_BYTES = [b"\xff", b"\xef\xbb\xbf", b"\xc3", b"\x80\x80", b"\r", b"\r\n", b"\n\n", b"\t\t"]

text_piece = st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=30))
byte_piece = st.one_of(st.sampled_from(HOSTILE_BYTES), st.binary(max_size=12),
                       text_piece.map(lambda text: text.encode("utf-8", "surrogatepass")))

# Literals no Python value prints as (a 5,000-digit integer cannot even be repr'd): a marker string
# that `_dumps` swaps for the literal.
RAW_LITERALS = {"<5000 digits>": "7" * 5000, "<150 digits>": "-" + "3" * 150, "<deep>": "[" * 2000 + "]" * 2000,
                "<1e999>": "1e999", "<-0>": "-0", "<nan>": "NaN", "<lone surrogate>": '"\\udcff"'}
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                        st.text(max_size=20), st.sampled_from(sorted(RAW_LITERALS)), st.just("x" * 10_000))
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


def _dumps(value) -> str:
    """JSON as Python writes it (NaN and Infinity included), the raw literals swapped in."""
    text = json.dumps(value, allow_nan=True)
    for marker, literal in RAW_LITERALS.items():
        text = text.replace(json.dumps(marker), literal)
    return text


@st.composite
def byte_mutation(draw, data: bytes, lines: st.SearchStrategy[bytes]) -> bytes:
    """`data` after one to three edits: a byte flipped, a cut, a line inserted, deleted or replaced."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "replace", "splice"]))
        rows = data.split(b"\n")
        if kind == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
        elif kind == "truncate":
            data = data[:draw(st.integers(0, len(data)))]
        elif kind == "insert":
            at = draw(st.integers(0, len(rows)))
            data = b"\n".join(rows[:at] + [draw(lines)] + rows[at:])
        elif kind == "delete" and rows:
            at = draw(st.integers(0, len(rows) - 1))
            data = b"\n".join(rows[:at] + rows[at + 1:])
        elif kind == "replace" and rows:
            at = draw(st.integers(0, len(rows) - 1))
            data = b"\n".join(rows[:at] + [draw(lines)] + rows[at + 1:])
        elif kind == "splice":
            at = draw(st.integers(0, len(data)))
            data = data[:at] + draw(byte_piece) + data[at:]
    return data


# --- the BEIR loader -------------------------------------------------------------------------------


def _beir_files() -> dict[str, bytes]:
    corpus = [{"_id": f"d{i}", "title": f"title {i}", "text": f"text of document {i}"} for i in range(4)]
    queries = [{"_id": f"q{j}", "text": f"query {j}"} for j in range(2)]
    qrels = [("q0", "d0", 1), ("q0", "d1", 2), ("q1", "d2", 1), ("q1", "d3", 0)]
    with tempfile.TemporaryDirectory() as folder:
        root = write_beir(Path(folder), corpus, queries, qrels)
        return {name: (root / name).read_bytes() for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")}


BEIR = _beir_files()
IDS = ["d0", "d1", "d2", "d3", "q0", "q1", "", " d0", "d0 ", "x" * 5000]
SCORES = ["0", "1", "2", "-1", "+1", " 1", "1_0", "\u0661", "1.0", "1e3", "", "99999999999", "score", "1" * 5000]

record_line = st.fixed_dictionaries(
    {"_id": st.one_of(st.sampled_from(IDS), json_value), "text": st.one_of(text_piece, json_value)},
    optional={"title": st.one_of(text_piece, json_value), "extra": json_value}).map(_dumps)
json_line = st.one_of(record_line, json_value.map(_dumps), text_piece).map(
    lambda line: line.encode("utf-8", "surrogatepass"))
qrels_line = st.tuples(st.one_of(st.sampled_from(IDS), text_piece), st.one_of(st.sampled_from(IDS), text_piece),
                       st.one_of(st.sampled_from(SCORES), text_piece),
                       st.sampled_from(["\t", " ", "\t\t", ","])).map(
    lambda row: row[3].join(row[:3]).encode("utf-8", "surrogatepass"))
LINES = {"corpus.jsonl": json_line, "queries.jsonl": json_line, "qrels/test.tsv": qrels_line}


@st.composite
def beir_folder(draw) -> dict[str, bytes]:
    files = dict(BEIR)
    for name in draw(st.lists(st.sampled_from(sorted(files)), min_size=1, max_size=3, unique=True)):
        files[name] = draw(byte_mutation(files[name], st.one_of(LINES[name], byte_piece)))
    return files


@FUZZ
@given(files=beir_folder())
def test_the_beir_loader_raises_only_one_line_input_errors(files):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "qrels").mkdir()
        for name, data in files.items():
            (root / name).write_bytes(data)
        try:
            dataset = load_dataset(root)
        except InputError as error:
            message = str(error)
            assert "\n" not in message and "\r" not in message, message
            assert len(message) <= LONGEST_LINE, message
            return
        assert dataset.documents and dataset.queries and dataset.test_query_ids()
        assert dataset.negative_judgements >= 0


# --- readout check on a mutated project -----------------------------------------------------------


@pytest.fixture(scope="module")
def base_project(tmp_path_factory) -> Path:
    return _make_project(tmp_path_factory.mktemp("fuzz") / "p")


def _run_check(base: Path, mutate, *, strict: bool) -> None:
    """Copy the fixture project, apply `mutate(root)`, run `readout check` and assert the contract
    (and, when `strict`, that no exception other than a ReadoutError was raised)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "p"
        shutil.copytree(base, root)
        mutate(root)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*(["--debug"] if strict else []), "check", str(root), "--no-record"])
        stderr = err.getvalue()
        assert code in (0, 1, 2), (code, stderr)
        assert "Traceback" not in stderr, stderr
        assert len(stderr.splitlines()) <= 1, stderr
        assert all(len(line) <= LONGEST_LINE for line in stderr.splitlines()), stderr


YAML_VALUES = [
    "yes", "no", "~", "''", "[]", "{}", "sandbox", "beir", "data", ".", "[a, b]", "{a: 1}", "&a x", "*a",
    "!!str x", "!!binary aGk=", "!!int abc", "!!timestamp 1", "2020-02-30", "2030", "-5", "7" * 5000, "1e999",
    ".nan", ".inf", "'60'", "'no thanks'", "\"{h:2000000000}\"", "\"{h:.3f} {h!r}\"", "\"{h.real}\"",
    "\"" + "w " * 2000 + "\"", "x" * 900, "\"\\x00\"", "\"\\ufeff\"", "\"\\udcff\"", "[" * 100 + "]" * 100,
    "|\n  block", "\"table[search=hybrid].nDCG@5\"", "\"not \" ", "\"h > d\"", "\"abs(abs(abs(h)))\"",
    "\"" + "not " * 60 + "h\"",
]
yaml_value = st.one_of(st.sampled_from(YAML_VALUES), text_piece)


@st.composite
def yaml_mutation(draw, data: bytes) -> bytes:
    """A YAML document with a value replaced by a hostile one, a key added, or bytes mutated."""
    kind = draw(st.sampled_from(["value", "value", "key", "bytes"]))
    rows = data.decode("utf-8").split("\n")
    if kind == "value":
        candidates = [number for number, row in enumerate(rows) if ":" in row]
        at = draw(st.sampled_from(candidates))
        head = rows[at].split(":", 1)[0]
        rows[at] = f"{head}: {draw(yaml_value)}"
        return "\n".join(rows).encode("utf-8", "surrogatepass")
    if kind == "key":
        at = draw(st.integers(0, len(rows)))
        indent = " " * draw(st.sampled_from([0, 2, 4, 6]))
        key = draw(st.one_of(st.sampled_from(["evaluate", "data", "sandbox", "outputs", "title", "kind", "id",
                                              "sources", "measured", "values", "predicate", "status", "x" * 900]),
                             st.text(max_size=10)))
        rows.insert(at, f"{indent}{key}: {draw(yaml_value)}")
        return "\n".join(rows).encode("utf-8", "surrogatepass")
    return draw(byte_mutation(data, st.one_of(yaml_value.map(lambda text: text.encode("utf-8", "surrogatepass")),
                                              byte_piece)))


def _writer(relative: str, data: bytes):
    return lambda root: (root / relative).write_bytes(data)


@pytest.mark.parametrize("relative", ["claims/ledger.yaml", "readout.yaml"])
def test_check_survives_a_mutated_yaml_file(base_project, relative):
    @FUZZ_CLI
    @given(data=st.data())
    def run(data):
        original = (base_project / relative).read_bytes()
        _run_check(base_project, _writer(relative, data.draw(yaml_mutation(original))), strict=True)

    run()


def _forge_seal(document: dict) -> dict:
    """Reseal a changed document the way a forger would (json.dumps lets NaN through)."""
    import hashlib

    manifest = {key: value for key, value in (document.get("manifest") or {}).items() if key != "seal"} \
        if isinstance(document.get("manifest"), dict) else {}
    unsealed = {**document, "manifest": manifest}
    try:
        digest = hashlib.sha256(json.dumps(unsealed, sort_keys=True, separators=(",", ":"),
                                           ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()
    except ValueError:
        return document
    return {**document, "manifest": {**manifest, "seal": {"sha256": digest, "writer": "forger"}}}


@st.composite
def results_mutation(draw, data: bytes) -> bytes:
    """The sealed results with one value replaced (then resealed by a forger, or not), or bytes mutated."""
    if draw(st.booleans()):
        return draw(byte_mutation(data, byte_piece))
    document = json.loads(data)
    node, key = document, None
    for _ in range(draw(st.integers(1, 5))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            key = draw(st.integers(0, len(node) - 1))
        else:
            break
        parent, node = node, node[key]
    if key is not None:
        parent[key] = draw(json_value)
    if draw(st.booleans()):
        document = _forge_seal(document)
    return _dumps(document).encode("utf-8", "surrogatepass")


def test_check_survives_a_mutated_results_file(base_project):
    @FUZZ_CLI
    @given(data=st.data())
    def run(data):
        original = (base_project / "outputs" / "results.json").read_bytes()
        _run_check(base_project, _writer("outputs/results.json", data.draw(results_mutation(original))),
                   strict=STRICT)

    run()


@pytest.mark.parametrize("relative", ["claims/design-freeze.json", "claims/trace-history.jsonl"])
def test_check_survives_a_mutated_freeze_or_history(base_project, relative):
    lines = st.one_of(json_value.map(_dumps).map(lambda text: text.encode("utf-8", "surrogatepass")), byte_piece)

    @settings(FUZZ_CLI, max_examples=EXAMPLES or 30)
    @given(data=st.data())
    def run(data):
        original = (base_project / relative).read_bytes()
        _run_check(base_project, _writer(relative, data.draw(byte_mutation(original, lines))), strict=STRICT)

    run()
