"""A project: a directory with `readout.yaml`, `design/`, `claims/` and `outputs/`.

The repository root is one project (the SciFact review); `examples/l03/` is another (the offline
sandbox). Every command that takes a project directory reads it through `load_project`, so
both projects are built by the same code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import InputError

CONFIG_NAME = "readout.yaml"
PROJECT_KINDS = ("beir", "sandbox")
REPOSITORY_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Project:
    root: Path
    title: str
    kind: str
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def outputs_dir(self) -> Path:
        return self.root / "outputs"

    @property
    def design_dir(self) -> Path:
        return self.root / "design"

    @property
    def claims_dir(self) -> Path:
        return self.root / "claims"

    @property
    def ledger_path(self) -> Path:
        return self.claims_dir / "ledger.yaml"

    @property
    def templates_dir(self) -> Path:
        own = self.root / "templates"
        return own if own.is_dir() else REPOSITORY_ROOT / "templates"

    @property
    def evaluation(self) -> dict[str, Any]:
        """The `evaluate:` mapping of readout.yaml (BEIR projects): default options."""
        return dict(self.config.get("evaluate") or {})

    def resolve(self, relative: str | Path) -> Path:
        """A path from readout.yaml, relative to the project root."""
        path = Path(relative).expanduser()
        return path if path.is_absolute() else (self.root / path)


def load_project(project_dir: str | Path) -> Project:
    import yaml

    root = Path(project_dir).resolve()
    config_path = root / CONFIG_NAME
    if not root.is_dir():
        raise InputError("project directory does not exist", path=str(project_dir))
    if not config_path.is_file():
        raise InputError(f"no {CONFIG_NAME} here: a project directory needs one (see README, 'Projects')",
                         path=str(root))
    try:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"not valid YAML ({getattr(error, 'problem', error)})",
                         path=str(config_path), line=line) from None
    if not isinstance(config, dict):
        raise InputError("expected a mapping at the top level", path=str(config_path), line=1)
    for required in ("title", "kind"):
        if not isinstance(config.get(required), str) or not config[required].strip():
            raise InputError("missing or empty", path=str(config_path), field=required)
    if config["kind"] not in PROJECT_KINDS:
        raise InputError(f"unknown kind {config['kind']!r}; choose one of {', '.join(PROJECT_KINDS)}",
                         path=str(config_path), field="kind")
    return Project(root=root, title=config["title"].strip(), kind=config["kind"], config=config)
