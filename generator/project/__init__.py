"""A project: a directory with `readout.yaml`, `design/`, `claims/` and `outputs/`.

The repository root is one project (the SciFact review, `kind: beir`); `examples/l03/` is
another (the offline sandbox, `kind: sandbox`). Every command reads a project through
`load_project`, which validates the whole readout.yaml once: `title`, `kind`, `data`, the
`evaluate:` block (generator.evaluate.options), the `sandbox:` block
(generator.sandbox.config) and the `outputs:` block (generator.project.outputs). Everything
downstream receives typed values and never re-reads the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import InputError
from generator.evaluate.options import EvaluationOptions, build_options, validate_evaluate_block
from generator.fileio import display_path, reading
from generator.project.outputs import OutputSpec, parse_outputs
from generator.wording import label_problem
from generator.safe_yaml import load_config_with_lines
from generator.sandbox.config import SandboxConfig, validate_sandbox_block

CONFIG_NAME = "readout.yaml"
PROJECT_KINDS = ("beir", "sandbox")
TOP_KEYS = ("title", "kind", "data", "evaluate", "sandbox", "outputs")
DEFAULT_DATA = {"beir": "data/scifact", "sandbox": "data"}
REPOSITORY_ROOT = Path(__file__).resolve().parent.parent.parent

LEDGER_NAME = "ledger.yaml"
FREEZE_NAME = "design-freeze.json"
HISTORY_NAME = "trace-history.jsonl"
FIRST_DRAFT_NAME = "ledger.first-draft.yaml"


@dataclass(frozen=True)
class Project:
    root: Path
    title: str
    kind: str
    data: str
    outputs: dict[str, OutputSpec] | None = None
    evaluate: dict[str, Any] = field(default_factory=dict)
    sandbox_parameters: dict[str, Any] = field(default_factory=dict)
    sandbox_branches: tuple[dict[str, Any], ...] = ()

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
        return self.claims_dir / LEDGER_NAME

    @property
    def freeze_path(self) -> Path:
        return self.claims_dir / FREEZE_NAME

    @property
    def history_path(self) -> Path:
        return self.claims_dir / HISTORY_NAME

    @property
    def templates_dir(self) -> Path:
        own = self.root / "templates"
        return own if own.is_dir() else REPOSITORY_ROOT / "templates"

    @property
    def data_dir(self) -> Path:
        return self.resolve(self.data)

    def resolve(self, relative: str | Path) -> Path:
        """A path from readout.yaml, relative to the project root."""
        path = Path(relative).expanduser()
        return path if path.is_absolute() else (self.root / path)

    def evaluation_options(self, **overrides: Any) -> EvaluationOptions:
        """Defaults < the `evaluate:` block < overrides (command-line options) that are not None."""
        return build_options(self.data_dir, self.outputs_dir, self.evaluate, **overrides)

    def sandbox_config(self) -> SandboxConfig:
        return SandboxConfig(root=self.root, data_dir=self.data_dir, outputs_dir=self.outputs_dir,
                             title=self.title, parameters=dict(self.sandbox_parameters),
                             branches=self.sandbox_branches)

    def require_outputs(self) -> dict[str, OutputSpec]:
        if self.outputs is None:
            raise InputError("missing: declare the outputs, their sections and table (see "
                             "generator/project/outputs.py)", path=display_path(self.config_path), field="outputs")
        return self.outputs

    def require_kind(self, kind: str, command: str) -> None:
        if self.kind != kind:
            raise InputError(f"kind is {self.kind!r}; `readout {command}` needs kind: {kind}",
                             path=display_path(self.config_path), field="kind")


def load_project(project_dir: str | Path) -> Project:
    root = Path(project_dir).resolve()
    config_path = root / CONFIG_NAME
    shown = display_path(config_path)
    if not root.is_dir():
        raise InputError("project directory does not exist", path=str(project_dir))
    if not config_path.is_file():
        raise InputError(f"no {CONFIG_NAME} here: a project directory needs one (see README, 'Projects')",
                         path=display_path(root))
    with reading(config_path):
        try:
            text = config_path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text (byte {error.start})", path=shown) from None
        config, lines = load_config_with_lines(text, shown)
    try:
        return _validated(root, config or {}, shown)
    except InputError as error:
        # Every check below names the key; the line is added here, once, from the document itself.
        if error.path == shown and error.line is None and error.field:
            raise InputError(error.reason, path=shown, line=lines.line(error.field), field=error.field) from None
        raise


def _validated(root: Path, config: Any, shown: str) -> Project:
    if not isinstance(config, dict):
        raise InputError("expected a mapping at the top level", path=shown, line=1)
    for key in config:
        if key not in TOP_KEYS:
            raise InputError(f"unknown key; choose from {', '.join(TOP_KEYS)}", path=shown, field=str(key))
    for required in ("title", "kind"):
        if not isinstance(config.get(required), str) or not config[required].strip():
            raise InputError("missing or empty", path=shown, field=required)
    problem = label_problem(config["title"])
    if problem:
        raise InputError(problem, path=shown, field="title")
    kind = config["kind"]
    if kind not in PROJECT_KINDS:
        raise InputError(f"unknown kind {kind!r}; choose one of {', '.join(PROJECT_KINDS)}", path=shown, field="kind")
    data = config.get("data", DEFAULT_DATA[kind])
    if not isinstance(data, str) or not data.strip():
        raise InputError("expected a directory path", path=shown, field="data")
    outputs = parse_outputs(config["outputs"], shown) if config.get("outputs") is not None else None
    parameters, branches = validate_sandbox_block(config.get("sandbox"), shown)
    return Project(root=root, title=config["title"].strip(), kind=kind, data=data, outputs=outputs,
                   evaluate=validate_evaluate_block(config.get("evaluate"), shown),
                   sandbox_parameters=parameters, sandbox_branches=branches)
