"""The documentation covers every command, and its checked examples are real output.

The README is one screen of purpose, install and example plus the walk-through; each command's
`--help` is in docs/cli.md (generated, held current by tests/test_cli_reference.py) and what it
does, with examples, in docs/commands.md. Checked examples are found in README.md and every
docs/*.md, wherever they now stand.

A console block preceded by `<!-- output-checked -->` is run from the repository root, in process
(generator.commands.cli.main, what the console command calls); its output (stdout then stderr) must match the block, and a final `[exit N]` line gives the exit
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

from generator.commands.cli import COMMANDS, main
from generator.evaluate.progress import PROGRESS_LINE
from tests.conftest import readout_on_path, run_program, run_python
from tests.one_thread import ONE_THREAD_ENV

REPOSITORY = Path(__file__).resolve().parent.parent
README = (REPOSITORY / "README.md").read_text(encoding="utf-8")
CLI_REFERENCE = (REPOSITORY / "docs" / "cli.md").read_text(encoding="utf-8")
COMMANDS_GUIDE = (REPOSITORY / "docs" / "commands.md").read_text(encoding="utf-8")
# Every hand-written or generated page a checked example may stand in, by its path in the repository.
DOCUMENTS = {"README.md": README, **{f"docs/{path.name}": path.read_text(encoding="utf-8")
                                    for path in sorted((REPOSITORY / "docs").glob("*.md"))}}
CHECKED_BLOCK = re.compile(r"<!-- output-checked -->\n```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)
# How many output-checked examples the documentation holds: moving one between pages keeps the
# count, and losing one (a marker dropped, a block reformatted past the pattern) fails.
CHECKED_EXAMPLES = 7


def _checked_blocks():
    return [(document, match["command"], match["output"])
            for document, text in DOCUMENTS.items() for match in CHECKED_BLOCK.finditer(text)]


def _readout_in_process(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """`readout ARGV` as a user runs it from the repository root, in this process (generator.commands.cli.main,
    what the console command calls): its exit code, stdout and stderr."""
    monkeypatch.chdir(REPOSITORY)
    monkeypatch.delenv("READOUT_DEBUG", raising=False)
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as stop:   # argparse's own exits: --help, a usage error
        code = stop.code if isinstance(stop.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", [command[0] for command in COMMANDS])
def test_every_command_is_documented_and_has_help(name, monkeypatch, capsys):
    heading = f"\n## `readout {name}`\n"
    assert heading in CLI_REFERENCE, f"docs/cli.md has no section for readout {name}"
    section = CLI_REFERENCE[CLI_REFERENCE.index(heading):].split("\n## ", 2)[1]
    assert f"```text\nusage: readout {name} " in section
    assert re.search(rf"`readout {re.escape(name)}\b", COMMANDS_GUIDE), f"docs/commands.md skips readout {name}"
    code, out, _ = _readout_in_process([name, "--help"], monkeypatch, capsys)
    assert code == 0
    assert out.startswith(f"usage: readout {name}")


def test_the_documentation_has_its_checked_examples():
    blocks = _checked_blocks()
    assert len(blocks) >= CHECKED_EXAMPLES, [f"{document}: {command}" for document, command, _ in blocks]
    assert {document for document, _, _ in blocks} >= {"docs/commands.md"}


@pytest.mark.parametrize("document,command,expected", _checked_blocks(),
                         ids=[f"{document}: {command}" for document, command, _ in _checked_blocks()])
def test_checked_example_is_real_output(document, command, expected, monkeypatch, capsys):
    words = shlex.split(command)
    assert words[0] == "readout"
    expected_code = 0
    lines = expected.rstrip("\n").split("\n")
    if lines and re.fullmatch(r"\[exit \d+\]", lines[-1]):
        expected_code = int(lines.pop()[6:-1])
    code, out, err = _readout_in_process(words[1:], monkeypatch, capsys)
    assert (out + err).rstrip("\n") == "\n".join(lines)
    assert code == expected_code


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
@pytest.mark.parametrize("body", [match["body"] for text in DOCUMENTS.values()
                                  for match in SEQUENCE_BLOCK.finditer(text)])
def test_a_sequence_of_documented_commands_is_real_output_in_order(body, tmp_path):
    steps = _sequence_steps(body)
    first = shlex.split(steps[0][0], comments=True)
    created = next(word for word in first[1:] if word.startswith("build/"))
    shutil.rmtree(REPOSITORY / created, ignore_errors=True)
    environment = {key: value for key, value in readout_on_path(tmp_path).items() if key != "READOUT_CACHE"}
    environment["HOME"] = str(tmp_path)
    environment.update(ONE_THREAD_ENV)   # a build encodes with torch (tests/one_thread.py)
    for command, lines in steps:
        words = shlex.split(command, comments=True)
        expected_code = 0
        if lines and re.fullmatch(r"\[exit \d+\]", lines[-1]):
            expected_code = int(lines.pop()[6:-1])
        completed = _sequence_command(words, environment)
        output = PROGRESS_LINE.sub("", completed.stdout + completed.stderr)
        assert _matches(lines, output, any_size=True), f"$ {command}\n{output}"
        assert completed.returncode == expected_code, f"$ {command}\n{output}"
    # Design first: the walk-through leaves no decision post hoc, and git shows the design first.
    from generator.claims.tracing.checker import check_project
    from generator.project import load_project

    report = check_project(load_project(REPOSITORY / created))
    assert report.decisions and not any(row.post_hoc for row in report.decisions)
    assert all(not entry.results_existed for entry in report.freeze_entries)
    assert report.anchoring.git and all(report.anchoring.entry(entry.number).anchored
                                        for entry in report.freeze_entries)


_GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                 "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1"}


def _sequence_command(words: list[str], environment: dict):
    """One step of a README sequence: readout itself, a copy, or git in the project made."""
    if words[0] == "readout":
        return run_python("-m", "generator.commands.cli", *words[1:], cwd=REPOSITORY, env=environment)
    if words[0] == "cp" and len(words) == 3:
        return run_program(words, cwd=REPOSITORY, env=environment)
    assert words[:2] == ["git", "-C"] and words[2].startswith("build/"), \
        f"a README sequence runs readout, cp or git in its own project, not {words[0]}"
    return run_program(words, cwd=REPOSITORY, env={**environment, **_GIT_IDENTITY})


def test_the_readme_walks_a_new_team_from_init_design_first_to_the_ci_gate():
    """Issues 23 and 36: init with the team's run file, the team's decisions frozen and committed
    before any result, a draft, the failing check, the team's ledger, the release build, the
    commit, and the gate its CI runs; in that order, in one checked block."""
    bodies = [match["body"] for match in SEQUENCE_BLOCK.finditer(README)]
    assert len(bodies) == 1
    assert [name for name, text in DOCUMENTS.items() if SEQUENCE_BLOCK.search(text)] == ["README.md"]
    commands = [shlex.split(command, comments=True) for command, _ in _sequence_steps(bodies[0])]
    assert commands[0][:2] == ["readout", "init"] and "--run" in commands[0]
    first = lambda test: next(index for index, words in enumerate(commands) if test(words))  # noqa: E731
    decisions = first(lambda words: words[0] == "cp" and words[2].endswith("design/decisions.md"))
    freeze = first(lambda words: words[:2] == ["readout", "freeze"])
    committed = first(lambda words: words[0] == "git" and "commit" in words)
    draft = first(lambda words: words[:2] == ["readout", "build"])
    assert decisions < freeze < committed < draft and "--draft" in commands[draft]
    assert commands[draft + 1][:2] == ["readout", "check"]
    ledger = first(lambda words: words[0] == "cp" and words[2].endswith("claims/ledger.yaml"))
    release = [index for index, words in enumerate(commands)
               if words[:2] == ["readout", "build"] and "--draft" not in words]
    assert release and release[-1] > ledger
    assert commands[-1][:2] == ["readout", "gate"]


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
