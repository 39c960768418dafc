"""docs/cli.md, the command-line reference, is exactly what docs/generate_cli_reference.py writes
now: `readout --help` and every command's `--help`, at a fixed width (as cog and sqlite-utils keep
their CLI references current). An option or a help text changed without a regenerated page fails.

argparse lays help out differently from one Python version to the next (3.13 prints a metavar once,
3.14 may colour it), so the page is written with the project's main interpreter, Python 3.11, and
compared there; on another version these tests are skipped, and the generator refuses to write.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from generator.commands.cli import COMMANDS
from tests.conftest import run_python

REPOSITORY = Path(__file__).resolve().parents[1]
PAGE = REPOSITORY / "docs" / "cli.md"

sys.path.insert(0, str(REPOSITORY / "docs"))
try:
    import generate_cli_reference as reference
finally:
    sys.path.pop(0)

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] != reference.REFERENCE_PYTHON,
    reason=f"docs/cli.md is written with Python {'.'.join(map(str, reference.REFERENCE_PYTHON))}; "
           "argparse lays help out differently on other versions")


@pytest.fixture(scope="module")
def fresh() -> str:
    return reference.render_cli_reference()


def _sections(page: str) -> dict[str, str]:
    """Each `## `TITLE`` heading's help text, from its fenced block."""
    return {match["title"]: match["help"]
            for match in re.finditer(r"^## `(?P<title>[^`]+)`\n\n```text\n(?P<help>.*?)\n```$", page, re.S | re.M)}


def test_the_committed_page_is_what_the_script_writes_now(fresh):
    assert PAGE.read_text(encoding="utf-8") == fresh, f"docs/cli.md is stale: run `{reference.REGENERATE}`"


def test_the_page_has_the_top_level_help_and_one_section_per_command_in_order(fresh):
    sections = _sections(fresh)
    assert list(sections) == ["readout"] + [f"readout {name}" for name, *_ in COMMANDS]
    assert sections["readout"].startswith("usage: readout [-h]")
    for name, summary, *_ in COMMANDS:
        text = sections[f"readout {name}"]
        assert text.startswith(f"usage: readout {name} "), name
        assert f"\n{summary[0].upper()}{summary[1:]}.\n" in text, name   # the description argparse prints
        assert "\noptions:\n  -h, --help" in text, name
    for name, *_ in COMMANDS:   # the table of contents links every section
        assert f"- [`readout {name}`](#readout-{name})" in fresh


def test_each_section_is_the_commands_own_help_output():
    """What a user's `readout NAME --help` prints at the page's width, through the usual child
    process (conftest.run_python), is the page's block: the script reads help the same way."""
    sections = _sections(PAGE.read_text(encoding="utf-8"))
    for words, title in ((["--help"], "readout"), (["export", "--help"], "readout export")):
        completed = run_python("-m", "generator.commands.cli", *words, cwd=REPOSITORY,
                               env={**reference._environment(), "COLUMNS": str(reference.COLUMNS)})
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.rstrip("\n") == sections[title]


@pytest.mark.parametrize("columns", ["40", "250"])
def test_the_width_is_fixed_whatever_the_terminal(monkeypatch, columns):
    """argparse wraps to shutil.get_terminal_size, which reads COLUMNS: the script sets its own."""
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setenv("LINES", "10")
    text = reference.command_help("evaluate")
    assert text.rstrip("\n") == _sections(PAGE.read_text(encoding="utf-8"))["readout evaluate"]
    assert max(len(line) for line in text.splitlines()) <= reference.COLUMNS
    assert any(len(line) > 90 for line in text.splitlines())   # wrapped at 100, not at 40 or 80


def test_check_fails_on_a_stale_page_and_writing_makes_it_current(tmp_path, fresh, capsys, monkeypatch):
    # The page the script renders now is the module's `fresh` (rendered once, one child per command).
    monkeypatch.setattr(reference, "render_cli_reference", lambda: fresh)
    page = tmp_path / "cli.md"
    page.write_text(fresh.replace("--mutant", "--mutated", 1), encoding="utf-8")
    assert reference.main(["--check"], page=page) == 1
    assert "stale" in capsys.readouterr().out
    assert page.read_text(encoding="utf-8") != fresh   # --check writes nothing
    assert reference.main([], page=page) == 0
    assert page.read_text(encoding="utf-8") == fresh
    assert reference.main(["--check"], page=page) == 0
