"""The CLI contract: one exception map, one line per error, exit 2 for anything unexpected, the
traceback only on request, and every command documented."""

from __future__ import annotations

import pytest

from generator.commands import cli
from generator.claims.tracing import checker
from generator.commands.cli import COMMANDS, EXCEPTION_EXIT_CODES, exit_code_for, main
from generator.storage.errors import InputError
from generator.storage.paths import reading


def _explode(project, **options):
    with reading("claims/ledger.yaml"):
        raise ZeroDivisionError("division by zero")


@pytest.fixture
def exploding_check(monkeypatch, repository):
    """`readout check` whose library call fails in a way no code path expects."""
    monkeypatch.setattr(checker, "check_project", _explode)
    monkeypatch.chdir(repository)


def test_an_unexpected_error_is_one_line_naming_the_file_with_exit_2(exploding_check, capsys, monkeypatch):
    monkeypatch.delenv("READOUT_DEBUG", raising=False)
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert err == ("Error: claims/ledger.yaml: internal error: ZeroDivisionError: division by zero "
                   "(run with --debug or READOUT_DEBUG=1 for the traceback)\n")


def test_debug_flag_adds_the_traceback(exploding_check, capsys):
    assert main(["--debug", "check"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "ZeroDivisionError" in err
    assert err.splitlines()[-1].startswith("Error: claims/ledger.yaml: internal error: ZeroDivisionError")


def test_readout_debug_environment_variable_adds_the_traceback(exploding_check, capsys, monkeypatch):
    monkeypatch.setenv("READOUT_DEBUG", "1")
    assert main(["check"]) == 2
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_a_recursion_error_says_the_input_is_nested_too_deeply():
    error = RecursionError("maximum recursion depth exceeded while calling a Python object")
    error.readout_path = "outputs/results.json"
    assert cli.error_line(error) == ("Error: outputs/results.json: internal error: RecursionError: input nested too "
                                     "deeply (run with --debug or READOUT_DEBUG=1 for the traceback)")


def test_the_exception_map_gives_2_for_input_and_anything_unexpected_and_130_for_interrupts():
    assert exit_code_for(InputError("bad", path="x")) == 2
    assert exit_code_for(ValueError("surprise")) == 2
    assert exit_code_for(KeyboardInterrupt()) == 130
    assert [code for _, code in EXCEPTION_EXIT_CODES] == [143, 130, 2, 2]


def test_a_known_input_error_keeps_its_own_message(capsys, tmp_path):
    assert main(["check", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.startswith("Error: ")


def test_every_command_has_help_and_a_summary(capsys):
    for name, summary, _configure, _run in COMMANDS:
        assert summary and summary[0].islower()
        with pytest.raises(SystemExit) as stop:
            main([name, "--help"])
        assert stop.value.code == 0
        assert summary[0].upper() + summary[1:] in capsys.readouterr().out


def test_every_error_line_is_at_most_300_characters_however_long_the_value_it_echoes():
    huge = "x" * 50_000_000
    for error in (InputError(f"unknown document {huge!r}", path="qrels/test.tsv", line=3, field="corpus-id"),
                  ValueError(huge)):
        line = cli.error_line(error)
        assert len(line) <= 300 and "\n" not in line and line.startswith("Error: ")


def test_a_permission_error_is_the_users_to_fix_and_says_which_file():
    error = PermissionError(13, "Permission denied", "outputs/readout.html")
    assert cli.error_line(error) == "Error: Permission denied: outputs/readout.html"
    assert exit_code_for(error) == 2


def test_a_symbolic_link_loop_is_one_line_naming_the_link(tmp_path, monkeypatch, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "a"]) == 2
    assert capsys.readouterr().err in ("Error: a: a symbolic link loop; remove or repoint the link\n",
                                       "Error: b: a symbolic link loop; remove or repoint the link\n")


def test_a_link_loop_inside_design_is_one_line_too(tmp_path, monkeypatch, capsys, repository):
    import shutil

    project = tmp_path / "l03"
    shutil.copytree(repository / "examples" / "l03", project)
    (project / "design" / "x").symlink_to(project / "design" / "y.md")
    (project / "design" / "y.md").symlink_to(project / "design" / "x")
    monkeypatch.chdir(project)
    assert main(["check", "."]) == 2
    assert capsys.readouterr().err in ("Error: design/x: a symbolic link loop; remove or repoint the link\n",
                                       "Error: design/y.md: a symbolic link loop; remove or repoint the link\n")


@pytest.mark.parametrize("argv, expected", [
    (["evaluate", "--data", ""], "Error: readout evaluate: argument --data: empty path (see readout evaluate --help)"),
    (["check", "--format", "xml"], "Error: readout check: argument --format: invalid choice: 'xml'"),
    (["no-such-command"], "Error: readout: argument COMMAND: invalid choice: 'no-such-command'"),
])
def test_a_usage_error_is_one_line_with_exit_2(capsys, argv, expected):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(expected) and len(err) <= 301
