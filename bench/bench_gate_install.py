"""Benchmark the GitHub Action's install: the gate's requirement set against the full install, side by side.

Run: `.venv/bin/python bench/bench_gate_install.py [--runs 1]` (a network route to PyPI, or the
wheels pip is configured to find; minutes, most of them the full install).

Each run makes two fresh virtual environments in a temporary directory and times, with pip's cache
off so neither reuses the other's downloads:

- light (action.yml today): the `gate` dependency group of pyproject.toml installed with `pip
  install -r`, then this checkout with `pip install --no-deps .`;
- full (action.yml before): the CPU build of torch (`pip install torch==2.13.0`, from the CPU index
  when it is reachable, else wherever pip is configured to find it), then `pip install .`.

Then it runs `readout --version` in the light environment (it must start) and `python -c "import
torch"` there (it must fail), and prints each install's seconds, its site-packages size and the
ratio full / light. The two are timed in the same run, alternating when --runs > 1, so the
machine and the network are the same for both.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import venv
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-cache-dir", *args], check=True,
                   cwd=REPOSITORY, env={**os.environ, "PIP_NO_CACHE_DIR": "1"})


def _environment(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    return where / "bin" / "python"


def _size(where: Path) -> int:
    return sum(path.stat().st_size for path in where.rglob("*") if path.is_file() and not path.is_symlink())


def _cpu_index_reachable() -> bool:
    try:
        import urllib.request

        urllib.request.urlopen(CPU_INDEX + "/torch/", timeout=10).close()
        return True
    except OSError:
        return False


def light(where: Path) -> float:
    python = _environment(where)
    started = time.monotonic()
    group = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]["gate"]
    requirements = where / "gate-requirements.txt"
    requirements.write_text("\n".join(group) + "\n", encoding="utf-8")
    _pip(python, "-r", str(requirements))
    _pip(python, "--no-deps", str(REPOSITORY))
    elapsed = time.monotonic() - started
    started_up = subprocess.run([str(where / "bin" / "readout"), "--version"], capture_output=True, text=True)
    assert started_up.returncode == 0, started_up.stderr
    no_torch = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    assert no_torch.returncode != 0, "torch is importable in the light environment"
    return elapsed


def full(where: Path, cpu_index: bool) -> float:
    python = _environment(where)
    started = time.monotonic()
    _pip(python, "torch==2.13.0", *(["--index-url", CPU_INDEX] if cpu_index else []))
    _pip(python, str(REPOSITORY))
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    cpu_index = _cpu_index_reachable()
    print(f"{platform.platform()}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs; torch from "
          f"{CPU_INDEX if cpu_index else 'pip configuration (the CPU index is not reachable here)'}")
    times: dict[str, list[float]] = {"light": [], "full": []}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="readout-install-") as directory:
        for run in range(args.runs):
            order = ("light", "full") if run % 2 == 0 else ("full", "light")
            for kind in order:
                where = Path(directory) / f"{kind}-{run}"
                times[kind].append(light(where) if kind == "light" else full(where, cpu_index))
                sizes[kind] = _size(where)
                shutil.rmtree(where)
                print(f"run {run + 1}: {kind} install {times[kind][-1]:.1f} s, {sizes[kind] / 2 ** 20:,.0f} MiB")
    best = {kind: min(values) for kind, values in times.items()}
    print(f"light (the gate set, then --no-deps): best {best['light']:.1f} s, {sizes['light'] / 2 ** 20:,.0f} MiB")
    print(f"full (CPU torch, then the package):   best {best['full']:.1f} s, {sizes['full'] / 2 ** 20:,.0f} MiB")
    print(f"full / light: {best['full'] / best['light']:.1f}x the time, {sizes['full'] / sizes['light']:.1f}x the disk")


if __name__ == "__main__":
    main()
