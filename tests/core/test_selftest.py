
from generator.commands.cli import main
from tests.conftest import run_python


def test_selftest_passes_every_check(capsys):
    assert main(["selftest"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == ["PASS", "PASS", "PASS", "ALL"]
    assert out[-1] == "ALL CHECKS PASS"


def test_mutant_selftest_fails_with_0_6509_against_0_4982(capsys):
    assert main(["selftest", "--mutant"]) == 1
    out = capsys.readouterr().out
    assert "FAIL nDCG@5 of [d3, d1, d7, d2, d9] against {d1, d2, d4}: got 0.6509, expected 0.4982" in out
    assert "ALL CHECKS PASS" not in out


def test_selftest_runs_as_a_console_command():
    completed = run_python("-m", "generator.commands.cli", "selftest")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().endswith("ALL CHECKS PASS")
