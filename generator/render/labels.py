"""The label registry (templates/labels.yaml): the only fixed words a template may show.

Every word the tool's pages show is the package's: its state and verdict words ("fires", "does
not fire", "cannot be decided"), "post hoc", "not measured", the decision table's headings and
every other label of the package's registry. A project's own `templates/labels.yaml` may add
labels (for the words of its content slots, generator.render.shell) and may repeat a package label
word for word (a copied registry), but a key the package defines with other words is refused with
its line: no team can relabel "does not fire" as "fires".
"""

from __future__ import annotations

from pathlib import Path

from generator.render.doors import Door
from generator.storage.safe_yaml import load_config_with_lines
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.paths import display_path, reading
from generator.project import default_templates_dir
from generator.core.text.wording import label_problem

LABELS_NAME = "labels.yaml"


class Labels:
    """The label registry (templates/labels.yaml): the only fixed words a template may show.

    A label is a heading or a table word, never a sentence (generator.core.text.wording says
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


def package_labels_path() -> Path:
    return default_templates_dir() / LABELS_NAME


def _read(path: Path, shown: str) -> tuple[dict[str, str], object]:
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
    return {str(key): str(text) for key, text in raw.items()}, lines


def load_labels(path: Path, display: str | None = None) -> dict[str, str]:
    """The registry a page reads: the package's, with a project's own labels.yaml added to it (a
    project's file may add keys, never give a package key other words). A project's templates
    folder without a labels.yaml reads the package's."""
    package_path = package_labels_path()
    package, _ = _read(package_path, display_path(package_path))
    if path.resolve() == package_path.resolve() or (not path.exists() and path.parent.is_dir()):
        return package
    shown = display or display_path(path)
    own, lines = _read(path, shown)
    for key, text in own.items():
        if key in package and text != package[key]:
            raise InputError(f"the tool's own word, {package[key]!r} on every page: a project's labels.yaml may add "
                             "labels for its content slots, never give the tool's labels other words",
                             path=shown, line=lines.line(key), field=key)   # type: ignore[attr-defined]
    return {**package, **own}
