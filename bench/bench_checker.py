"""Benchmark `readout check`: a generated 10,000-claim ledger, and the shipped ledger from the CLI.

Run: `.venv/bin/python bench/bench_checker.py [--claims 10000] [--runs 3]`

Part 1 builds a throwaway project in a temporary directory: the repository's design documents,
a realistic results.json (the repository's outputs/results.json when it exists, otherwise a
synthetic one with the same shape and 300 per-query entries per row) and a ledger of N claims
cycling through eight claim shapes (design quote, measured value with placeholders, predicate,
manifest path, a struck claim, and three that fail: a missing quote, a path typo, a typed
number). It times a bare `yaml.load` of the same text (the parsing floor), load_ledger, and the whole check_project (ledger + design + freeze +
results) in-process, best and mean of --runs runs, and prints claims per second.

Part 2 times the gate end to end as a user runs it: `readout check --no-record` and `readout
render --check` on both committed projects (the SciFact review and examples/l03), each in a fresh
interpreter, interleaved with a bare start-up (`python -c pass`) in the same run and printed as
ratios to it (see `gate_commands`).
Nothing is written to the repository (--no-record, and part 1 lives in a temporary directory).
"""

from __future__ import annotations

import argparse
import gc
import json
from datetime import datetime, timezone
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from generator.claims.tracing.checker import check_project  # noqa: E402
from generator.claims.record.freeze import freeze_project  # noqa: E402
from generator.claims.language.ledger_loader import load_ledger  # noqa: E402
from generator.project import load_project  # noqa: E402

ROWS = ("dense", "sparse", "hybrid", "hybrid+rerank")


def synthetic_results(queries: int = 300) -> dict:
    import random

    rng = random.Random(20261130)
    table, per_query, comparisons = [], {}, {}
    for row in ROWS:
        if row == "hybrid+rerank":
            table.append({"search": row, "measured": False, "not_measured_reason": "benchmark", "model": "x",
                          "recall@5": None, "recall@50": None, "nDCG@5": None})
            continue
        scores = {str(q): {"recall@5": rng.random(), "recall@50": rng.random(), "nDCG@5": rng.random()}
                  for q in range(queries)}
        per_query[row] = scores
        entry = {"search": row, "measured": True, "model": f"{row}-model"}
        for metric in ("recall@5", "recall@50", "nDCG@5"):
            entry[metric] = sum(s[metric] for s in scores.values()) / queries
        comparisons[f"{row}_vs_dense"] = {"row": row, "baseline": "dense", "measured": True, "metrics": {
            m: {"delta": 0.01, "ci95_low": -0.02, "ci95_high": 0.04, "p_value": 0.3, "wins": 5, "ties": 10,
                "losses": 5} for m in ("recall@5", "nDCG@5")}}
        table.append(entry)
    return {"format_version": 2, "documents": 5183, "queries": queries, "candidate_depth": 50, "table": table,
            "per_query": per_query, "comparisons": comparisons,
            "p95_rerank_milliseconds": None, "same_50_rows_after_rerank": None,
            "manifest": {"inputs": {"corpus.jsonl": {"sha256": "0" * 64, "bytes": 1}}, "threads": 2}}


SHAPES = [
    """  - id: c{i}-frame-comparison
    output: readout
    section: results
    kind: evaluative
    frame: {{comparison: hybrid, against: dense, metric: nDCG@5}}
""",
    """  - id: c{i}-frame-value
    output: teachback
    section: rows
    kind: performance
    frame: {{value: dense, metric: nDCG@5}}
""",
    """  - id: c{i}-frame-quote
    output: readout
    section: limits
    kind: factual
    frame: {{quote: requirements.md, text: "The release sample is 20 queries: enough to see a direction, not to prove a general win."}}
""",
    """  - id: c{i}-design
    output: readout
    section: limits
    kind: factual
    text: "Hybrid fuses the dense and sparse top-50 lists with Reciprocal Rank Fusion, constant 60, ties broken by first appearance, keeping 50."
    sources:
      - design: {{document: decisions.md, quote: "Choice: fuse the dense and sparse top-50 lists with Reciprocal Rank Fusion, constant 60, ties broken by first appearance, keeping 50."}}
""",
    """  - id: c{i}-measured
    output: readout
    section: results
    kind: evaluative
    text: "Hybrid reaches nDCG@5 {{hybrid:.3f}} against dense {{dense:.3f}}."
    sources:
      - measured:
          values: {{hybrid: "table[search=hybrid].nDCG@5", dense: "table[search=dense].nDCG@5"}}
          predicate: "hybrid > dense"
""",
    """  - id: c{i}-per-query
    output: aar
    section: happened
    kind: performance
    text: "Dense gets Recall@5 {{r:.2f}} on query {q}."
    sources:
      - measured:
          values: {{r: "per_query.dense.{q}.recall@5"}}
""",
    """  - id: c{i}-manifest
    output: readout
    section: provenance
    kind: factual
    text: "The corpus hash is {{sha}}."
    sources:
      - measured:
          values: {{sha: 'manifest.inputs["corpus.jsonl"].sha256'}}
""",
    """  - id: c{i}-struck
    output: readout
    section: verdict
    kind: recommendation
    text: "Ship the reranker."
    status: struck
    strike_reason: "the rerank row was not measured"
""",
    """  - id: c{i}-bad-quote
    output: teachback
    section: rows
    kind: factual
    text: "One library, Pyserini, for sparse search."
    sources:
      - design: {{document: decisions.md, quote: "One library, Pyserini, for exact sparse search"}}
""",
    """  - id: c{i}-bad-path
    output: readout
    section: results
    kind: factual
    text: "Dense reaches {{d:.3f}}."
    sources:
      - measured:
          values: {{d: "table[search=dense].nDGC@5"}}
""",
    """  - id: c{i}-typed
    output: aar
    section: why
    kind: factual
    text: "Hybrid uses RRF with constant 60 and scores 0.81."
    sources:
      - design: {{document: decisions.md, quote: "Reciprocal Rank Fusion, constant 60"}}
""",
]


def build_project(root: Path, claims: int) -> Path:
    (root / "claims").mkdir(parents=True)
    (root / "outputs").mkdir()
    shutil.copytree(REPOSITORY / "design", root / "design")
    (root / "readout.yaml").write_text("title: Bench\nkind: beir\n")
    # Frozen before the results exist, at a time before they were made: a review made in order.
    freeze_project(load_project(root), now=datetime(2026, 11, 30, tzinfo=timezone.utc))
    real = REPOSITORY / "outputs"
    if (real / "results.json").exists():
        # the sealed results with the run files and judgements they are re-derived from
        shutil.copy(real / "results.json", root / "outputs" / "results.json")
        shutil.copytree(real / "runs", root / "outputs" / "runs")
        results = json.loads((real / "results.json").read_text())
    else:
        results = synthetic_results()
        (root / "outputs" / "results.json").write_text(json.dumps(results))
    query_ids = sorted(results["per_query"]["dense"])
    parts = ["version: 1\nclaims:\n"]
    for i in range(claims):
        parts.append(SHAPES[i % len(SHAPES)].format(i=i, q=query_ids[i % len(query_ids)]))
    (root / "claims" / "ledger.yaml").write_text("".join(parts))
    return root


def timed(function, runs: int) -> tuple[float, float, object]:
    """Best and mean of `runs` calls. Each starts from a collected heap with the previous result
    dropped: a report of 10k claims kept alive makes every later collection (of both the parse and
    the check) walk it, which is the benchmark's doing, not the checker's (`readout check` runs once)."""
    seconds, value = [], None
    for _ in range(runs):
        value = None
        gc.collect()
        start = time.perf_counter()
        value = function()
        seconds.append(time.perf_counter() - start)
    return min(seconds), statistics.mean(seconds), value


def subprocess_seconds(argv: list[str], runs: int, cwd: Path) -> tuple[float, float, int]:
    seconds, code = [], 0
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY))
    for _ in range(runs):
        start = time.perf_counter()
        completed = subprocess.run(argv, cwd=cwd, capture_output=True, env=env)
        seconds.append(time.perf_counter() - start)
        code = completed.returncode
    return min(seconds), statistics.mean(seconds), code


GATE_COMMANDS = [("check", ["check", "--no-record"]), ("render --check", ["render", "--check"])]
GATE_PROJECTS = [("SciFact review", "."), ("L03 sandbox", "examples/l03")]


def gate_commands(runs: int) -> None:
    """`readout check` and `readout render --check` on both committed projects, each in a fresh
    interpreter, interleaved round by round with a bare start-up so that every ratio is measured
    side by side. One warm-up round first: a user's second check finds its memos and its bytecode
    (generator.storage.memo; PYTHONDONTWRITEBYTECODE is dropped for the children so that, as for a
    user, the package's modules are compiled once, not at every start)."""
    python = sys.executable
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPOSITORY)
    cases = [(f"{command} on the {project}", [python, "-m", "generator.commands.cli", *argv, path])
             for command, argv in GATE_COMMANDS for project, path in GATE_PROJECTS
             if (REPOSITORY / path / "claims" / "ledger.yaml").exists()]
    timings: dict[str, list[float]] = {"bare": [], **{name: [] for name, _ in cases}}
    codes: dict[str, int] = {}
    for round_number in range(runs + 3):
        for name, argv in [("bare", [python, "-c", "pass"]), *cases]:
            start = time.perf_counter()
            completed = subprocess.run(argv, cwd=REPOSITORY, capture_output=True, env=env)
            if round_number:   # the first round warms memos and bytecode
                timings[name].append(time.perf_counter() - start)
            codes[name] = completed.returncode
    bare = statistics.median(timings["bare"])
    print(f"python -c pass (interpreter start-up): median {bare:.3f} s of {len(timings['bare'])}")
    for name, _ in cases:
        median = statistics.median(timings[name])
        print(f"readout {name}: median {median:.3f} s, exit {codes[name]}; {median / bare:.1f}x a bare start-up")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import yaml

    print(f"machine: {platform.platform()}; {platform.processor() or platform.machine()}; "
          f"{os.cpu_count()} CPUs; Python {platform.python_version()}; single thread; "
          f"libyaml {'yes' if getattr(yaml, '__with_libyaml__', False) else 'no'}; runs per figure: {args.runs}")
    with tempfile.TemporaryDirectory() as directory:
        root = build_project(Path(directory) / "bench", args.claims)
        project = load_project(root)
        text = project.ledger_path.read_text(encoding="utf-8")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        yaml_best, yaml_mean, _ = timed(lambda: yaml.load(text, Loader=loader), args.runs)
        print(f"yaml.load alone (baseline: parsing only), {args.claims} claims: best {yaml_best:.3f} s, "
              f"mean {yaml_mean:.3f} s")
        best, mean, ledger = timed(lambda: load_ledger(project.ledger_path), args.runs)
        print(f"load_ledger, {args.claims} claims: best {best:.3f} s, mean {mean:.3f} s "
              f"({args.claims / best:,.0f} claims/s)")
        del ledger
        best, mean, report = timed(lambda: check_project(project), args.runs)
        print(f"check_project, {args.claims} claims: best {best:.3f} s, mean {mean:.3f} s "
              f"({args.claims / best:,.0f} claims/s); untraceable {report.untraceable}/{report.total}, "
              f"struck {report.struck}; {best / yaml_best:.1f}x the bare YAML parse")
    gate_commands(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
