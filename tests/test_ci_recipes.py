"""The CI recipes a team adds with one line: the pre-commit hooks (.pre-commit-hooks.yaml, run
through `pre-commit try-repo` of this checkout) and the GitHub Action (action.yml, whose steps are
.ci/readout-gate, run here as the action runs it). Each passes on a project whose claims trace and
fails, exit 1, on an untraced claim."""

import pytest
import yaml

from generator.commands.cli import main
from tests.conftest import (HYBRID, REPOSITORY_ROOT, claim, measured, readout_on_path, run_git, run_program,
                            run_python)

GATE = REPOSITORY_ROOT / ".ci" / "readout-gate"
UNTRACED = claim("typed", "Hybrid reaches nDCG@5 0.999 on the sample.", kind="performance")
TRACED = claim("traced", "Hybrid reaches nDCG@5 {h:.3f} on the sample.", measured({"h": HYBRID}), kind="performance")


def _readout_on_path(tmp_path):
    return {**readout_on_path(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"), "HOME": str(tmp_path),
            "GITHUB_ACTIONS": "true"}


def _rendered_project(tmp_path, make_project, extra_claims=""):
    """A team's project as it stands committed: rendered (in process; the gate and the hooks are what
    run in child processes here)."""
    root = make_project(tmp_path / "review", extra_claims=extra_claims)
    assert main(["render", str(root)]) == 0
    return root


def _add_claim(root, text):
    """A team adds a sentence to the ledger after the last render."""
    ledger = root / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8") + "".join(f"  {line}\n" for line in text.splitlines()),
                      encoding="utf-8")


def _gate(root, env):
    return run_program([GATE, root], cwd=root, env=env)


def test_the_action_runs_the_gate_script_and_uploads_the_outputs():
    action = yaml.safe_load((REPOSITORY_ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    runs = [step.get("run", "") for step in action["runs"]["steps"]]
    assert any(run.startswith("readout gate ") for run in runs)
    uploads = [step for step in action["runs"]["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact")]
    assert uploads and "outputs" in uploads[0]["with"]["path"]
    assert set(action["inputs"]) == {"project", "python-version", "artifact-name"}


def test_the_gate_passes_a_traced_project_and_fails_an_untraced_claim_with_annotations(tmp_path, make_project):
    env = _readout_on_path(tmp_path)
    root = _rendered_project(tmp_path, make_project, extra_claims=TRACED)
    passed = _gate(root, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    _add_claim(root, UNTRACED)
    failed = _gate(root, env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "::error file=" in failed.stdout and "typed" in failed.stdout


def test_the_gate_fails_a_stale_report(tmp_path, make_project):
    env = _readout_on_path(tmp_path)
    root = _rendered_project(tmp_path, make_project)
    report = root / "outputs" / "AAR.md"
    report.write_text(report.read_text(encoding="utf-8") + "\nA sentence nobody traced.\n", encoding="utf-8")
    failed = _gate(root, env)
    assert failed.returncode == 1, failed.stdout + failed.stderr


def test_the_hooks_are_system_hooks_that_write_nothing():
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPOSITORY_ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"readout-check", "readout-render-check"}
    for hook in hooks.values():
        assert hook["language"] == "system" and hook["pass_filenames"] is False and hook["always_run"] is True
    # A hook that appended to the trace history would make every commit fail with "files were modified".
    assert "--no-record" in hooks["readout-check"]["entry"]


@pytest.mark.parametrize("extra, expected", [(TRACED, 0), (UNTRACED, 1)], ids=["traced", "untraced"])
def test_pre_commit_try_repo_runs_the_hook_on_a_project(tmp_path, make_project, extra, expected):
    pytest.importorskip("pre_commit")
    env = _readout_on_path(tmp_path)
    root = _rendered_project(tmp_path, make_project, extra_claims=TRACED)
    if extra is UNTRACED:
        _add_claim(root, UNTRACED)
    run_git(root, "init", "-q")
    run_git(root, "add", ".")
    completed = run_python("-m", "pre_commit", "try-repo", str(REPOSITORY_ROOT), "readout-check", "--all-files",
                           cwd=root, env=env, timeout=300)
    output = completed.stdout + completed.stderr
    assert completed.returncode == expected, output
    assert ("Passed" if expected == 0 else "Failed") in output
    if expected:
        assert "typed" in output


def _yaml_blocks(text):
    import re

    return {block.split("\n", 1)[0]: yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)}


def test_the_readme_and_the_scaffold_show_the_recipes_as_they_are():
    from generator.commands.starter_files import README_NAME, scaffold_files

    hooks = {hook["id"] for hook in yaml.safe_load((REPOSITORY_ROOT / ".pre-commit-hooks.yaml").read_text())}
    action = yaml.safe_load((REPOSITORY_ROOT / "action.yml").read_text(encoding="utf-8"))
    readme = _yaml_blocks((REPOSITORY_ROOT / "README.md").read_text(encoding="utf-8"))
    scaffold = _yaml_blocks(scaffold_files()[README_NAME])
    for blocks in (readme, scaffold):
        pre_commit = blocks["# .pre-commit-config.yaml"]
        assert {hook["id"] for hook in pre_commit["repos"][0]["hooks"]} == hooks
        workflow = blocks["# .github/workflows/readout.yml"]
        step = workflow["jobs"]["readout"]["steps"][-1]
        assert step["uses"].split("@")[0].endswith("/traced-readout") and set(step["with"]) <= set(action["inputs"])
    assert readme["# .pre-commit-config.yaml"] == scaffold["# .pre-commit-config.yaml"]
    assert readme["# .github/workflows/readout.yml"] == scaffold["# .github/workflows/readout.yml"]
