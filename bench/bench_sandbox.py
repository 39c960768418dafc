"""Benchmark `readout sandbox`: the whole offline L03 run in a fresh interpreter, as a user runs it.

Run: `.venv/bin/python bench/bench_sandbox.py [--runs 5]`

Times `python -m generator.commands.cli sandbox <copy of examples/l03>` next to a bare interpreter start-up
(`python -c pass`) and `python -c "import generator.commands.cli"` in the same run, best and mean of
--runs runs each, and prints the ratios, so the sandbox's own share is visible. The example is
copied to a temporary directory: nothing in the repository is written.
"""

from __future__ import annotations

import argparse
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


def seconds(argv: list[str], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        completed = subprocess.run(argv, cwd=REPOSITORY, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if completed.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {completed.stderr.strip()}")
    return min(times), statistics.mean(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"runs {args.runs} each (best / mean)")
    with tempfile.TemporaryDirectory() as temporary:
        project = Path(temporary) / "l03"
        shutil.copytree(REPOSITORY / "examples" / "l03", project)
        bare = seconds([sys.executable, "-c", "pass"], args.runs)
        imported = seconds([sys.executable, "-c", "import generator.commands.cli"], args.runs)
        sandbox = seconds([sys.executable, "-m", "generator.commands.cli", "sandbox", str(project)], args.runs)
    for label, (best, mean) in (("python -c pass", bare), ("import generator.commands.cli", imported),
                                ("readout sandbox (L03)", sandbox)):
        print(f"{label:<24} {best:.3f} s / {mean:.3f} s   ({best / bare[0]:.1f}x a bare interpreter)")


if __name__ == "__main__":
    main()
