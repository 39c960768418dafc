"""The README documents every command, and its checked examples are real output.

A console block preceded by `<!-- output-checked -->` is run from the repository root; its
output (stdout then stderr) must match the block, and a final `[exit N]` line gives the exit
code (0 when absent).
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli import COMMANDS

REPOSITORY = Path(__file__).resolve().parent.parent
README = (REPOSITORY / "README.md").read_text(encoding="utf-8")
CHECKED_BLOCK = re.compile(r"<!-- output-checked -->\n```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)


def _checked_blocks():
    return [(match["command"], match["output"]) for match in CHECKED_BLOCK.finditer(README)]


@pytest.mark.parametrize("name", [command[0] for command in COMMANDS])
def test_every_command_is_documented_and_has_help(name):
    assert re.search(rf"`readout {re.escape(name)}\b", README), f"README has no section for readout {name}"
    completed = subprocess.run([sys.executable, "-m", "generator.cli", name, "--help"], capture_output=True,
                               text=True, cwd=REPOSITORY)
    assert completed.returncode == 0
    assert completed.stdout.startswith(f"usage: readout {name}")


def test_readme_has_checked_examples():
    assert len(_checked_blocks()) >= 6


@pytest.mark.parametrize("command,expected", _checked_blocks(), ids=[c for c, _ in _checked_blocks()])
def test_checked_readme_example_is_real_output(command, expected):
    words = shlex.split(command)
    assert words[0] == "readout"
    expected_code = 0
    lines = expected.rstrip("\n").split("\n")
    if lines and re.fullmatch(r"\[exit \d+\]", lines[-1]):
        expected_code = int(lines.pop()[6:-1])
    completed = subprocess.run([sys.executable, "-m", "generator.cli", *words[1:]], capture_output=True,
                               text=True, cwd=REPOSITORY)
    assert (completed.stdout + completed.stderr).rstrip("\n") == "\n".join(lines)
    assert completed.returncode == expected_code
