"""A ledger's fields read strictly (generator.claims.language.ledger gives the rules): a mapping
holds only the fields it allows, a text is text with no character a reader cannot see, and a
document name stays inside its folder. Every refusal names the file, the line and the field.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

from generator.claims.language.ledger import RETIRED_FIELDS
from generator.core.results import clip
from generator.storage.errors import InputError
from generator.storage.safe_yaml import Node
from generator.core.text.characters import describe, hidden_character


def _choices(values) -> str:
    return ", ".join(values)


def _mapping(node: Node, path: str, what: str, allowed: tuple[str, ...], line: int | None = None,
             field_name: str | None = None) -> dict[str, tuple[int, Node]]:
    if not isinstance(node.value, dict):
        raise InputError(f"{what} must be a mapping", path=path, line=line or node.line, field=field_name)
    for key, (key_line, _) in node.value.items():
        if key in RETIRED_FIELDS and what == "a claim":
            raise InputError(RETIRED_FIELDS[key], path=path, line=key_line, field=key)
        if key not in allowed:
            raise InputError(f"unknown field in {what}; allowed: {_choices(allowed)}", path=path,
                             line=key_line, field=clip(key))
    return node.value


def _text(entry: tuple[int, Node] | None, path: str, field_name: str, *, required: bool = True,
          claim_id: str | None = None) -> str | None:
    prefix = f"claim {claim_id}: " if claim_id else ""
    if entry is None:
        return None
    line, node = entry
    if node.value is None:
        if required:
            raise InputError(f"{prefix}missing value", path=path, line=line, field=field_name)
        return None
    if not isinstance(node.value, str):
        raise InputError(f"{prefix}must be text, not a {'list' if isinstance(node.value, list) else 'mapping'}",
                         path=path, line=line, field=field_name)
    if required and not node.value.strip():
        raise InputError(f"{prefix}empty value", path=path, line=line, field=field_name)
    # Whatever the checker reads, a reader sees: no text of the ledger holds a character nobody can
    # see (every default-ignorable, format, control or private-use character, generator.core.text.characters).
    hidden = hidden_character(node.value, allow="\n\t")
    if hidden:
        raise InputError(f"{prefix}{field_name} holds the invisible, private-use or control character "
                         f"{describe(hidden)}: remove it (a reader would not see it, the checker would)",
                         path=path, line=line, field=field_name)
    return node.value


@lru_cache(maxsize=4096)
def _valid_document_name(name: str) -> bool:
    if not name or "\\" in name or name.startswith(("/", "~")) or re.match(r"[A-Za-z]:", name):
        return False
    parts = PurePosixPath(name).parts
    # No hidden names: every design document is frozen and citable, or refused; never a dotfile.
    return (bool(parts) and ".." not in parts and not PurePosixPath(name).is_absolute()
            and not any(part.startswith(".") for part in parts))
