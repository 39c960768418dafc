"""The `sandbox:` block of readout.yaml: the L03 parameters and the documented branches.

    sandbox:
      parameters: {cutoff: 3, depth: 5, alpha: 0.55, rerank_weight: 0.25, k1: 1.2, b: 0.75}
      branches:                      # deliberate changes a later run accepts
        - id: BR-001
          reason: why the change is deliberate
          inputs: {data/corpus.jsonl: <new sha256>}
          parameters: {alpha: 0.6}

Validated when the project loads; nothing here reads a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.sandbox.bm25 import DEFAULT_B, DEFAULT_K1

DEFAULT_PARAMETERS: dict[str, Any] = {
    "cutoff": 3,
    "depth": 5,
    "alpha": 0.55,
    "rerank_weight": 0.25,
    "k1": DEFAULT_K1,
    "b": DEFAULT_B,
}
SANDBOX_KEYS = ("parameters", "branches")


@dataclass(frozen=True)
class SandboxConfig:
    """Everything a sandbox run needs from its project, resolved to paths."""

    root: Path
    data_dir: Path
    outputs_dir: Path
    title: str
    parameters: dict[str, Any]
    branches: tuple[dict[str, Any], ...] = ()


def validate_sandbox_block(block: Any, config_display: str) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """(parameters, branches) of the `sandbox:` mapping, defaults filled in."""
    if block is None:
        block = {}
    if not isinstance(block, dict):
        raise InputError("must be a mapping", path=config_display, field="sandbox")
    for key in block:
        if key not in SANDBOX_KEYS:
            raise InputError(f"unknown key; choose from {', '.join(SANDBOX_KEYS)}", path=config_display,
                             field=f"sandbox.{key}")
    return resolve_parameters(block.get("parameters"), config_display), _branches(block, config_display)


def resolve_parameters(overrides: Mapping[str, Any] | None, config_display: str) -> dict[str, Any]:
    parameters = dict(DEFAULT_PARAMETERS)
    if overrides is not None and not isinstance(overrides, Mapping):
        raise InputError("must be a mapping", path=config_display, field="sandbox.parameters")
    for name, value in (overrides or {}).items():
        if name not in DEFAULT_PARAMETERS:
            raise InputError(f"unknown parameter; choose from {', '.join(DEFAULT_PARAMETERS)}",
                             path=config_display, field=f"sandbox.parameters.{name}")
        expected = type(DEFAULT_PARAMETERS[name])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                expected is int and not isinstance(value, int)):
            raise InputError(f"must be {'an integer' if expected is int else 'a number'}, got {value!r}",
                             path=config_display, field=f"sandbox.parameters.{name}")
        parameters[name] = float(value) if expected is float else value
    for name in ("cutoff", "depth"):
        if parameters[name] < 1:
            raise InputError("must be a positive integer", path=config_display, field=f"sandbox.parameters.{name}")
    for name in ("alpha", "rerank_weight", "b"):
        if not 0.0 <= parameters[name] <= 1.0:
            raise InputError("must be in [0, 1]", path=config_display, field=f"sandbox.parameters.{name}")
    if parameters["k1"] < 0:
        raise InputError("must be >= 0", path=config_display, field="sandbox.parameters.k1")
    return parameters


BRANCH_KEYS = ("id", "reason", "inputs", "parameters")


def _branches(config: Mapping[str, Any], config_display: str) -> tuple[dict[str, Any], ...]:
    branches = config.get("branches") or []
    if not isinstance(branches, list):
        raise InputError("must be a list", path=config_display, field="sandbox.branches")
    for index, branch in enumerate(branches):
        field = f"sandbox.branches[{index}]"
        if not isinstance(branch, dict) or not isinstance(branch.get("id"), str) or not isinstance(
                branch.get("reason"), str) or not branch["reason"].strip():
            raise InputError("needs an id and a non-empty reason", path=config_display, field=field)
        # A misspelt key (`paramters:`) would otherwise leave the branch accepting nothing, silently.
        unknown = sorted(str(key) for key in branch if key not in BRANCH_KEYS)
        if unknown:
            raise InputError(f"unknown key; a branch has {', '.join(BRANCH_KEYS)}", path=config_display,
                             field=f"{field}.{unknown[0]}")
        for kind in ("inputs", "parameters"):
            if branch.get(kind) is not None and not isinstance(branch[kind], dict):
                raise InputError("must be a mapping", path=config_display, field=f"{field}.{kind}")
    return tuple(branches)
