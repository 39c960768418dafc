"""The committed reports are exactly what the committed inputs render to (like `cog --check`)."""

from pathlib import Path

from generator.commands.cli import main

REPOSITORY = Path(__file__).resolve().parent.parent


def test_committed_scifact_outputs_are_not_stale(capsys):
    code = main(["render", str(REPOSITORY), "--check"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "3 outputs up to date." in out
