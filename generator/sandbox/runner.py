"""Running the L03 sandbox for a project: stop conditions, then the outputs, written atomically.

Stop conditions: `outputs/run_manifest.json` records the sha256 of every input and the
parameters. A later run whose input hash or parameter differs from the recorded one, and is not
documented by a `sandbox.branches` entry of readout.yaml, is marked invalid (run_manifest.json
and results.json say which input or parameter changed, no results are reported).

Run files are TREC runs written by the shared writer (generator.core.runfiles), tab
separated, with float32 scores stepped so trec_eval keeps the tool's order (ties by document id).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import field
from pathlib import Path
from typing import Any, Mapping, Sequence

from generator import __version__
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.core.runfiles import QRELS_COPY_NAME, format_qrels, format_run, qrels_copy_entry
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import dumps_json, sha256_bytes, write_set
from generator.storage.paths import display_path, reading
from generator.core.results import RESULTS_NAME, seal
from generator.core.results.builders import (invalid_sandbox_record, recorded_run_manifest, sandbox_run_manifest,
                                             with_manifest)
from generator.sandbox.bm25 import TOKEN_PATTERN
from generator.sandbox.config import SandboxConfig
from generator.sandbox.inputs import hash_inputs, load_inputs
from generator.sandbox.pipeline import (RERANK_FEATURE, RUN_FILES, SandboxResult, acquisition_funnel,
                                        metrics_for, refuse_visibility, run_pipeline)

MANIFEST_NAME = "run_manifest.json"
METRIC_DECIMALS = 6


def compare_with_recorded(recorded: Mapping[str, Any] | None, inputs: Mapping[str, Mapping[str, Any]],
                          parameters: Mapping[str, Any],
                          branches: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(undocumented changes, changes a branch documents) versus the recorded manifest."""
    if recorded is None:
        return [], []
    invalid, accepted = [], []
    recorded_inputs = recorded.get("inputs") or {}
    recorded_parameters = recorded.get("parameters") or {}

    def branch_for(kind: str, name: str, value: Any) -> str | None:
        for branch in branches:
            if name in (branch.get(kind) or {}) and branch[kind][name] == value:
                return str(branch.get("id"))
        return None

    def hash_of(entry: Any) -> Any:
        return (entry or {}).get("sha256")

    comparisons = (
        ("inputs", {n: hash_of(e) for n, e in recorded_inputs.items()}, {n: hash_of(e) for n, e in inputs.items()},
         lambda name, new, old: f"input {name} changed (sha256 {str(new)[:12]} recorded {str(old)[:12]})"),
        ("parameters", recorded_parameters, parameters,
         lambda name, new, old: f"parameter {name} changed ({new!r} recorded {old!r})"),
    )
    for kind, recorded, current, describe in comparisons:
        for name in sorted(set(recorded) | set(current)):
            old, new = recorded.get(name), current.get(name)
            if old == new:
                continue
            branch = branch_for(kind, name, new)
            change = describe(name, new, old)
            if branch is None:
                invalid.append(change + " with no documented branch")
            else:
                accepted.append(f"{change}, documented by branch {branch}")
    return invalid, accepted


def format_error_analysis(rows: Sequence[Mapping[str, Any]], k: int) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["topic_id", "run", "relevant", f"top_{k}", "misses", "not_in_candidates",
                     f"recall@{k}", f"ndcg@{k}", "diagnosis"])
    for row in rows:
        writer.writerow([row["topic_id"], row["run"], " ".join(row["relevant"]), " ".join(row["top"]),
                         " ".join(row["misses"]), " ".join(row["not_in_candidates"]),
                         f"{row['recall']:.{METRIC_DECIMALS}f}", f"{row['ndcg']:.{METRIC_DECIMALS}f}",
                         row["diagnosis"]])
    return buffer.getvalue()


def _recorded_manifest(path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    with reading(path):
        try:
            manifest = json.loads(read_input(path, "sandbox input").decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InputError(f"recorded manifest is not valid JSON ({error}); delete it to start a new baseline",
                             path=display_path(path)) from None
    if not isinstance(manifest, dict):
        raise InputError("recorded manifest is not a JSON object", path=display_path(path))
    return recorded_run_manifest(manifest)


@dataclass
class SandboxOutcome:
    """A sandbox run: valid with its result, or invalid with the reasons (nothing reported)."""

    valid: bool
    result: SandboxResult | None = None
    invalid_reasons: list[str] = field(default_factory=list)
    accepted_changes: list[str] = field(default_factory=list)
    funnel: dict[str, Any] = field(default_factory=dict)
    manifest_path: Any = None


def run_sandbox(config: SandboxConfig, *, report_visibility: bool = False) -> SandboxOutcome:
    """Run the sandbox on a project and write its outputs (or the invalid-run record)."""
    parameters = config.parameters
    inputs = load_inputs(config.data_dir)
    funnel = acquisition_funnel(inputs.ledger)
    if report_visibility:
        refuse_visibility(funnel)

    out = config.outputs_dir
    manifest_path = out / MANIFEST_NAME
    hashed = hash_inputs(config.root, config.data_dir)
    recorded = _recorded_manifest(manifest_path)
    invalid, accepted = compare_with_recorded(recorded, hashed, parameters, config.branches)
    details = {
        "tokenizer": {"pattern": TOKEN_PATTERN, "flags": "IGNORECASE", "lowercase": True,
                      "fields": "title + ' ' + text"},
        "fusion": "alpha * minmax(bm25) + (1 - alpha) * minmax(opaque); alpha weights BM25",
        "reranker": {"feature": RERANK_FEATURE, "formula": "(1 - weight) * hybrid + weight * coverage"},
        "branches": [{"id": b["id"], "reason": b["reason"]} for b in config.branches],
        "opaque_model_identity": inputs.opaque_metadata.get("model_identity"),
    }
    manifest = sandbox_run_manifest(valid=not invalid, inputs=hashed, parameters=parameters, details=details,
                                    invalid_reasons=invalid, recorded=recorded)
    if invalid:
        write_set([(manifest_path, dumps_json(manifest).encode("utf-8")),
                   (out / RESULTS_NAME, dumps_json(invalid_sandbox_record(
                       invalid, "no results are reported for an invalid run; document the change as a "
                                "sandbox.branches entry in readout.yaml or restore the recorded input")).encode("utf-8"))])
        return SandboxOutcome(valid=False, invalid_reasons=invalid, funnel=funnel, manifest_path=manifest_path)

    result = run_pipeline(inputs, parameters)
    write_set(_output_set(out, result, inputs, manifest, hashed, parameters, funnel))
    return SandboxOutcome(valid=True, result=result, accepted_changes=accepted, funnel=funnel,
                          manifest_path=manifest_path)


def _output_set(out: Path, result: SandboxResult, inputs: Any, manifest: dict[str, Any], hashed: dict[str, Any],
                parameters: dict[str, Any], funnel: dict[str, Any]) -> list[tuple[Path, bytes]]:
    """Every file of a valid run, results.json last: it records the sha256 of every other file
    (generator.storage.fileio.write_set)."""
    k = parameters["cutoff"]
    files: list[tuple[Path, bytes]] = []
    run_files = {}
    for name, relative in RUN_FILES.items():
        data = format_run(result.runs[name], name, separator="\t").encode("utf-8")
        files.append((out / relative, data))
        run_files[name] = {"path": relative, "sha256": sha256_bytes(data)}
    qrels = format_qrels(inputs.qrels).encode("utf-8")
    files.append((out / "runs" / QRELS_COPY_NAME, qrels))
    side_files = {
        "topic_error_analysis.csv": format_error_analysis(result.error_rows, k).encode("utf-8"),
        "stage_boundary.json": dumps_json(result.stage_boundary).encode("utf-8"),
        "acquisition_funnel.json": dumps_json(funnel).encode("utf-8"),
        MANIFEST_NAME: dumps_json(manifest).encode("utf-8"),
    }
    files.extend((out / name, data) for name, data in side_files.items())
    results = with_manifest(
        result.results, inputs=hashed, parameters=parameters,
        query_ids=[topic["topic_id"] for topic in inputs.topics],
        metrics={metric.name: metric.as_manifest() for metric in metrics_for(k)}, run_files=run_files,
        qrels_copy=qrels_copy_entry(f"runs/{QRELS_COPY_NAME}", qrels, inputs.qrels),
        files={name: sha256_bytes(data) for name, data in sorted(side_files.items())})
    results = seal(results, writer=f"readout sandbox {__version__}")
    files.append((out / RESULTS_NAME, dumps_json(results).encode("utf-8")))
    return files
