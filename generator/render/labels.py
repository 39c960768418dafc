"""The label registry (templates/labels.yaml): the only fixed words a template may show."""

from __future__ import annotations

from pathlib import Path

from generator.render.doors import Door
from generator.safe_yaml import load_config_with_lines
from generator.errors import InputError
from generator.fileio import read_input, reading
from generator.wording import label_problem

LABELS_NAME = "labels.yaml"


class Labels:
    """The label registry (templates/labels.yaml): the only fixed words a template may show.

    A label is a heading or a table word, never a sentence (generator.wording says
    exactly what that means). Templates write `L.key`; an unknown key stops the render with the
    registry's file name.
    """

    def __init__(self, texts: dict[str, str], door: Door, source: str, extra: dict[str, str] | None = None) -> None:
        self._texts = dict(texts)
        self._texts.update(extra or {})
        self._door = door
        self._source = source

    def __getattr__(self, key: str) -> str:
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key: str) -> str:
        return self._door.data(self.raw(key))

    def raw(self, key: str) -> str:
        """The registry's text before its door: for a label joined to another and escaped once."""
        if key not in self._texts:
            raise InputError(f"no label {key!r}; add it to the label registry", path=self._source)
        return self._texts[key]

    def has(self, key: str) -> bool:
        return key in self._texts


def load_labels(path: Path, display: str | None = None) -> dict[str, str]:
    shown = display or str(path)
    if not path.is_file():
        raise InputError("missing: the label registry every template uses", path=shown)
    with reading(path):
        raw, lines = load_config_with_lines(read_input(path, "label registry", shown).decode("utf-8"), shown)
    raw = raw or {}
    if not isinstance(raw, dict):
        raise InputError("expected a mapping of label key to text", path=shown, line=1)
    for key, text in raw.items():
        problem = label_problem(text)
        if problem:
            raise InputError(problem, path=shown, line=lines.line(str(key)), field=str(key))
    return {str(key): str(text) for key, text in raw.items()}
