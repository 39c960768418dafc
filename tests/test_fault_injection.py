"""Nothing lost, nothing mixed: a write killed at any rename leaves the old or the new complete set,
or a mixture every reader refuses; the next run repairs it.

Every write ends in `generator.storage.fileio._replace`; these tests make it raise after the K-th rename,
for every K a write performs, in `evaluate`'s results set, `render`'s three outputs and `build` of
the offline sandbox project (run files, side files, results, then the reports).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from generator.storage import fileio
from generator.commands.build import build_project
from generator.claims.tracing.measured import ResultsFiles
from generator.evaluate.pipeline import set_problem, write_sealed_results
from generator.project import load_project
from generator.render.renderer import render_project

from tests.conftest import fixture_evaluation

REPOSITORY = Path(__file__).resolve().parents[1]


class Killed(Exception):
    """Stands for the process dying at a rename."""


def _kill_after(monkeypatch, renames: int) -> list:
    done = []
    real = fileio._replace

    def replace(source, target):
        if len(done) >= renames:
            raise Killed(f"killed before renaming onto {Path(target).name}")
        real(source, target)
        done.append(Path(target).name)

    monkeypatch.setattr(fileio, "_replace", replace)
    return done


def _count_renames(monkeypatch, action) -> int:
    done = _kill_after(monkeypatch, 10 ** 6)
    action()
    monkeypatch.undo()
    return len(done)


def _tree(directory: Path) -> dict[str, str]:
    return {path.relative_to(directory).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def _temporaries(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.rglob("*.tmp"))


# --- evaluate: run files, judgements copy, results.json last ----------------------------------


def _write(outputs: Path, variant: int) -> None:
    write_sealed_results(outputs / "results.json", outputs / "runs", fixture_evaluation(hybrid_variant=variant))


def _cited(outputs: Path) -> str | None:
    files = ResultsFiles(outputs)
    return files._problem(files._other("results.json"))


def test_an_evaluation_killed_at_any_rename_leaves_a_complete_set_or_a_refused_mixture(tmp_path, monkeypatch):
    reference = {}
    for variant in (0, 1):
        outputs = tmp_path / f"reference-{variant}" / "outputs"
        _write(outputs, variant)
        reference[variant] = _tree(outputs)
    assert reference[0] != reference[1]
    renames = _count_renames(monkeypatch, lambda: _write(tmp_path / "count" / "outputs", 1))
    assert renames == len(reference[1])     # every file of the set, results.json among them
    for killed_after in range(renames):
        outputs = tmp_path / f"k{killed_after}" / "outputs"
        _write(outputs, 0)
        _kill_after(monkeypatch, killed_after)
        with pytest.raises(Killed):
            _write(outputs, 1)
        monkeypatch.undo()
        assert _temporaries(outputs) == [], "a failed write cleans up its own temporaries"
        state = _tree(outputs)
        if state == reference[0]:
            assert killed_after == 0 and set_problem(outputs / "results.json") is None
        else:
            assert state != reference[1], "results.json is renamed last, so a killed write never completes"
            # A mixture: the results file that names the set refuses it, for check and build alike.
            assert set_problem(outputs / "results.json") is not None
            assert _cited(outputs) is not None
        _write(outputs, 1)                  # the rerun repairs
        assert _tree(outputs) == reference[1]
        assert set_problem(outputs / "results.json") is None and _cited(outputs) is None


def test_a_killed_process_leaves_temporaries_that_the_next_write_removes(tmp_path):
    outputs = tmp_path / "outputs"
    _write(outputs, 0)
    # kill -9 between writing a temporary and renaming it: nothing cleans up in the dying process.
    stale = [outputs / ".results.json.k9zzzzzz.tmp", outputs / "runs" / ".hybrid.trec.ab12cd34.tmp"]
    for path in stale:
        path.write_text("half a file")
    unrelated = outputs / "notes.tmp"
    unrelated.write_text("someone else's file")
    _write(outputs, 1)
    assert not any(path.exists() for path in stale)
    assert unrelated.exists(), "only this tool's own temporaries are removed"


def test_build_re_evaluates_a_mixed_set_instead_of_calling_it_up_to_date(tmp_path, small_dataset, make_project,
                                                                         monkeypatch):
    import json

    import yaml

    from generator.evaluate import pipeline
    from generator.evaluate.data import hash_inputs

    root = make_project(tmp_path / "p")
    config = yaml.safe_load((root / "readout.yaml").read_text())
    config["data"] = str(small_dataset)
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    options = load_project(root).evaluation_options()
    evaluation = fixture_evaluation()
    evaluation.results["manifest"].update(inputs=hash_inputs(small_dataset), parameters=options.parameters())
    write_sealed_results(options.results_path, options.runs_dir, evaluation)
    assert pipeline.results_are_current(options) == (True, "inputs and parameters unchanged")
    # A later evaluation of other depth died after renaming one run file.
    (options.runs_dir / "hybrid.trec").write_text(
        (options.runs_dir / "hybrid.trec").read_text().splitlines()[0] + "\n")
    current, why = pipeline.results_are_current(options)
    assert current is False and "hybrid.trec" in why and "interrupted" in why
    assert json.loads(options.results_path.read_text())["candidate_depth"] == 50


# --- render: three reports ---------------------------------------------------------------------


def test_a_render_killed_at_any_rename_is_caught_by_render_check_and_repaired(tmp_path, monkeypatch, make_project):
    root = make_project(tmp_path / "p")
    project = load_project(root)
    assert render_project(project).ok
    old = {name: (root / "outputs" / name).read_bytes() for name in ("readout.html", "TEACHBACK.md", "AAR.md")}
    config = root / "readout.yaml"
    config.write_text(config.read_text().replace("title: ", "title: Retitled ", 1))
    project = load_project(root)
    renames = _count_renames(monkeypatch, lambda: render_project(load_project(_copy(root, tmp_path / "count"))))
    assert renames == 3
    for killed_after in range(renames):
        _kill_after(monkeypatch, killed_after)
        with pytest.raises(Killed):
            render_project(project)
        monkeypatch.undo()
        assert _temporaries(root / "outputs") == []
        now = {name: (root / "outputs" / name).read_bytes() for name in old}
        kept = sorted(name for name in old if now[name] == old[name])
        assert len(kept) == 3 - killed_after, "outputs are replaced in order, none half-written"
        stale = render_project(project, check_only=True).stale
        assert sorted(Path(line.split(": ")[0]).name for line in stale) == kept
        for name in old:   # put the old set back for the next K
            (root / "outputs" / name).write_bytes(old[name])
    assert render_project(project).ok
    assert render_project(project, check_only=True).stale == []


def _copy(root: Path, target: Path) -> Path:
    shutil.copytree(root, target)
    return target


# --- build of the offline sandbox: sandbox set, then reports -------------------------------------


def test_a_sandbox_build_killed_at_any_rename_is_refused_or_complete_and_a_rebuild_repairs(tmp_path, monkeypatch):
    source = tmp_path / "l03"
    shutil.copytree(REPOSITORY / "examples" / "l03", source)
    # A complete build of the copy is the reference (outside git its reports say "no git history").
    assert build_project(load_project(source), log=lambda _: None).ok
    reference = _tree(source / "outputs")
    renames = _count_renames(monkeypatch, lambda: build_project(load_project(_copy(source, tmp_path / "count")),
                                                                log=lambda _: None))
    assert renames >= 10
    for killed_after in range(renames):
        root = _copy(source, tmp_path / f"k{killed_after}")
        # Stale outputs to start from: every file a build writes is changed by hand.
        for path in (root / "outputs").rglob("*"):
            if path.is_file() and path.suffix in (".trec", ".json", ".csv", ".md", ".html", ".tsv"):
                path.write_bytes(path.read_bytes() + b" ")
        _kill_after(monkeypatch, killed_after)
        with pytest.raises(Killed):
            build_project(load_project(root), log=lambda _: None)
        monkeypatch.undo()
        assert _temporaries(root / "outputs") == []
        project = load_project(root)
        # Whatever the kill left, no reader takes it for a finished build.
        from generator.claims.tracing.checker import check_project

        report = check_project(project)
        rendered_current = report.ok and render_project(project, check_only=True).stale == []
        assert not rendered_current or _tree(root / "outputs") == reference
        outcome = build_project(project, log=lambda _: None)
        assert outcome.ok and _tree(root / "outputs") == reference
