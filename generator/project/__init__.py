"""A project: a directory with `readout.yaml`, `design/`, `claims/` and `outputs/`.

The repository root is one project (the SciFact review, `kind: beir`); `examples/l03/` is
another (the offline sandbox, `kind: sandbox`). Every command reads a project through
`load_project`, which validates the whole readout.yaml once: `title`, `kind`, `data`, the
`evaluate:` block (generator.core.options), the `sandbox:` block
(generator.sandbox.config), the `outputs:` block (generator.project.outputs) and the
`regression:` block (the committed baseline results file a `since_baseline` section shows). Everything
downstream receives typed values and never re-reads the file, so every command that reads the
`evaluate:` block (evaluate, build, cost) sees it validated the same way.

Every problem is one line, `readout.yaml:LINE: key: message`. `data` is a non-empty path; an
empty `data:` is an error, never the working directory. A key or a value a message repeats is cut
to generator.storage.errors.MAX_ECHO_CHARS characters, so no readout.yaml makes an unreadable line.

The same rules, as a JSON Schema for editors and readers, ship as `config.schema.json` beside
this module; docs/config.md is generated from it (generator.project.reference), and
tests/test_config_reference.py holds the schema, the page and these checks to one another.

Modules: `outputs` (the `outputs:` block: sections, columns and charts per report) and `reference`
(the JSON Schema and the generated docs/config.md).
"""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.core.options import RESULTS_FILE, RESULTS_NAME, EvaluationOptions, build_options, validate_evaluate_block
from generator.core.data_source import identifier_of
from generator.storage.bounded_reads import read_input
from generator.storage.paths import display_path, reading, resolved
from generator.project.outputs import OutputSpec, parse_outputs
from generator.storage.errors import MAX_ECHO_CHARS, clip, excerpt
from generator.core.text.wording import label_problem
from generator.storage.safe_yaml import load_config_with_lines
from generator.sandbox.config import SandboxConfig, validate_sandbox_block

CONFIG_NAME = "readout.yaml"
PROJECT_KINDS = ("beir", "sandbox")
TOP_KEYS = ("title", "kind", "data", "evaluate", "sandbox", "outputs", "regression")
REGRESSION_KEYS = ("baseline",)
# The longest message a readout.yaml check may print (the file, line and key come before it).
MAX_MESSAGE_CHARS = 200
DEFAULT_DATA = {"beir": "data/scifact", "sandbox": "data"}
REPOSITORY_ROOT = Path(__file__).resolve().parent.parent.parent
# The JSON Schema of readout.yaml (draft 2020-12), package data beside this module: the same rules
# as the checks below, for editors and for docs/config.md (generator.project.reference).
CONFIG_SCHEMA_PATH = Path(__file__).resolve().parent / "config.schema.json"
# The repository's top-level templates/ is installed as package data `generator/templates`
# (pyproject.toml maps it there), so an installed wheel renders with its own copy.
PACKAGED_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

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
    # readout.yaml's regression.baseline: the committed baseline results file, relative to the
    # project, that a `since_baseline` section compares with (never a git ref: a report reads the
    # same in every clone).
    regression_baseline: str | None = None

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
        """The project's own templates/ folder, else the default templates (default_templates_dir)."""
        own = self.root / "templates"
        return own if own.is_dir() else default_templates_dir()

    @property
    def data_dir(self) -> Path:
        """The dataset directory; an `irds:` identifier passes through as it is (the evaluation
        options turn it into its export in the cache, generator.evaluate.irds)."""
        return Path(self.data) if identifier_of(self.data) else self.resolve(self.data)

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

    @property
    def results_files(self) -> tuple[str, ...]:
        """The results files the project declares: the release sample's, and (a BEIR project's)
        the every-query file `evaluate.all_results` names."""
        if self.kind != "beir":
            return (RESULTS_NAME,)
        return (RESULTS_NAME, str(self.evaluate.get("all_results", RESULTS_FILE["all"])))

    def require_kind(self, kind: str, command: str) -> None:
        if self.kind != kind:
            raise InputError(f"kind is {self.kind!r}; `readout {command}` needs kind: {kind}",
                             path=display_path(self.config_path), field="kind")


def default_templates_dir() -> Path:
    """The templates a project without its own templates/ renders with: the copy installed with
    the package (a wheel or `pip install .`), else the repository's templates/ (a source checkout
    or an editable install, where the package is the repository's generator/)."""
    return PACKAGED_TEMPLATES if PACKAGED_TEMPLATES.is_dir() else REPOSITORY_ROOT / "templates"


def load_project(project_dir: str | Path) -> Project:
    root = resolved(project_dir)
    config_path = root / CONFIG_NAME
    shown = display_path(config_path)
    if not root.is_dir():
        raise InputError("project directory does not exist", path=str(project_dir))
    if not os.path.lexists(config_path):
        raise InputError(f"no {CONFIG_NAME} here: a project directory needs one (see docs/commands.md, 'Projects')",
                         path=display_path(root))
    with reading(config_path):
        raw = read_input(config_path, "readout.yaml", shown)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text (byte {error.start:,} of the file, 0x{raw[error.start]:02x})",
                             path=shown, line=raw.count(b"\n", 0, error.start) + 1) from None
        config, lines = load_config_with_lines(text, shown)
    try:
        return _validated(root, config if config is not None else {}, shown)
    except InputError as error:
        if error.path != shown:
            raise
        # Every check below names the key; the line is added here, once, from the document itself,
        # and the key and the message are cut here, once, whichever module wrote them.
        line = error.line if error.line is not None else lines.line(error.field)
        field = clip(error.field, MAX_ECHO_CHARS) if error.field else error.field
        raise InputError(clip(error.reason, MAX_MESSAGE_CHARS), path=shown, line=line, field=field) from None


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
        raise InputError(f"unknown kind {excerpt(kind)}; choose one of {', '.join(PROJECT_KINDS)}", path=shown,
                         field="kind")
    data = config.get("data", DEFAULT_DATA[kind])
    if data is None or (isinstance(data, str) and not data.strip()):
        # Never the working directory: an empty path would resolve to wherever the command runs.
        raise InputError(f"empty; give the dataset directory, relative to the project (default "
                         f"{DEFAULT_DATA[kind]!r} when the key is left out)", path=shown, field="data")
    if not isinstance(data, str):
        raise InputError(f"expected a directory path as text, found {_kind(data)}: {excerpt(data)}", path=shown,
                         field="data")
    if "\x00" in data:
        raise InputError("a path cannot hold a NUL character", path=shown, field="data")
    outputs = parse_outputs(config["outputs"], shown) if config.get("outputs") is not None else None
    parameters, branches = validate_sandbox_block(config.get("sandbox"), shown)
    project = Project(root=root, title=config["title"].strip(), kind=kind, data=data, outputs=outputs,
                      evaluate=validate_evaluate_block(config.get("evaluate"), shown),
                      sandbox_parameters=parameters, sandbox_branches=branches,
                      regression_baseline=_regression_baseline(config.get("regression"), shown))
    for name, spec in (outputs or {}).items():
        if spec.table is not None and spec.table.file not in project.results_files:
            raise InputError(f"{spec.table.file!r} is not a results file this project declares; choose one of "
                             f"{', '.join(project.results_files)}", path=shown, field=f"outputs.{name}.table.file")
    if project.regression_baseline is not None and Path(os.path.realpath(project.resolve(
            project.regression_baseline))).is_relative_to(os.path.realpath(project.outputs_dir)):
        # outputs/ holds only what readout writes (the gate refuses anything else there)
        raise InputError("the baseline is a committed copy of the last release, not an output: keep it outside "
                         "outputs/, e.g. baseline/results.json with its runs folder beside it", path=shown,
                         field="regression.baseline")
    for name, spec in (outputs or {}).items():
        for index, section in enumerate(spec.sections):
            if "since_baseline" in section.show and project.regression_baseline is None:
                raise InputError("since_baseline needs regression.baseline in readout.yaml: the committed baseline "
                                 "results file it compares with", path=shown,
                                 field=f"outputs.{name}.sections[{index}].show")
    return project


def _regression_baseline(block: Any, shown: str) -> str | None:
    """readout.yaml's `regression:` block: `baseline`, a results file inside the project."""
    if block is None:
        return None
    if not isinstance(block, dict):
        raise InputError(f"expected a mapping such as {{baseline: baseline/results.json}}, found "
                         f"{_kind(block)}", path=shown, field="regression")
    for key in block:
        if key not in REGRESSION_KEYS:
            raise InputError(f"unknown key; choose from {', '.join(REGRESSION_KEYS)}", path=shown,
                             field=f"regression.{key}")
    baseline = block.get("baseline")
    if baseline is None:
        return None
    if not isinstance(baseline, str):
        raise InputError(f"expected a results file path as text, found {_kind(baseline)}: {excerpt(baseline)}",
                         path=shown, field="regression.baseline")
    path = Path(baseline)
    if (not baseline.strip() or "\x00" in baseline or path.is_absolute() or ".." in path.parts or "\\" in baseline
            or not baseline.endswith(".json")):
        raise InputError("a results file (.json) inside the project, relative to it, e.g. "
                         "baseline/results.json: every clone renders the same report", path=shown,
                         field="regression.baseline")
    return baseline


def _kind(value: Any) -> str:
    """What a YAML value is, as a message names it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return "text"
    return f"a {type(value).__name__}"
