"""Property-based fuzz (issue 14): mutated inputs never crash a reader.

Small valid inputs (a BEIR folder; the fixture project's ledger, readout.yaml, sealed results file,
design freeze and history) are mutated: bytes flipped, files truncated, lines inserted, deleted or
replaced, values swapped for hostile ones (NaN, 5,000-digit numbers, lone surrogates, aliases,
deep nesting, byte order marks, non-UTF-8 bytes, enormous ids). Then:

- the BEIR loader (called directly: an evaluation loads models) returns a dataset or raises
  `InputError` with a one-line message of at most 300 characters, and nothing else;
- an id, valid or not, written where corpus.jsonl, queries.jsonl or the qrels hold one, is
  accepted exactly when it is printable text without whitespace of at most MAX_ID_CHARS
  characters (the rule restated here by Unicode category, not by the loader's own test), and
  refused as an `InputError` naming that file, line and field otherwise;
- a readout.yaml with one key written twice in one mapping, at any depth, in block or flow
  style, quoted or not, is refused with the line of the second key and the first key's line;
- `readout check PROJECT --no-record` exits 0, 1 or 2 with at most one stderr line of at most 300
  characters and no traceback. For the ledger and readout.yaml it also runs with `--debug`,
  so an exception that is not a `ReadoutError` prints its traceback and fails the property.

The results, freeze and history properties hold the CLI contract only by default: the re-derivation
of a forged-seal results file (generator/claims/tracing/rederive.py) and the freeze and history readers
(generator/claims/record/freeze.py) still end in an internal error on some inputs. READOUT_FUZZ_STRICT=1
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
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from generator.commands.cli import main
from generator.core.ids import MAX_ID_CHARS
from generator.storage.errors import InputError
from generator.evaluate.data import load_dataset
from generator.storage.safe_yaml import load_config, parse_yaml
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


# --- ids -----------------------------------------------------------------------------------------

ID_PIECES = [" ", "\t", "\n", "\r", "\x00", "\x0b", "\x1f", "\x7f", "\x85", "\u00a0", "\u1680", "\u2007",
             "\u200b", "\u2028", "\u2029", "\u202e", "\u3000", "\ufeff", "\udcff", "\ue000", "\u0378",
             "MED-10", "PLAIN-12", "4983", "é", "文", "/", ":", "#", "<svg", "onload=x>", '"', "'", "\\"]
any_id = st.one_of(st.text(max_size=12),
                   st.lists(st.one_of(st.sampled_from(ID_PIECES), st.text(max_size=4)), max_size=5).map("".join),
                   st.sampled_from(["x" * MAX_ID_CHARS, "x" * (MAX_ID_CHARS + 1), "é" * (MAX_ID_CHARS + 1)]))


def _is_id(value: str) -> bool:
    """The id rule, said independently of generator.core.ids: 1 to MAX_ID_CHARS characters, none
    of them whitespace or of Unicode's categories C* (control, format, surrogate, private use,
    unassigned) and Z* (separators)."""
    return 0 < len(value) <= MAX_ID_CHARS and not any(
        char.isspace() or unicodedata.category(char)[0] in "CZ" for char in value)


def _write(root: Path, name: str, lines: list[str]) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))


@FUZZ
@given(value=any_id, place=st.sampled_from(["corpus.jsonl", "queries.jsonl", "query-id", "corpus-id"]))
def test_the_loader_accepts_exactly_the_valid_ids(value, place):
    # In the JSONL files any id can be written (JSON escapes it); a qrels column cannot hold a
    # tab or a newline (those split the line) or a lone surrogate (not UTF-8), and spaces around
    # a column are dropped before the id is read.
    in_qrels = place in ("query-id", "corpus-id")
    if in_qrels and ({"\t", "\n"} & set(value) or not _is_utf8(value)):
        return
    if value in ("d0", "q0"):
        return
    doc_id = value if place in ("corpus.jsonl", "corpus-id") else "d1"
    query_id = value if place in ("queries.jsonl", "query-id") else "q1"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _write(root, "corpus.jsonl", [json.dumps({"_id": "d0", "text": "zero"}),
                                      json.dumps({"_id": doc_id if not in_qrels else "d1", "text": "one"})])
        _write(root, "queries.jsonl", [json.dumps({"_id": "q0", "text": "first"}),
                                       json.dumps({"_id": query_id if not in_qrels else "q1", "text": "second"})])
        _write(root, "qrels/test.tsv", ["query-id\tcorpus-id\tscore", "q0\td0\t1", f"{query_id}\t{doc_id}\t1"])
        read_as = value.strip() if in_qrels else value
        try:
            dataset = load_dataset(root)
        except InputError as error:
            message = str(error)
            assert "\n" not in message and len(message) <= LONGEST_LINE, message
            if _is_id(read_as):
                # Valid, but named only by the qrels: an unknown query or document, not a bad id.
                assert in_qrels and error.reason.startswith("unknown "), message
                return
            # JSON itself refuses a lone surrogate (no UTF-8 file can hold one), before any field.
            field = None if not in_qrels and not _is_utf8(value) else place if in_qrels else "_id"
            where = ("qrels/test.tsv", 3, field) if in_qrels else (place, 2, field)
            assert (Path(error.path).relative_to(root).as_posix(), error.line, error.field) == where, message
            return
        assert _is_id(read_as), f"accepted an invalid id {value!r}"
        assert read_as in dataset.document_ids or read_as in dataset.queries


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


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


# A mapping is [(key, value, mark)], a value ("scalar", text) | ("map", mapping) | ("seq", [mapping]);
# `mark` is "first" or "second" on the two writings of the duplicated key.
DUPLICABLE_KEYS = ["title", "kind", "data", "evaluate", "rows", "name", "skip_rerank", "outputs", "sections", "id",
                   "k", "model", "x-y"]
YAML_SCALARS = ["1", "true", "no", "text", "'quoted'", "[a, b]", "{}", "~", "2030", "two words", "-5"]


def _yaml_mappings(deepest: int) -> st.SearchStrategy:
    """Mappings nested at most `deepest` levels below the top one, built from the bottom up."""
    scalar = st.sampled_from(YAML_SCALARS).map(lambda text: ("scalar", text))
    mapping = None
    for _ in range(deepest + 1):
        # Mostly scalars, as in a real readout.yaml: a tree of nested mappings only is slow to draw.
        value = scalar if mapping is None else st.one_of(
            scalar, scalar, mapping.map(lambda inner: ("map", inner)),
            st.lists(mapping, min_size=1, max_size=2).map(lambda items: ("seq", items)))
        mapping = st.lists(st.tuples(st.sampled_from(DUPLICABLE_KEYS), value, st.none()), min_size=1, max_size=3,
                           unique_by=lambda pair: pair[0])
    return mapping


YAML_MAPPING = _yaml_mappings(2)


def _mappings(mapping: list) -> list[list]:
    found = [mapping]
    for _, (kind, inner), _ in mapping:
        for child in ([inner] if kind == "map" else inner if kind == "seq" else []):
            found += _mappings(child)
    return found


def _emit(mapping: list, indent: int, lines: list[str], marks: dict[str, int], first_prefix: str | None = None,
          flow: bool = False) -> None:
    if flow:
        for _, _, mark in mapping:
            if mark:
                marks[mark] = len(lines) + 1
        lines.append(first_prefix + "{" + ", ".join(f"{key}: {text}" for key, (_, text), _ in mapping) + "}")
        return
    for position, (key, (kind, inner), mark) in enumerate(mapping):
        prefix = first_prefix if position == 0 and first_prefix is not None else " " * indent
        if mark:
            marks[mark] = len(lines) + 1
        if kind == "scalar":
            lines.append(f"{prefix}{key}: {inner}")
            continue
        lines.append(f"{prefix}{key}:")
        for item in [inner] if kind == "map" else inner:
            dash = None if kind == "map" else " " * (indent + 2) + "- "
            scalars_only = all(value_kind == "scalar" for _, (value_kind, _), _ in item)
            _emit(item, indent + (2 if kind == "map" else 4), lines, marks, dash,
                  flow=kind == "seq" and scalars_only and len(item) % 2 == 1)


@st.composite
def yaml_with_a_duplicate_key(draw) -> tuple[str, int, int, str]:
    """(document, line of the second key, line of the first, the key)."""
    root = draw(YAML_MAPPING)
    target = draw(st.sampled_from(_mappings(root)))
    first = draw(st.integers(0, len(target) - 1))
    key, value, _ = target[first]
    spelled = draw(st.sampled_from([key, f"'{key}'", f'"{key}"']))
    target[first] = (key, value, "first")
    target.insert(draw(st.integers(first + 1, len(target))), (spelled, draw(st.sampled_from(YAML_SCALARS)
                                                                              .map(lambda text: ("scalar", text))),
                                                                "second"))
    lines: list[str] = []
    marks: dict[str, int] = {}
    _emit(root, 0, lines, marks)
    return "\n".join(lines) + "\n", marks["second"], marks["first"], key


@FUZZ
@given(case=yaml_with_a_duplicate_key())
def test_a_key_written_twice_is_always_refused_with_the_second_line(case):
    text, line, first_line, key = case
    for reader in (load_config, parse_yaml):     # readout.yaml and the label registry; the ledger
        with pytest.raises(InputError) as raised:
            reader(text, "readout.yaml")
        assert (raised.value.path, raised.value.line, raised.value.field) == ("readout.yaml", line, key), text
        assert raised.value.reason == f"duplicate key (first at line {first_line})", text


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
