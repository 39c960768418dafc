"""`train-reranker --force` killed at any step leaves a loadable model (issue 39): the old one or
the new one, never neither. The replace is two renames (the old model aside, the new one in); a
kill between them leaves the old model in `.NAME.replaced.*.tmp/NAME`, which the next load or
training run puts back."""

import os
from pathlib import Path

import pytest

from generator.evaluate import training
from generator.storage.fileio import held_temporary_directory
from generator.evaluate.models import restore_interrupted_replace


def _model(path: Path, tag: str) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(f'{{"tag": "{tag}"}}', encoding="utf-8")
    return path


def _tag(path: Path) -> str:
    return (path / "config.json").read_text(encoding="utf-8")


def test_a_replace_that_runs_to_the_end_leaves_the_new_model_and_nothing_else(tmp_path):
    output = _model(tmp_path / "models" / "m", "old")
    staging = _model(tmp_path / "models" / ".m.abc.tmp", "new")
    training._move_into_place(staging, output)
    assert '"new"' in _tag(output) and sorted(p.name for p in output.parent.iterdir()) == ["m"]


@pytest.mark.parametrize("renames, step", [(0, "before the move"), (1, "between move and rename"), (2, "after")])
def test_a_kill_at_any_step_leaves_a_loadable_model(tmp_path, renames, step):
    output = _model(tmp_path / "models" / "m", "old")
    staging = _model(tmp_path / "models" / ".m.abc.tmp", "new")
    _unprotected_move(staging, output, renames)
    restored = restore_interrupted_replace(output)
    assert output.is_dir(), step
    assert _tag(output) == ('{"tag": "new"}' if renames == 2 else '{"tag": "old"}')
    assert (restored is not None) == (renames == 1)
    if restored:
        assert "restored the previous model" in restored and "train-reranker --force" in restored
    assert not list(output.parent.glob(".m.replaced.*"))


def _unprotected_move(staging: Path, output: Path, renames: int) -> None:
    """training._move_into_place's renames as a SIGKILL after `renames` of them leaves them: no
    `except`, no clean-up between or after."""
    import tempfile

    aside = Path(tempfile.mkdtemp(prefix=f".{output.name}.replaced.", suffix=".tmp", dir=output.parent))
    for done, (source, target) in enumerate([(output, aside / output.name), (staging, output)]):
        if done == renames:
            return
        os.replace(source, target)


def test_an_interrupt_between_the_renames_puts_the_old_model_back_at_once(tmp_path, monkeypatch):
    output = _model(tmp_path / "models" / "m", "old")
    staging = _model(tmp_path / "models" / ".m.abc.tmp", "new")
    real = os.replace

    def replace(source, target):
        if Path(source) == staging:
            raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(training.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        training._move_into_place(staging, output)
    assert '"old"' in _tag(output) and not list(output.parent.glob(".m.replaced.*"))


def test_a_staging_folder_is_swept_once_no_run_holds_it(tmp_path):
    """A live training run holds its staging folder (as train-reranker does); a killed one's goes."""
    output = _model(tmp_path / "models" / "m", "old")
    live = held_temporary_directory(tmp_path / "models", ".m.")
    stale = _model(tmp_path / "models" / ".m.stale.tmp", "new")
    try:
        assert restore_interrupted_replace(output) is None
        assert Path(live.name).is_dir() and not stale.exists() and output.is_dir()
    finally:
        live.release()
    assert restore_interrupted_replace(output) is None
    assert not Path(live.name).exists()
