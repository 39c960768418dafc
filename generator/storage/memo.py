"""Signed memos of the gate's costliest pure computations, so that it stays instant.

Re-deriving a sealed results file (every metric of every query from the run files and the
judgements, the RRF rows, the ceiling, the diagnosis, the sample comparison, and every interval
and p-value drawn again with NumPy and SciPy) is a pure function of bytes the checker can hash,
and costs far more than the hashing: about two seconds on two cores for the SciFact review,
against a check that otherwise takes a fraction of one. So its outcome is kept under the sha256
of exactly what determines it: the bytes of the results file and of every file the derivation
reads, the source of the whole `generator` package and its data files, the Python version, and
the installed versions of NumPy, SciPy, regex, confusable-homoglyphs, PyYAML, markdown-it-py, mdurl
and html5lib. A changed byte, line of code or version is a different key, so a memo never
answers for inputs it was not made from; the derivation then runs in full, as before.

Kept the same way, each by the sha256 of the text it was made from (or, for the small results
of one function of a string, together in one book: `MemoBook`): a design document's layout
into quotable units and its fenced blocks (a frozen document rarely changes, and parsing the five
of the SciFact review was a fifth of a check), the orphan scan of a rendered output, and the
Jinja templates compiled to bytecode (Jinja checks the template's source checksum itself; the
signature keeps out bytecode the tool did not write). Kept with marshal (`store_values`), which
reads back faster than JSON parses: what a YAML text parses to (the ledger, readout.yaml, the
label registry, the package's lexicons: generator.storage.safe_yaml), the values a results file
parsed to (generator.core.results.seal) and the methods dataclasses compiles for the package's
classes, by their source text (generator.core.dataclass).

Verified, not believed: an entry counts only when its HMAC-SHA256, made with a key this machine
created for itself (32 random bytes, readable by its owner only, kept in
`~/.config/readout/memo-signing.key`, apart from the cache), matches its content. Any other file
(one the tool did not write, a cache restored or copied from another machine, an entry edited,
renamed or cut short) is ignored and the derivation runs again. Memos live in the cache directory
(`$READOUT_CACHE` or `~/.cache/readout`, beside the embeddings), outside every project, so nothing
a project commits can answer for a derivation.

Limits, written down: whoever can write this user's configuration directory can read the key; the
signature is a defence against files the tool did not write, not against the machine's owner. A cache that
cannot be written costs only time. `READOUT_NO_MEMO=1` turns memos off (every check derives
everything; the test suite does so wherever it swaps code at run time).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import marshal
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable

import generator
from generator.storage.errors import InputError
from generator.storage.paths import default_cache_dir, home_directory

# What finding the default cache or key raises without a home directory (default_cache_dir says so
# as an InputError; Path.home as the others).
_NO_HOME = (RuntimeError, KeyError, OSError, InputError)

MEMO_DIR = "memo"
KEY_FILE = "memo-signing.key"
KEY_BYTES = 32
DISABLE_VARIABLE = "READOUT_NO_MEMO"
_FORMAT = 1
MAX_ENTRY_BYTES = 64 * 1024 * 1024
VALUES_SUFFIX = ".values"


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; anything else (a FIFO, a device, a
    directory, an overlong file) is an OSError, so a planted file can neither block nor flood a check."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        refused = OSError(f"{path}: not a regular file of at most {limit} bytes")
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            raise refused
        # As many bytes as the file holds (and one more, to see it grow): `read(limit)` would
        # allocate the whole limit, 64 MB, for every memo read.
        content = handle.read(status.st_size + 1)
        if len(content) > limit:
            raise refused
        return content


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The sha256 of what a derivation's outcome can depend on besides its input files: every
    module of the package (by its path inside the package), the Python version, and the NumPy and
    SciPy versions (read from their version files, so that nothing is imported)."""
    digest = hashlib.sha256(f"format {_FORMAT}; python {sys.version}".encode())
    for name, path in _package_files(os.path.dirname(generator.__file__)):
        digest.update(name.encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    for library, version_file in _VERSION_FILES.items():
        digest.update(library.encode() + b"\0")
        digest.update(_version_file(library, version_file))
    return digest.hexdigest()


def _package_files(package: str) -> list[tuple[str, str]]:
    """(path inside the package, path) of the package's code and its data (the lexicons a rule
    reads its words from), sorted: os.walk, not Path.rglob, which also lists every __pycache__ and
    made the fingerprint cost as much as a tenth of a check."""
    found = []
    for directory, subdirectories, names in os.walk(package):
        subdirectories[:] = [name for name in subdirectories if name != "__pycache__"]
        inside = os.path.relpath(directory, package).replace(os.sep, "/")
        for name in names:
            if name.endswith((".py", ".yaml")):
                found.append((name if inside == "." else f"{inside}/{name}", os.path.join(directory, name)))
    return sorted(found)


# The file of each library that names its version, read without importing it: NumPy and SciPy
# (a derivation draws with them), the Unicode tables a text is folded with (generator.core.text.characters),
# PyYAML (a remembered parse, generator.storage.safe_yaml), markdown-it-py and mdurl (a claim's
# Markdown read or rendered) and html5lib (the orphan scan).
_VERSION_FILES = {"numpy": "version.py", "scipy": "version.py", "regex": "_main.py",
                  "confusable_homoglyphs": "_version.py", "yaml": "__init__.py", "markdown_it": "__init__.py",
                  "mdurl": "__init__.py", "html5lib": "__init__.py"}


def _version_file(library: str, name: str = "version.py") -> bytes:
    import importlib.util

    try:
        spec = importlib.util.find_spec(library)
    except (ImportError, ValueError):
        return b"absent"
    if spec is None or not spec.origin:
        return b"absent"
    directory = Path(spec.origin).parent
    try:
        version = (directory / name).read_bytes()
        # Its compiled parts by name: PyYAML with libyaml and without it are the same version.
        compiled = sorted(entry for entry in os.listdir(directory) if entry.endswith((".so", ".pyd")))
    except OSError:
        return b"no version file"
    return version + b"\0" + "\0".join(compiled).encode()


def default_key_file() -> Path:
    """The signing key, kept apart from the cache it signs: `$XDG_CONFIG_HOME/readout/` (default
    `~/.config/readout/`), so that a cache directory restored or copied from elsewhere (a CI cache
    a pull request could have written) brings no key its entries would verify with."""
    configured = os.environ.get("XDG_CONFIG_HOME")
    base = Path(configured).expanduser() if configured else home_directory() / ".config"
    return base / "readout" / KEY_FILE


class Memo:
    """One cache directory's memos. Every failure to read or write one is a miss, never an error."""

    def __init__(self, cache_dir: Path | None = None, key_file: Path | None = None):
        try:
            cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
            key_file = key_file if key_file is not None else default_key_file()
        except _NO_HOME:   # no home directory: no memos, only time lost
            cache_dir = key_file = None
        self.directory = cache_dir / MEMO_DIR if cache_dir is not None else None
        self.key_file = key_file
        self._key: bytes | None = None

    def enabled(self) -> bool:
        return self.directory is not None and os.environ.get(DISABLE_VARIABLE, "") in ("", "0")

    def remembered(self, kind: str, inputs: Any, compute: Callable[[], Any],
                   still_valid: Callable[[Any], bool] = lambda outcome: True) -> Any:
        """`compute()`'s JSON-ready outcome for `inputs`: the signed memo when one verifies and
        `still_valid` accepts it (the outcome depends on more than `inputs`), else computed now
        and remembered."""
        if not self.enabled():
            return compute()
        name = self._name(kind, inputs)
        found = self._read(name)
        if found is not None and still_valid(found[0]):
            return found[0]
        outcome = compute()
        self._write(name, outcome)
        return outcome

    def load(self, kind: str, inputs: Any) -> tuple[Any] | None:
        """`(outcome,)` of a signed memo for `inputs`, or None (none, not verified, or memos off)."""
        return self._read(self._name(kind, inputs)) if self.enabled() else None

    def store(self, kind: str, inputs: Any, outcome: Any) -> None:
        if self.enabled():
            self._write(self._name(kind, inputs), outcome)

    def load_values(self, kind: str, inputs: Any) -> tuple[Any] | None:
        """Like `load`, for an outcome stored by `store_values`."""
        if not self.enabled() or self.directory is None:
            return None
        name = self._name(kind, inputs)
        try:
            entry = _read_regular(self.directory / f"{name}{VALUES_SUFFIX}", MAX_ENTRY_BYTES)
        except OSError:
            return None
        signature, _, body = entry.partition(b"\n")
        expected = self._signature_of_bytes(name + VALUES_SUFFIX, body)
        if expected is None or not hmac.compare_digest(expected.encode("ascii"), signature):
            return None
        try:
            return (marshal.loads(body),)
        except (ValueError, EOFError, TypeError):
            return None

    def store_values(self, kind: str, inputs: Any, outcome: Any) -> None:
        """Like `store`, for a large outcome of JSON's values (mappings, lists, text, numbers,
        booleans, None), or of code objects compiled here: kept with marshal, which reads them back three to four times faster than
        JSON parses them (a parsed results file of a megabyte: 5 ms, not 20). Only an entry whose
        signature verifies is ever unmarshalled, and the Python version is part of every name."""
        if not self.enabled() or self.directory is None:
            return
        name = self._name(kind, inputs)
        try:
            body = marshal.dumps(outcome)
        except ValueError:
            return
        # Signed with the suffix in the signed name: bytes signed as one layout never verify as the other.
        signature = self._signature_of_bytes(name + VALUES_SUFFIX, body)
        if signature is not None:
            self._publish_bytes(self.directory / f"{name}{VALUES_SUFFIX}", signature.encode("ascii") + b"\n" + body)

    def _name(self, kind: str, inputs: Any) -> str:
        material = json.dumps({"kind": kind, "code": code_fingerprint(), "inputs": inputs}, sort_keys=True,
                              separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(material.encode("ascii")).hexdigest()

    def _signature(self, name: str, body: str) -> str | None:
        return self._signature_of_bytes(name, body.encode("utf-8"))

    def _signature_of_bytes(self, name: str, body: bytes) -> str | None:
        key = self._signing_key()
        if key is None:
            return None
        return hmac.new(key, f"{name}\n".encode("utf-8") + body, hashlib.sha256).hexdigest()

    def _read(self, name: str) -> tuple[Any] | None:
        if self.directory is None:
            return None
        try:
            text = _read_regular(self.directory / f"{name}.json", MAX_ENTRY_BYTES).decode("utf-8")
            entry = json.loads(text)
            body, signature = entry["outcome"], entry["signature"]
        except (OSError, ValueError, TypeError, KeyError):
            return None
        expected = self._signature(name, body) if isinstance(body, str) and isinstance(signature, str) else None
        if expected is None or not hmac.compare_digest(expected, signature):
            return None
        try:
            return (json.loads(body),)
        except ValueError:
            return None

    def _write(self, name: str, outcome: Any) -> None:
        try:
            # In the outcome's own order: a remembered mapping reads back as the computed one did.
            body = json.dumps(outcome, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return
        signature = self._signature(name, body)
        if signature is None or self.directory is None:
            return
        self._publish(self.directory / f"{name}.json", json.dumps({"outcome": body, "signature": signature}))

    def _signing_key(self) -> bytes | None:
        if self._key is None and self.key_file is not None:
            path = self.key_file
            try:
                self._key = _read_regular(path, 2 * KEY_BYTES)
            except FileNotFoundError:
                # First use: another process may create the key at the same moment; the link below
                # lets exactly one of them win, and everyone then reads the winner's key.
                self._publish(path, os.urandom(KEY_BYTES).hex(), exclusive=True)
                try:
                    self._key = _read_regular(path, 2 * KEY_BYTES)
                except OSError:
                    return None
            except OSError:
                return None
            if len(self._key) != 2 * KEY_BYTES:
                self._key = None
        return self._key

    def _publish(self, path: Path, text: str, exclusive: bool = False) -> None:
        self._publish_bytes(path, text.encode("utf-8"), exclusive)

    def _publish_bytes(self, path: Path, content: bytes, exclusive: bool = False) -> None:
        """Write whole or not at all: a temporary file renamed (or, for the key, linked) into place."""
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(content)
            if exclusive:
                os.link(temporary, path)
            else:
                os.replace(temporary, path)
        except OSError:
            pass
        finally:
            try:
                temporary.unlink()
            except OSError:
                pass


_DEFAULT_MEMOS: dict[tuple[Path, Path] | None, Memo] = {}


def default_memo() -> Memo:
    """The memo of the default cache directory and key, one per process for as long as neither
    changes, so that its key is read once per check rather than once per memo."""
    try:
        where: tuple[Path, Path] | None = (default_cache_dir(), default_key_file())
    except _NO_HOME:
        where = None
    if where not in _DEFAULT_MEMOS:
        _DEFAULT_MEMOS[where] = Memo(*where) if where is not None else Memo()
    return _DEFAULT_MEMOS[where]


class MemoBook:
    """Many small results of one pure function of a string (the visible text of a claim's Markdown,
    a quote with its Markdown reduced), kept together as one signed memo: a check reads one file,
    not one per sentence, and needs no Markdown parser for a sentence it has read before. Written
    back by `save_books` at the end of a check; a book that outgrows BOOK_LIMIT keeps only what the
    last check used.

    Each result is kept as its own JSON text and decoded when first asked for: a book holds what
    every project on this machine asked (thousands of results), a check asks for a few dozen, and
    decoding them all was most of the cost of reading the book."""

    def __init__(self, kind: str):
        self.kind = kind
        self._texts: dict[str, str] | None = None
        self._values: dict[str, Any] = {}
        self._used: set[str] = set()
        self._added = False

    def get(self, key: str, compute: Callable[[], Any]) -> Any:
        if self._texts is None:
            found = default_memo().load(self.kind, _BOOK_INPUTS)
            stored = found[0] if found is not None and isinstance(found[0], dict) else {}
            self._texts = {name: text for name, text in stored.items() if isinstance(text, str)}
        self._used.add(key)
        if key not in self._values:
            self._values[key] = self._decoded(key, compute)
        return self._values[key]

    def _decoded(self, key: str, compute: Callable[[], Any]) -> Any:
        assert self._texts is not None
        text = self._texts.get(key)
        if text is not None:
            try:
                return json.loads(text)
            except ValueError:
                pass
        value = compute()
        try:
            self._texts[key] = json.dumps(value, ensure_ascii=False, allow_nan=False)
            self._added = True
        except (TypeError, ValueError):
            self._texts.pop(key, None)   # not JSON: computed again by the next check
        return value

    def save(self) -> None:
        if not self._added or self._texts is None:
            return
        texts = self._texts
        if len(texts) > BOOK_LIMIT:
            texts = {key: text for key, text in texts.items() if key in self._used}
        default_memo().store(self.kind, _BOOK_INPUTS, texts)
        self._added = False
        self._used = set()


# A book's memo is named by its kind and this: a book of the earlier layout (results kept decoded)
# has another name, so it is never read as this one.
_BOOK_INPUTS = "book of JSON texts"
BOOK_LIMIT = 4096
_BOOKS: dict[str, MemoBook] = {}


def book(kind: str) -> MemoBook:
    """This process's book of `kind` (see MemoBook)."""
    if kind not in _BOOKS:
        _BOOKS[kind] = MemoBook(kind)
    return _BOOKS[kind]


def save_books() -> None:
    for memo_book in _BOOKS.values():
        memo_book.save()

