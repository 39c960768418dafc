"""The label registry (templates/labels.yaml): the only fixed words a template may show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from generator.errors import InputError
from generator.fileio import reading

LABELS_NAME = "labels.yaml"
LABEL_MAX_WORDS = 10


class Labels:
    """The label registry (templates/labels.yaml): the only fixed words a template may show.

    A label is a heading or a table word, never a sentence: at most LABEL_MAX_WORDS words and no
    closing full stop, question or exclamation mark. Templates write `L.key`; an unknown key stops
    the render with the registry's file name.
    """

    def __init__(self, texts: dict[str, str], door, source: str, extra: dict[str, str] | None = None):
        self._texts = dict(texts)
        self._texts.update(extra or {})
        self._door = door
        self._source = source

    def __getattr__(self, key: str):
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key: str):
        if key not in self._texts:
            raise InputError(f"no label {key!r}; add it to the label registry", path=self._source)
        return self._door.data(self._texts[key])

    def has(self, key: str) -> bool:
        return key in self._texts


def load_labels(path: Path, display: str | None = None) -> dict[str, str]:
    shown = display or str(path)
    if not path.is_file():
        raise InputError("missing: the label registry every template uses", path=shown)
    with reading(path):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as error:
            raise InputError(f"not valid YAML ({error})", path=shown) from None
    if not isinstance(raw, dict):
        raise InputError("expected a mapping of label key to text", path=shown, line=1)
    for key, text in raw.items():
        validate_label(text, path=shown, field=str(key))
    return {str(key): str(text) for key, text in raw.items()}


def validate_label(text: Any, *, path: str, field: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise InputError("a label must be a non-empty string", path=path, field=field)
    if len(text.split()) > LABEL_MAX_WORDS or text.rstrip().endswith((".", "!", "?")):
        raise InputError(f"a label is a heading or a table word, not a sentence (at most {LABEL_MAX_WORDS} "
                         f"words, no closing punctuation): put prose in the claim ledger", path=path, field=field)
