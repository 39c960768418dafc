"""Reading a YAML file the safe way, keeping every scalar as the text written and every line.

The ledger is composed, never constructed: PyYAML's safe composer (libyaml's when present) builds
the node tree and this module turns it into `Node`s that remember their line. So `quote: 2030`
stays the string "2030", `status: yes` stays "yes" (and is refused later), duplicate keys are
errors, and no YAML tag can build an object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from generator.errors import InputError

_NULL_SCALARS = frozenset({"", "~", "null", "Null", "NULL"})
_LOADER = None


def _yaml_loader():
    """The safe loader (libyaml's when present) with a resolver that only tells null from text.

    Every scalar is kept as the text written, so the full implicit-type resolver (ints, floats,
    booleans, timestamps) would be wasted work; composing never constructs objects either way.
    """
    global _LOADER
    if _LOADER is None:
        base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

        class LedgerLoader(base):   # type: ignore[misc, valid-type]
            def resolve(self, kind, value, implicit):
                if kind is yaml.ScalarNode:
                    if implicit[0] and value in _NULL_SCALARS:
                        return "tag:yaml.org,2002:null"
                    return "tag:yaml.org,2002:str"
                return super().resolve(kind, value, implicit)

        _LOADER = LedgerLoader
    return _LOADER


@dataclass
class Node:
    value: Any             # str | None | list[Node] | dict[str, tuple[int, Node]]
    line: int


def _convert(node, path: str) -> Node:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:null":
            return Node(None, line)
        return Node(node.value, line)
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(item, path) for item in node.value], line)
    mapping: dict[str, tuple[int, Node]] = {}
    for key_node, value_node in node.value:
        key_line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise InputError("a mapping key must be plain text", path=path, line=key_line)
        key = key_node.value
        if key in mapping:
            raise InputError(f"duplicate key (first at line {mapping[key][0]})", path=path, line=key_line,
                             field=key)
        mapping[key] = (key_line, _convert(value_node, path))
    return Node(mapping, line)


def parse_yaml(text: str, path: str) -> Node | None:
    loader = _yaml_loader()(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise InputError(f"not valid YAML: {problem}", path=path,
                         line=mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
    return None if root is None else _convert(root, path)
