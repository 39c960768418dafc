"""Reading YAML the safe way: every scalar kept as the text written, every line remembered, and
every input bounded.

The ledger is composed, never constructed: PyYAML's safe composer (libyaml's when present) builds
the node tree and this module turns it into `Node`s that remember their line. So `quote: 2030`
stays the string "2030", `status: yes` stays "yes" (and is refused later), duplicate keys are
errors, and no YAML tag can build an object.

Bounds, each a one-line input error instead of a crash or a minute of memory growth: no anchors
or aliases (`&a` / `*a`: a few hundred bytes of aliases can expand to gigabytes, and a recursive
alias never ends), nesting at most MAX_DEPTH levels, at most MAX_NODES nodes, at most MAX_BYTES
bytes. `load_config` (and `load_config_with_lines`, which also maps every key to its line)
applies the same bounds to readout.yaml and the label registry and then builds plain values
(numbers and booleans typed as YAML types them); there, a number longer than MAX_NUMBER_CHARS and
a value PyYAML's constructors cannot build (`2020-02-30`, `!!int abc`) are input errors with
their line too, never a ValueError. A key written twice in one mapping, at any depth, is refused
in both, as `FILE:LINE: KEY: duplicate key (first at line N)` with the second key's line (PyYAML
keeps the last silently: `skip_rerank: true` then `skip_rerank: false` would run the reranker).
In readout.yaml keys are compared as YAML types them, so `1` and `1.0`, or `true` and `yes`, are
the same key; a `<<` merge may still be overridden by the mapping's own keys, as YAML means.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from generator.storage.errors import MAX_ECHO_CHARS, InputError, clip
from generator.storage.memo import default_memo

if TYPE_CHECKING:
    import yaml

T = TypeVar("T")

MAX_DEPTH = 64
MAX_NODES = 2_000_000
MAX_BYTES = 32 * 1024 * 1024
# A number YAML types as int or float (readout.yaml, labels): Python refuses to convert an integer
# of more than 4,300 digits, and no setting needs more than a few.
MAX_NUMBER_CHARS = 100
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
_NULL_SCALARS = frozenset({"", "~", "null", "Null", "NULL"})
_MERGE_TAG = "tag:yaml.org,2002:merge"
_LOADERS: dict[bool, type] = {}


def _loader(text_only: bool) -> type:
    """The safe loader (libyaml's when present); with `text_only`, a resolver that only tells null
    from text, since the ledger keeps every scalar as written."""
    import yaml
    if text_only not in _LOADERS:
        base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
        if not text_only:
            class ConfigLoader(base):   # type: ignore[misc, valid-type]
                def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
                    # Keys are compared once constructed, as the dict will hold them; a merge key's
                    # entries are left to flatten_mapping, which lets the mapping's own keys win.
                    first_line: dict[Any, int] = {}
                    for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
                        if key_node.tag == _MERGE_TAG:
                            continue
                        key = self.construct_object(key_node, deep=deep)
                        if not isinstance(key, Hashable):
                            continue
                        line = key_node.start_mark.line + 1
                        if key in first_line:
                            raise _DuplicateKey(str(key_node.value) if isinstance(key_node, yaml.ScalarNode)
                                                else str(key), line, first_line[key])
                        first_line[key] = line
                    return super().construct_mapping(node, deep=deep)

                def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
                    # PyYAML's safe constructors raise plain ValueErrors for `2020-02-30`,
                    # `!!int abc` or `!!float x`, and an AttributeError for `!!timestamp 1`.
                    try:
                        return super().construct_object(node, deep=deep)
                    except (ValueError, TypeError, AttributeError, OverflowError) as error:
                        problem = str(error) if isinstance(error, ValueError) else \
                            f"cannot be read as {node.tag.rsplit(':', 1)[-1]}"
                        raise _Unconstructable(node.start_mark.line + 1, problem) from None

            _LOADERS[text_only] = ConfigLoader
        else:
            class LedgerLoader(base):   # type: ignore[misc, valid-type]
                def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
                    if kind is yaml.ScalarNode:
                        if implicit[0] and value in _NULL_SCALARS:
                            return "tag:yaml.org,2002:null"
                        return "tag:yaml.org,2002:str"
                    return super().resolve(kind, value, implicit)

            _LOADERS[text_only] = LedgerLoader
    return _LOADERS[text_only]


class _Unconstructable(Exception):
    """A scalar the safe constructor could not build (not a ValueError: an enclosing
    construct_object must let it through)."""

    def __init__(self, line: int, problem: str):
        super().__init__(problem)
        self.line = line
        self.problem = problem


class _DuplicateKey(Exception):
    """A key written twice in one mapping, found while constructing (the path is added by the
    caller, which knows it)."""

    def __init__(self, key: str, line: int, first_line: int):
        super().__init__(key)
        self.key, self.line, self.first_line = key, line, first_line


def _duplicate_key_error(path: str, key: str, line: int, first_line: int) -> InputError:
    return InputError(f"duplicate key (first at line {first_line})", path=path, line=line,
                      field=clip(key, MAX_ECHO_CHARS))


@dataclass
class Node:
    value: Any             # str | None | list[Node] | dict[str, tuple[int, Node]]
    line: int


class _Bounds:
    """Walks a composed node graph once, refusing aliases (a node reached twice), depth and size."""

    def __init__(self, path: str):
        self.path = path
        self.seen: set[int] = set()

    def check(self, root: Any) -> None:
        import yaml
        # A node is marked when it is first reached, not when it is visited: a depth-first walk of
        # a chain of aliases would otherwise go MAX_DEPTH levels down before meeting a node twice,
        # and report the alias bomb as deep nesting.
        self.seen.add(id(root))
        stack = [(root, 1)]
        while stack:
            node, depth = stack.pop()
            line = node.start_mark.line + 1
            if depth > MAX_DEPTH:
                raise InputError(f"nested more than {MAX_DEPTH} levels deep", path=self.path, line=line)
            if isinstance(node, yaml.SequenceNode):
                children = node.value
            elif isinstance(node, yaml.MappingNode):
                children = [child for pair in node.value for child in pair]
            else:
                if node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER_CHARS:
                    raise InputError(f"a number of {len(node.value):,} characters (more than {MAX_NUMBER_CHARS})",
                                     path=self.path, line=line)
                continue
            for child in children:
                if id(child) in self.seen:
                    # An alias's node carries the anchor's position; the holder is where the alias is.
                    raise InputError("YAML anchors and aliases are not allowed here (an alias can expand "
                                     "without bound); write the value out", path=self.path, line=line)
                self.seen.add(id(child))
            # Pushed last first, so the walk meets the document in reading order (the first alias first).
            stack.extend((child, depth + 1) for child in reversed(children))
            if len(self.seen) > MAX_NODES:
                raise InputError(f"more than {MAX_NODES} YAML nodes", path=self.path, line=line)


def _compose(text: str, path: str, text_only: bool, bounds: bool = True):
    import yaml
    if len(text.encode("utf-8", errors="ignore")) > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES // (1024 * 1024)} MB", path=path)
    loader = _loader(text_only)(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        loader.dispose()
        raise InputError(f"not valid YAML: {problem}", path=path,
                         line=mark.line + 1 if mark is not None else None) from None
    except RecursionError:
        loader.dispose()
        raise InputError(f"nested more than {MAX_DEPTH} levels deep", path=path) from None
    if root is not None and bounds:
        _Bounds(path).check(root)
    return loader, root


def parse_yaml(text: str, path: str) -> Node | None:
    """The ledger's node tree: every scalar as text, with lines, bounded as `_Bounds` bounds a
    document (a ledger is checked and converted in one walk: it is the largest file read)."""
    return _remembered("yaml ledger tree", text, lambda: _parse_yaml(text, path), _tree_json, _tree_from_json)


def _parse_yaml(text: str, path: str) -> Node | None:
    loader, root = _compose(text, path, text_only=True, bounds=False)
    try:
        return None if root is None else _BoundedConversion(path).convert(root, 1)
    finally:
        loader.dispose()


class _BoundedConversion:
    """`_Bounds` and the conversion to `Node`s in one walk: children are marked when first reached,
    before any is descended into, so an alias is met as an alias and not as deep nesting."""

    def __init__(self, path: str):
        self.path = path
        self.seen: set[int] = set()
        self.nodes = 1

    def convert(self, node: yaml.Node, depth: int) -> Node:
        import yaml
        line = node.start_mark.line + 1
        if depth > MAX_DEPTH:
            raise InputError(f"nested more than {MAX_DEPTH} levels deep", path=self.path, line=line)
        if isinstance(node, yaml.ScalarNode):
            return Node(None if node.tag == "tag:yaml.org,2002:null" else node.value, line)
        children = node.value if isinstance(node, yaml.SequenceNode) else [child for pair in node.value
                                                                           for child in pair]
        for child in children:
            if id(child) in self.seen:
                raise InputError("YAML anchors and aliases are not allowed here (an alias can expand "
                                 "without bound); write the value out", path=self.path, line=line)
            self.seen.add(id(child))
        self.nodes += len(children)
        if self.nodes > MAX_NODES:
            raise InputError(f"more than {MAX_NODES} YAML nodes", path=self.path, line=line)
        if isinstance(node, yaml.SequenceNode):
            return Node([self.convert(item, depth + 1) for item in node.value], line)
        mapping: dict[str, tuple[int, Node]] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError("a mapping key must be plain text", path=self.path, line=key_line)
            key = key_node.value
            if key in mapping:
                raise _duplicate_key_error(self.path, key, key_line, mapping[key][0])
            mapping[key] = (key_line, self.convert(value_node, depth + 1))
        return Node(mapping, line)


class Lines:
    """The line of every key of a YAML document, by dotted path (`outputs.readout.sections[0].title`),
    so an error about a value can name the line it is on."""

    def __init__(self, root=None):
        self.lines: dict[str, int] = {}
        if root is not None:
            self._walk(root, "")

    @classmethod
    def of(cls, lines: dict[str, int]) -> Lines:
        found = cls()
        found.lines = dict(lines)
        return found

    def _walk(self, node, where: str) -> None:
        import yaml
        self.lines.setdefault(where, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    child = f"{where}.{key.value}" if where else str(key.value)
                    self.lines[child] = key.start_mark.line + 1
                    self._walk(value, child)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, f"{where}[{index}]")

    def line(self, where: str | None) -> int | None:
        """The line of `where`, or of its nearest parent that has one."""
        while where:
            if where in self.lines:
                return self.lines[where]
            cut = max(where.rfind("."), where.rfind("["))
            where = where[:cut] if cut > 0 else ""
        return None


def load_config(text: str, path: str) -> Any:
    """readout.yaml or the label registry as plain values, with the same bounds as the ledger."""
    return load_config_with_lines(text, path)[0]


def load_config_with_lines(text: str, path: str) -> tuple[Any, Lines]:
    """Like `load_config`, with the line of every key."""
    return _remembered("yaml config", text, lambda: _load_config_with_lines(text, path), _config_json,
                       _config_from_json)


def _load_config_with_lines(text: str, path: str) -> tuple[Any, Lines]:
    import yaml
    loader, root = _compose(text, path, text_only=False)
    try:
        return (None if root is None else loader.construct_document(root)), Lines(root)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(error, 'problem', None) or error}", path=path,
                         line=mark.line + 1 if mark is not None else None) from None
    except _DuplicateKey as error:
        raise _duplicate_key_error(path, error.key, error.line, error.first_line) from None
    except _Unconstructable as error:
        problem = error.problem if len(error.problem) <= 120 else error.problem[:120] + "..."
        raise InputError(f"not a valid YAML value: {problem}", path=path, line=error.line) from None
    except (ValueError, TypeError, AttributeError, OverflowError) as error:
        # Raised while a collection is filled in, outside any one construct_object: no line to give.
        raise InputError(f"not a valid YAML value: {str(error)[:120]}", path=path) from None
    finally:
        loader.dispose()


# --- what a YAML text parses to, kept between checks --------------------------------------------
# The ledger, readout.yaml, the label registry and the package's own data files are parsed on every
# check, and PyYAML costs more to import and to run than reading a signed memo (generator.storage.memo):
# so each outcome is kept under the sha256 of the text (and, like every memo, of this package's
# code and PyYAML's version), and a check whose texts are all remembered does not import PyYAML.
# A text that is refused is not remembered: it is parsed again, and refused again with its line.


def _remembered(kind: str, text: str, parse: Callable[[], T], encode: Callable[[T], Any],
                decode: Callable[[Any], T]) -> T:
    memo = default_memo()
    if not memo.enabled():
        return parse()
    inputs = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
    # Kept with marshal (JSON's values only): a 10k-claim ledger's tree read back in a quarter of
    # the time its JSON text took to parse.
    found = memo.load_values(kind, inputs)
    if found is not None:
        try:
            return decode(found[0])
        except (TypeError, ValueError, KeyError, IndexError):
            pass   # not the layout this code writes: parsed again below
    outcome = parse()
    encoded = encode(outcome)
    if encoded is not None:
        memo.store_values(kind, inputs, encoded)
    return outcome


def _tree_json(node: Node | None) -> Any:
    """A ledger's node tree as JSON: [line, "scalar", null or text], [line, "sequence", [children]]
    or [line, "mapping", [[key, key line, child], ...]] (entries in a list: the document's order)."""
    if node is None:
        return None
    value = node.value
    if isinstance(value, list):
        return [node.line, "sequence", [_tree_json(child) for child in value]]
    if isinstance(value, dict):
        return [node.line, "mapping", [[key, key_line, _tree_json(child)] for key, (key_line, child) in value.items()]]
    return [node.line, "scalar", value]


def _tree_from_json(found: Any) -> Node | None:
    if found is None:
        return None
    line, kind, value = found
    if kind == "sequence":
        return Node([_tree_from_json(child) for child in value], line)
    if kind == "mapping":
        return Node({key: (key_line, _tree_from_json(child)) for key, key_line, child in value}, line)
    if kind != "scalar" or not (value is None or isinstance(value, str)):
        raise ValueError(f"not a node: {kind}")
    return Node(value, line)


def _config_json(outcome: tuple[Any, Lines]) -> Any:
    values, lines = outcome
    encoded = _values_json(values)
    return None if encoded is _NOT_JSON else [encoded, lines.lines]


def _config_from_json(found: Any) -> tuple[Any, Lines]:
    encoded, lines = found
    return _values_from_json(encoded), Lines.of(lines)


_NOT_JSON = object()
_SCALARS = (str, bool, int, type(None))


def _values_json(value: Any) -> Any:
    """Constructed YAML values as JSON that gives them back equal, of the same types and in the same
    order: a mapping as {"m": [[key, value], ...]} (YAML keys can be booleans or numbers), a list as
    a list. _NOT_JSON for anything else (a date, a set, a float that is not finite): such a text is
    parsed every time."""
    if isinstance(value, _SCALARS) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, list):
        items = [_values_json(item) for item in value]
        return _NOT_JSON if any(item is _NOT_JSON for item in items) else items
    if isinstance(value, dict):
        pairs = [[_values_json(key), _values_json(item)] for key, item in value.items()]
        return _NOT_JSON if any(part is _NOT_JSON for pair in pairs for part in pair) else {"m": pairs}
    return _NOT_JSON


def _values_from_json(found: Any) -> Any:
    if isinstance(found, list):
        return [_values_from_json(item) for item in found]
    if isinstance(found, dict):
        return {_values_from_json(key): _values_from_json(item) for key, item in found["m"]}
    return found


@functools.lru_cache(maxsize=None)
def load_package_data(path: Path) -> Any:
    """One of the package's own YAML files (a lexicon, a phrasing file), parsed once per process
    and remembered between processes. PyYAML's C loader where it has one: they are read on every
    check."""
    text = path.read_text(encoding="utf-8")

    def parse() -> Any:
        import yaml

        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

    def encode(data: Any) -> Any:
        encoded = _values_json(data)
        return None if encoded is _NOT_JSON else encoded

    return _remembered("yaml package data", text, parse, encode, _values_from_json)
