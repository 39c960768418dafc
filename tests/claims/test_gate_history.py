"""The gate in the CI people really run: a depth-1 clone (actions/checkout's default), a full one,
commits of the freeze, results moved between paths or merged from a branch.

What must hold: a report reads no git, so `render --check` answers the same in every clone of one
commit and a commit of the freeze never makes a committed report stale; `check` reads the order
from the whole history or refuses with the fix; `readout gate` fetches a shallow clone's history
itself; the first commit of the results follows their content, not their path."""

import json
from pathlib import Path

import pytest

from generator.claims.record.freeze import GENESIS, NONE_YET, entry_sha256
from generator.commands.cli import main
from tests.claims.test_preregistration import _edit, preregistered
from tests.conftest import git_commit, run_git


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def _project_in_order(tmp_path: Path) -> tuple[Path, str, str]:
    """Design frozen and committed, then results and rendered reports committed, then a second
    push that touches neither: what a team's repository holds after its first two pushes."""
    root = tmp_path / "origin"
    root.mkdir()
    run_git(root, "init", "-q")
    preregistered(root)
    design = git_commit(root, "design", "design", "claims", "readout.yaml")
    assert main(["render", str(root)]) == 0
    results = git_commit(root, "results", ".")
    (root / "NOTES.md").write_text("A note.\n", encoding="utf-8")
    git_commit(root, "second push", "NOTES.md")
    return root, design, results


def _clone(origin: Path, where: Path, *depth: str) -> Path:
    run_git(origin.parent, "clone", "-q", *depth, origin.resolve().as_uri(), str(where))
    return where


def _forge_every_entry_before_results(root: Path) -> None:
    """The rewrite a depth-1 clone cannot see: every freeze says no results existed, and the chain
    is recomputed from genesis, so the log is consistent with itself."""
    path = root / "claims" / "design-freeze.json"
    log = json.loads(path.read_text(encoding="utf-8"))
    previous = GENESIS
    first_frozen_at = log["freezes"][0]["frozen_at"]
    for entry in log["freezes"]:
        entry["frozen_at"] = first_frozen_at   # before the results' own time, as the first was
        entry["results"] = NONE_YET
        entry["reason"] = None
        entry["post_hoc"] = []
        entry["previous_sha256"] = previous
        previous = entry_sha256(entry)
    path.write_text(json.dumps(log, indent=2) + "\n", encoding="utf-8")


def _amend_after_results(root: Path) -> None:
    _edit(root, "decisions.md", "otherwise: do not ship the reranker", "otherwise: hold the reranker")
    assert main(["freeze", str(root), "--reason", "the honest reason", "--post-hoc", "D5"]) == 0
    assert main(["render", str(root)]) == 0
    git_commit(root, "amend the design after the results", ".")


def test_an_honest_project_passes_the_gate_in_a_shallow_and_a_full_clone(tmp_path, capsys):
    origin, _, _ = _project_in_order(tmp_path)
    shallow = _clone(origin, tmp_path / "shallow", "--depth", "1")
    full = _clone(origin, tmp_path / "full")
    assert run_git(shallow, "rev-parse", "--is-shallow-repository") == "true"
    # A report reads no git: render --check says the same in both clones of one commit.
    for clone in (shallow, full):
        code, out = _run(capsys, "render", str(clone), "--check")
        assert code == 0 and "3 outputs up to date." in out, out
    code, out = _run(capsys, "gate", str(full))
    assert code == 0, out
    code, out = _run(capsys, "gate", str(shallow))
    assert code == 0, out
    assert "a shallow clone; fetched its full history" in out
    assert run_git(shallow, "rev-parse", "--is-shallow-repository") == "false"


@pytest.mark.parametrize("command", [("check", "--no-record"), ("gate", "--no-fetch")], ids=["check", "gate-no-fetch"])
def test_a_shallow_clone_is_refused_with_the_fetch_depth_fix(tmp_path, capsys, command):
    origin, _, _ = _project_in_order(tmp_path)
    shallow = _clone(origin, tmp_path / "shallow", "--depth", "1")
    code, out = _run(capsys, command[0], str(shallow), *command[1:])
    assert code == 2, out
    line = out.strip().splitlines()[-1]
    assert "shallow clone" in line and "fetch-depth: 0" in line and "git fetch --unshallow" in line


def test_a_grafted_history_is_refused(tmp_path, capsys):
    origin, design, results = _project_in_order(tmp_path)
    grafts = Path(run_git(origin, "rev-parse", "--git-path", "info/grafts"))
    grafts = grafts if grafts.is_absolute() else origin / grafts
    grafts.parent.mkdir(parents=True, exist_ok=True)
    grafts.write_text(f"{results}\n", encoding="utf-8")   # the results commit, made a root
    code, out = _run(capsys, "check", str(origin), "--no-record")
    assert code == 2 and "grafted history" in out and "fetch-depth: 0" in out, out


def test_a_freeze_log_rewritten_to_say_before_any_results_is_refused_in_every_clone(tmp_path, capsys):
    origin, _, _ = _project_in_order(tmp_path)
    _amend_after_results(origin)
    _forge_every_entry_before_results(origin)
    # Self-consistent: without its history the forged log passes every rule of the log itself.
    assert main(["render", str(origin)]) == 0
    git_commit(origin, "tidy the freeze log", ".")
    shallow = _clone(origin, tmp_path / "shallow", "--depth", "1")
    full = _clone(origin, tmp_path / "full")
    code, out = _run(capsys, "gate", str(full))
    assert code == 1 and "not an append-only continuation" in out, out
    code, out = _run(capsys, "gate", str(shallow), "--no-fetch")
    assert code == 2 and "fetch-depth: 0" in out, out
    code, out = _run(capsys, "gate", str(shallow))
    assert code == 1 and "not an append-only continuation" in out, out


def test_the_commit_of_the_freeze_never_makes_a_committed_report_stale(tmp_path, capsys):
    """Rendered and checked before the commit (as the pre-commit hook does), committed together:
    the gate after the commit agrees, for the first freeze and for an amendment."""
    root = tmp_path / "p"
    root.mkdir()
    run_git(root, "init", "-q")
    preregistered(root)
    assert main(["render", str(root)]) == 0
    before = {name: (root / "outputs" / name).read_bytes() for name in ("readout.html", "AAR.md", "TEACHBACK.md")}
    code, out = _run(capsys, "gate", str(root))
    assert code == 0, out
    git_commit(root, "everything", ".")
    code, out = _run(capsys, "gate", str(root))
    assert code == 0, out
    _amend_after_results(root)
    code, out = _run(capsys, "gate", str(root))
    assert code == 0, out
    assert main(["render", str(root)]) == 0
    # No commit id reaches a report: what a freeze's commit would change is not in it.
    for name, text in before.items():
        assert design_commit_ids(root).isdisjoint(_words((root / "outputs" / name).read_bytes())), name


def design_commit_ids(root: Path) -> set[str]:
    return {commit[:7] for commit in run_git(root, "log", "--format=%H").split()}


def _words(data: bytes) -> set[str]:
    import re

    return set(re.findall(r"[0-9a-f]{7}", data.decode("utf-8")))


def test_results_committed_under_another_path_first_are_as_old_as_that_commit(tmp_path, capsys):
    """Results committed as scratch/results.json, a "none yet" freeze committed next, then the
    results moved into outputs/: git's order follows the content, and the record is false."""
    root = tmp_path / "p"
    root.mkdir()
    run_git(root, "init", "-q")
    preregistered(root)
    (root / "scratch").mkdir()
    for path in (root / "outputs").iterdir():
        path.rename(root / "scratch" / path.name)
    scratch = git_commit(root, "scratch results", "scratch")
    git_commit(root, "design", "design", "claims", "readout.yaml")
    run_git(root, "rm", "-q", "-r", "--cached", "scratch")
    for path in (root / "scratch").iterdir():
        path.rename(root / "outputs" / path.name)
    git_commit(root, "move the results", "outputs", "scratch")
    code, out = _run(capsys, "check", str(root), "--no-record")
    assert code == 1, out
    assert f"freeze 1 says no results existed, but outputs/results.json was committed in {scratch[:7]}" in out


def test_results_on_a_branch_merged_after_the_freeze_are_not_shown_to_follow_it(tmp_path, capsys):
    root = tmp_path / "p"
    root.mkdir()
    run_git(root, "init", "-q")
    preregistered(root)
    outputs = {path.name: path.read_bytes() for path in (root / "outputs").iterdir() if path.is_file()}
    for path in (root / "outputs").iterdir():
        if path.is_file():
            path.unlink()
    (root / "outputs" / ".keep").write_text("", encoding="utf-8")
    base = git_commit(root, "base", "readout.yaml", "outputs/.keep")
    main_branch = run_git(root, "rev-parse", "--abbrev-ref", "HEAD")
    run_git(root, "checkout", "-q", "-b", "experiments")
    for name, data in outputs.items():
        (root / "outputs" / name).write_bytes(data)
    branch = git_commit(root, "results on a branch", "outputs")
    run_git(root, "checkout", "-q", main_branch)
    assert base
    git_commit(root, "design", "design", "claims")
    run_git(root, "merge", "-q", "--no-edit", "experiments")
    code, out = _run(capsys, "check", str(root), "--no-record")
    assert "anchored to commit" not in out.split("Order:", 1)[1].split(";")[0], out
    assert branch[:7] in out, out


def test_a_freeze_that_would_be_false_once_committed_is_refused_before_the_commit(tmp_path, capsys):
    """The pre-commit hook runs check: it refuses what the gate would refuse after the commit."""
    root = tmp_path / "p"
    root.mkdir()
    run_git(root, "init", "-q")
    preregistered(root)
    results = git_commit(root, "results first", "outputs", "readout.yaml")
    hidden = tmp_path / "hidden"
    (root / "outputs").rename(hidden)
    (root / "claims" / "design-freeze.json").unlink()
    assert main(["freeze", str(root)]) == 0           # nothing in outputs/ now: "none yet"
    hidden.rename(root / "outputs")
    code, out = _run(capsys, "check", str(root), "--no-record")
    assert code == 1, out
    assert f"is already committed (in {results[:7]}): committed, the record would be false" in out


def test_the_actions_gate_step_passes_in_a_fresh_depth_1_clone_after_two_pushes(tmp_path):
    """The step action.yml runs, as GitHub runs it: bash, in the checkout actions/checkout makes by
    default (depth 1), with `readout` installed on PATH."""
    import yaml

    from tests.conftest import REPOSITORY_ROOT, readout_on_path, run_program

    origin, _, _ = _project_in_order(tmp_path)
    clone = _clone(origin, tmp_path / "workspace", "--depth", "1")
    action = yaml.safe_load((REPOSITORY_ROOT / "action.yml").read_text(encoding="utf-8"))
    steps = [step["run"] for step in action["runs"]["steps"] if "readout gate" in step.get("run", "")]
    assert len(steps) == 1
    script = steps[0].replace("${{ inputs.project }}", action["inputs"]["project"]["default"])
    environment = {**readout_on_path(tmp_path / "tools"), "GITHUB_ACTIONS": "true"}
    completed = run_program(["bash", "-e", "-c", script], cwd=clone, env=environment)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "::notice title=trace score::" in completed.stdout and "3 outputs up to date." in completed.stdout
