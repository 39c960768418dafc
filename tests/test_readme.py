"""The README documents every command, and its checked examples are real output.

A console block preceded by `<!-- output-checked -->` is run from the repository root; its
output (stdout then stderr) must match the block, and a final `[exit N]` line gives the exit
code (0 when absent).

A block preceded by `<!-- output-checked: in order -->` holds several commands, run one after
another from the repository root with a new home directory (so no cache is warm) after removing
the `build/` directory its first command creates; each command's output is checked the same way,
and a line `...` stands for any number of lines. Besides `readout`, such a block may copy a file
(`cp FROM TO`, a team writing its ledger) and run the CI gate (`.ci/readout-gate PROJECT`, with
this checkout's readout as the `readout` it calls). Such a sequence evaluates afresh, and its
outputs stamp the machine (package versions, platform), so there a written file's size
`(N bytes)` stands for any size, and a progress line (done/total, rate, time left: printed only
when a step runs 10 seconds or more) is timing, not output, and is left out of the comparison.
"""

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from generator.cli import COMMANDS
from generator.evaluate.progress import PROGRESS_LINE
from tests.conftest import readout_on_path, run_program, run_python

REPOSITORY = Path(__file__).resolve().parent.parent
README = (REPOSITORY / "README.md").read_text(encoding="utf-8")
CHECKED_BLOCK = re.compile(r"<!-- output-checked -->\n```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)


def _checked_blocks():
    return [(match["command"], match["output"]) for match in CHECKED_BLOCK.finditer(README)]


@pytest.mark.parametrize("name", [command[0] for command in COMMANDS])
def test_every_command_is_documented_and_has_help(name):
    assert re.search(rf"`readout {re.escape(name)}\b", README), f"README has no section for readout {name}"
    completed = run_python("-m", "generator.cli", name, "--help", cwd=REPOSITORY)
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
    completed = run_python("-m", "generator.cli", *words[1:], cwd=REPOSITORY)
    assert (completed.stdout + completed.stderr).rstrip("\n") == "\n".join(lines)
    assert completed.returncode == expected_code


SEQUENCE_BLOCK = re.compile(r"<!-- output-checked: in order -->\n```console\n(?P<body>.*?)```", re.S)


def _sequence_steps(body: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in body.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


_SIZE = re.compile(r"\\\(\d+\\ bytes\\\)")


def _matches(expected: list[str], actual: str, any_size: bool = False) -> bool:
    if not expected:   # a command shown with no output (a copy) must print nothing
        return actual == ""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in expected)
    if any_size:
        pattern = _SIZE.sub(lambda _: r"\(\d+ bytes\)", pattern)
    return re.fullmatch(pattern, actual.rstrip("\n") + "\n") is not None


def test_the_ellipsis_stands_for_lines_left_out_and_nothing_else():
    assert _matches(["a", "...", "d"], "a\nb\nc\nd\n")
    assert _matches(["a", "...", "d"], "a\nd")
    assert not _matches(["a", "...", "d"], "a\nb\nc\n")
    assert not _matches(["a", "d"], "a\nb\nd")
    assert _matches([], "") and not _matches([], "cp: cannot stat\n")


def test_a_size_stands_for_any_size_only_where_asked():
    assert _matches(["wrote x (12 bytes)"], "wrote x (345 bytes)", any_size=True)
    assert not _matches(["wrote x (12 bytes)"], "wrote x (345 bytes)")
    assert not _matches(["wrote x (12 bytes)"], "wrote y (12 bytes)", any_size=True)
    assert not _matches(["wrote x (12 bytes)"], "wrote x (many bytes)", any_size=True)


@pytest.mark.model
@pytest.mark.parametrize("body", [match["body"] for match in SEQUENCE_BLOCK.finditer(README)])
def test_a_sequence_of_readme_commands_is_real_output_in_order(body, tmp_path):
    steps = _sequence_steps(body)
    first = shlex.split(steps[0][0], comments=True)
    created = next(word for word in first[1:] if word.startswith("build/"))
    shutil.rmtree(REPOSITORY / created, ignore_errors=True)
    environment = {key: value for key, value in readout_on_path(tmp_path).items() if key != "READOUT_CACHE"}
    environment["HOME"] = str(tmp_path)
    for command, lines in steps:
        words = shlex.split(command, comments=True)
        expected_code = 0
        if lines and re.fullmatch(r"\[exit \d+\]", lines[-1]):
            expected_code = int(lines.pop()[6:-1])
        completed = _sequence_command(words, environment)
        output = PROGRESS_LINE.sub("", completed.stdout + completed.stderr)
        assert _matches(lines, output, any_size=True), f"$ {command}\n{output}"
        assert completed.returncode == expected_code, f"$ {command}\n{output}"


def _sequence_command(words: list[str], environment: dict):
    """One step of a README sequence: readout itself, a copy, or the CI gate script."""
    if words[0] == "readout":
        return run_python("-m", "generator.cli", *words[1:], cwd=REPOSITORY, env=environment)
    if words[0] == "cp" and len(words) == 3:
        return run_program(words, cwd=REPOSITORY, env=environment)
    assert words[0] == ".ci/readout-gate", f"a README sequence runs readout, cp or the CI gate, not {words[0]}"
    return run_program([REPOSITORY / ".ci" / "readout-gate", *words[1:]], cwd=REPOSITORY, env=environment)


def test_the_readme_walks_a_new_team_from_init_with_its_own_run_to_the_ci_gate():
    """Issue 23: init with the team's run file, a draft, the failing check, the team's ledger, the
    release build, and the gate its CI runs; in that order, in one checked block."""
    bodies = [match["body"] for match in SEQUENCE_BLOCK.finditer(README)]
    assert len(bodies) == 1
    commands = [shlex.split(command, comments=True) for command, _ in _sequence_steps(bodies[0])]
    assert commands[0][:2] == ["readout", "init"] and "--run" in commands[0]
    assert [words[:2] for words in commands[1:3]] == [["readout", "build"], ["readout", "check"]]
    assert "--draft" in commands[1]
    copies = [index for index, words in enumerate(commands) if words[0] == "cp"]
    assert copies and commands[copies[0]][2].endswith("claims/ledger.yaml")
    release = [index for index, words in enumerate(commands)
               if words[:2] == ["readout", "build"] and "--draft" not in words]
    assert release and release[-1] > copies[0]
    assert commands[-1][0] == ".ci/readout-gate"


# --- the verdict summary is rendered from the results ----------------------------------------------

def test_the_readme_summary_is_what_the_results_say(capsys):
    from generator.render import summary

    assert summary.main([str(REPOSITORY), "--check"]) == 0, capsys.readouterr().err
    block = README[README.index(summary.BEGIN) + len(summary.BEGIN):README.index(summary.END)]
    assert block == summary.render_summary(summary.load_project(REPOSITORY))
    assert "do not ship the reranker" in block


def test_a_hand_typed_figure_in_the_summary_fails_the_check(tmp_path, capsys):
    from generator.render import summary

    stale = README.replace("(interval +0.004 to +0.058)", "(interval +0.006 to +0.059)")
    assert stale != README
    (tmp_path / "README.md").write_text(stale, encoding="utf-8")
    assert summary.main([str(REPOSITORY), "--readme", str(tmp_path / "README.md"), "--check"]) == 1
    assert "not what the results say" in capsys.readouterr().err
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == stale
    assert summary.main([str(REPOSITORY), "--readme", str(tmp_path / "README.md")]) == 0
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == README


def test_the_summary_template_types_no_figure():
    """A number typed into the template would pass the check while the results moved: every
    digit must sit inside a Jinja expression or inside a name (nDCG@5, MiniLM-L6-v2, int8)."""
    text = (REPOSITORY / "templates" / "readme-summary.md.j2").read_text(encoding="utf-8")
    prose = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", text, flags=re.S)
    typed = [match.group(0) for match in re.finditer(r"(?<![\w@-])\d[\d,.]*", prose)]
    assert typed == []
