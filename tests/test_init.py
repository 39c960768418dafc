"""`readout init DIR`: a working review project from an empty directory.

The scaffold loads and validates against the packaged schema, its design is frozen, `check` exits
1 because every starter claim has no source, `render --draft` flags them all, each commented source
traces once uncommented, and (the issue's acceptance) `init` then `build --data --draft` works
from an empty directory with the packaged MiniLM and no network.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from generator.commands.cli import build_parser, main
from generator.storage.errors import InputError
from generator.project import load_project
from generator.project.reference import load_config_schema
from generator.commands.scaffold import init_lines, init_project
from generator.commands.starter_design import DESIGN_DOCUMENTS
from generator.commands.starter_files import DEFAULT_TITLE, scaffold_files

STARTER_CLAIMS = ("rows-hybrid", "candidates-fixed", "expected-hybrid", "next-measure", "results-hybrid",
                  "limits-sample")


def _cli_has(*argv: str) -> bool:
    """Whether generator.commands.cli already parses these arguments (the init and build wiring)."""
    try:
        build_parser().parse_args(list(argv))
    except SystemExit:
        return False
    return True


def _require_cli(*argv: str) -> None:
    assert _cli_has(*argv), f"generator.commands.cli does not parse `readout {' '.join(argv)}`"


def _init(argv: list[str]) -> int:
    """`readout init` as the command line runs it."""
    from generator.commands.cli import main

    return main(["init", *argv])


def _uncomment_sources(ledger: Path) -> None:
    """Replace each starter claim's text by the frame commented beneath it, as the comments say."""
    lines, out = ledger.read_text(encoding="utf-8").splitlines(), []
    for line in lines:
        match = re.match(r"(\s*)# frame:(.*)", line)
        if not match:
            out.append(line)
            continue
        indent, rest = match.groups()
        position = max(i for i, kept in enumerate(out) if kept.strip().startswith("text:"))
        out[position] = f"{indent}frame:{rest}"
    ledger.write_text("\n".join(out) + "\n", encoding="utf-8")


def test_init_writes_a_project_that_loads_and_freezes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # --rerank: the row kept although no cross-encoder loads here (tests/test_init_without_a_reranker.py)
    assert _init(["review", "--rerank"]) == 0
    out = capsys.readouterr().out.splitlines()
    root = tmp_path / "review"
    assert sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()) == sorted(
        [*scaffold_files(), "claims/design-freeze.json"])
    assert (root / "outputs").is_dir() and not any((root / "outputs").iterdir())
    assert sorted(path.name for path in (root / "design").iterdir()) == sorted(DESIGN_DOCUMENTS)
    assert out[0] == "wrote review/readout.yaml"
    assert out[-2] == "Froze 5 design documents in review/claims."
    assert out[-1] == ("Created a readout project in review. Next, the design first: write your decisions in "
                       "review/design, run readout freeze review and commit, then build (the commands are in "
                       "review/README.md).")
    project = load_project(root)
    assert (project.kind, project.title, project.data) == ("beir", DEFAULT_TITLE, "data")
    assert project.evaluate == {"dense_model": "minilm-offline", "skip_rerank": True,
                                "skip_rerank_reason": "no cross-encoder can be loaded offline on this machine"}
    assert set(project.require_outputs()) == {"readout", "teachback", "aar"}
    frozen = json.loads((root / "claims" / "design-freeze.json").read_text())["documents"]
    assert sorted(frozen) == sorted(DESIGN_DOCUMENTS)
    assert main(["freeze", str(root)]) == 0
    assert "Design freeze unchanged: 5 documents" in capsys.readouterr().out


def test_the_scaffold_readout_yaml_is_commented_and_valid_against_the_packaged_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    init_project(tmp_path / "p")
    text = (tmp_path / "p" / "readout.yaml").read_text(encoding="utf-8")
    assert text.count("\n#") + text.count("\n  #") >= 10
    for alternative in ("dense_model: BAAI/bge-small-en-v1.5", "rerank_model: BAAI/bge-reranker-v2-m3",
                        "rerank_cost: shape"):
        assert f"#   {alternative}" in text
    jsonschema.Draft202012Validator(load_config_schema()).validate(yaml.safe_load(text))


def test_the_readme_says_the_next_commands_design_first(tmp_path):
    init_project(tmp_path / "p")
    readme = (tmp_path / "p" / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^(readout \w+|git add)", readme, re.M)
    assert commands == ["readout freeze", "git add", "readout build", "readout check", "readout build", "readout gate"]
    assert "readout build --draft --data PATH" in readme
    init_project(tmp_path / "q", data=tmp_path)
    assert "readout build --draft    " in (tmp_path / "q" / "README.md").read_text(encoding="utf-8")


def test_init_writes_data_relative_to_the_project_or_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "beir").mkdir()
    # Relative stays relative (to readout.yaml), so any clone holding the folder beside it builds.
    init_project("outside", data="beir")
    assert load_project(tmp_path / "outside").data == "../beir"
    assert load_project(tmp_path / "outside").data_dir.resolve() == (tmp_path / "beir").resolve()
    init_project("absolute", data=tmp_path / "beir")
    assert load_project(tmp_path / "absolute").data == str(tmp_path / "beir")
    (tmp_path / "inside" / "data" / "beir").mkdir(parents=True)
    init_project("inside", data="inside/data/beir", force=True)
    assert load_project(tmp_path / "inside").data == "data/beir"
    with pytest.raises(InputError, match=r"^missing: --data: not a directory"):
        init_project("third", data="missing")
    assert not (tmp_path / "third").exists()


def test_a_title_is_a_label(tmp_path):
    init_project(tmp_path / "p", title="  The reranker review  ")
    assert load_project(tmp_path / "p").title == "The reranker review"
    assert (tmp_path / "p" / "README.md").read_text().startswith("# The reranker review\n")
    with pytest.raises(InputError, match=r"^--title: the title is the readout's heading: a label holds no sentence"):
        init_project(tmp_path / "q", title="Hybrid wins. Ship it.")
    assert not (tmp_path / "q").exists()


def test_init_refuses_a_non_empty_directory_without_force(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "notes.txt").write_text("mine\n")
    with pytest.raises(InputError) as refused:
        init_project("p")
    assert str(refused.value) == ("p: not empty (holds 'notes.txt'); init writes into a new or empty directory, or "
                                  "pass --force to add the scaffold beside what is there (no file is ever replaced)")
    assert sorted(path.name for path in (tmp_path / "p").iterdir()) == ["notes.txt"]
    init_project("p", force=True)
    assert (tmp_path / "p" / "notes.txt").read_text() == "mine\n"
    load_project(tmp_path / "p")
    (tmp_path / "repository" / ".git").mkdir(parents=True)   # `git init` first is fine
    init_project("repository")
    load_project(tmp_path / "repository")


def test_force_never_replaces_a_file_and_writes_nothing_when_one_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p" / "claims").mkdir(parents=True)
    (tmp_path / "p" / "claims" / "ledger.yaml").write_text("version: 1\nclaims: []\n")
    with pytest.raises(InputError, match=r"^p/claims/ledger.yaml: already exists; init never replaces a file"):
        init_project("p", force=True)
    assert [path.relative_to(tmp_path).as_posix() for path in sorted((tmp_path / "p").rglob("*"))] == [
        "p/claims", "p/claims/ledger.yaml"]
    (tmp_path / "f").write_text("a file\n")
    with pytest.raises(InputError, match=r"^f: exists and is not a directory"):
        init_project("f")


def test_init_errors_are_one_line_with_exit_2(tmp_path, monkeypatch, capsys):
    _require_cli("init", "x")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "x").write_text("")
    assert main(["init", "p"]) == 2
    assert capsys.readouterr().err.startswith("Error: p: not empty (holds 'x')")
    assert main(["init", "q", "--title", "Twelve words"]) == 2
    assert capsys.readouterr().err.startswith("Error: --title: the title is the readout's heading")
    assert main(["init", "q"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "wrote q/readout.yaml"


def test_check_exits_1_because_no_claim_has_a_source(tmp_path, capsys):
    init_project(tmp_path / "p")
    assert main(["check", "--no-record", str(tmp_path / "p")]) == 1
    out = capsys.readouterr().out
    for claim in STARTER_CLAIMS:
        assert re.search(rf"claim {claim} \(\w+\): \[source-present\] no source: ", out), claim
    assert f"untraceable claims / total claims = {len(STARTER_CLAIMS)}/{len(STARTER_CLAIMS)}" in out


def test_render_draft_flags_every_starter_claim_and_release_render_refuses(tmp_path, capsys, write_fixture_results):
    root = tmp_path / "p"
    init_project(root)
    # results that re-derive: the rerank row skipped for the reason the scaffold's readout.yaml gives
    write_fixture_results(root / "outputs", skip_reason=load_project(root).evaluate["skip_rerank_reason"])
    assert main(["render", str(root)]) == 1
    assert "Render refused" in capsys.readouterr().err
    assert main(["render", "--draft", str(root)]) == 0
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    teachback = (root / "outputs" / "TEACHBACK.md").read_text(encoding="utf-8")
    aar = (root / "outputs" / "AAR.md").read_text(encoding="utf-8")
    for claim in STARTER_CLAIMS:
        assert claim in html + teachback + aar
    assert "UNTRACEABLE" in html and "UNTRACEABLE" in teachback and "UNTRACEABLE" in aar
    assert "no source: attach a design quote" in aar


def test_every_commented_source_traces_once_uncommented(tmp_path, capsys, write_fixture_results):
    root = tmp_path / "p"
    init_project(root)
    # The fixture's hybrid beats dense on nDCG@5; its results come after the freeze init made and
    # give the reason the scaffold's readout.yaml gives for the skipped rerank row.
    reason = load_project(root).evaluate["skip_rerank_reason"]
    write_fixture_results(root / "outputs", skip_reason=reason,
                          started_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat())
    _uncomment_sources(root / "claims" / "ledger.yaml")
    assert main(["check", "--no-record", str(root)]) == 0, capsys.readouterr().out
    assert main(["render", str(root)]) == 0


def test_init_lines_name_every_file_written(tmp_path):
    outcome = init_project(tmp_path / "p", data=tmp_path)
    lines = init_lines(outcome)
    assert len(lines) == len(scaffold_files()) + 2
    assert "--data" not in lines[-1]


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_init_then_build_with_data_renders_a_draft_offline(tmp_path, monkeypatch, capsys, make_small_dataset):
    """The issue's acceptance: `readout init DIR && readout build DIR --data <a small BEIR folder>` from an
    empty directory, with the packaged MiniLM and no network (HF_HUB_OFFLINE), in draft mode."""
    _require_cli("init", "x")
    _require_cli("build", "x", "--data", "d", "--draft")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    data = make_small_dataset(tmp_path / "beir")
    monkeypatch.chdir(tmp_path)
    # --rerank: the scaffold's reranker rule reads a rerank row; no cross-encoder loads here, so it
    # is recorded as not measured (without the flag init leaves the row out and says so).
    assert main(["init", "review", "--rerank"]) == 0
    assert main(["build", "review", "--data", str(data), "--draft"]) == 0
    captured = capsys.readouterr()
    assert "results: evaluating (" in captured.out
    assert f"Draft: rendering with {len(STARTER_CLAIMS)} flagged failure(s)" in captured.err
    html = (tmp_path / "review" / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert all(claim in html for claim in STARTER_CLAIMS) and "UNTRACEABLE" in html
    results = json.loads((tmp_path / "review" / "outputs" / "results.json").read_text(encoding="utf-8"))
    assert results["manifest"]["models"]["dense"]["name"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert [row["measured"] for row in results["table"]] == [True, True, True, False]
    # Without --draft the release build stops at the check, and says how to go on.
    assert main(["build", "review", "--data", str(data)]) == 1
    assert "Render refused" in capsys.readouterr().err


# --- a run of the team's own: `init --run FILE` -------------------------------------------------

TEAM_RUN = "q0 Q0 doc001 1 2.5 mine\r\nq0 Q0 doc002 2 1.5 mine\r\n"


def test_init_with_a_run_copies_it_byte_for_byte_and_lists_it_as_a_row_after_the_four(tmp_path):
    run = tmp_path / "team-bm25.trec"
    run.write_bytes(TEAM_RUN.encode("utf-8"))
    outcome = init_project(tmp_path / "review", run=run)
    copied = tmp_path / "review" / "runs" / "team-bm25.trec"
    assert copied.read_bytes() == run.read_bytes()
    assert copied in outcome.written and outcome.run_row == "team-bm25"
    config = yaml.safe_load((tmp_path / "review" / "readout.yaml").read_text(encoding="utf-8"))
    assert config["evaluate"]["rows"] == [
        {"name": "dense", "kind": "dense"}, {"name": "sparse", "kind": "sparse"},
        {"name": "hybrid", "kind": "fusion", "of": ["dense", "sparse"], "method": "rrf"},
        {"name": "hybrid+rerank", "kind": "rerank", "over": "hybrid"},
        {"name": "team-bm25", "kind": "run", "file": "runs/team-bm25.trec"}]
    specs = load_project(tmp_path / "review").evaluation_options().row_specs()
    assert specs[-1].file == tmp_path / "review" / "runs" / "team-bm25.trec"
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(config, load_config_schema())


def test_init_without_a_run_keeps_the_rows_commented(tmp_path):
    init_project(tmp_path / "review")
    config = yaml.safe_load((tmp_path / "review" / "readout.yaml").read_text(encoding="utf-8"))
    assert "rows" not in config["evaluate"]
    assert not (tmp_path / "review" / "runs").exists()


def test_a_run_name_can_be_given_and_is_held_to_the_row_name_rules(tmp_path):
    run = tmp_path / "x.trec"
    run.write_text(TEAM_RUN, encoding="utf-8")
    init_project(tmp_path / "named", run=run, run_name="ours")
    assert (tmp_path / "named" / "runs" / "ours.trec").is_file()
    for name, message in (("a.b", "short identifier"), ("hybrid", "one of the four default rows"),
                          ("reranker", "must be a rerank row"), ("bm25", "must be a sparse row")):
        target = tmp_path / f"refused-{name}"
        with pytest.raises(InputError, match=message) as raised:
            init_project(target, run=run, run_name=name)
        assert raised.value.field == "--run-name"
        assert not target.exists() or list(target.iterdir()) == []


@pytest.mark.parametrize("content, line, message", [
    ("q0 Q0 doc001 1 2.5\n", 1, "six fields"),
    ("q0 Q0 doc001 1 2.5 x\nq0 Q0 doc002 2 nan x\n", 2, "not a finite number"),
    ("\n\n", None, "holds no ranking"),
])
def test_a_run_that_is_not_a_trec_run_is_refused_naming_its_line_and_nothing_is_written(tmp_path, content, line,
                                                                                         message):
    run = tmp_path / "team.trec"
    run.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as raised:
        init_project(tmp_path / "review", run=run)
    assert raised.value.line == line
    assert not (tmp_path / "review").exists() or list((tmp_path / "review").iterdir()) == []


def test_a_run_that_is_a_directory_or_missing_is_refused_by_what_it_is(tmp_path, monkeypatch, capsys):
    (tmp_path / "dir.trec").mkdir()
    monkeypatch.chdir(tmp_path)
    assert _init(["review", "--run", "dir.trec"]) == 2
    assert capsys.readouterr().err.strip() == ("Error: dir.trec: --run: is a directory, not a regular file: give a "
                                               "TREC run file (query Q0 document rank score tag)")
    assert _init(["review", "--run", "missing.trec"]) == 2
    assert "missing.trec: --run: not found" in capsys.readouterr().err
    assert not (tmp_path / "review").exists()


# --- a project that works from any clone (issue 36) ----------------------------------------------


def test_a_project_without_a_rerank_row_has_no_reranker_section_chart_rule_or_claim(tmp_path):
    init_project(tmp_path / "p", rerank=False)
    project = load_project(tmp_path / "p")
    assert [row.name for row in project.evaluate["rows"]] == ["dense", "sparse", "hybrid"]
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted((tmp_path / "p").rglob("*"))
                     if path.is_file() and path.suffix in (".md", ".yaml") and path.name != "README.md")
    # Only readout.yaml's comments (which list every kind of row and block) may name a reranker.
    spoken = [line for line in text.splitlines() if re.search(r"rerank", line, re.I) and not line.lstrip().startswith("#")]
    assert spoken == []
    readout = project.outputs["readout"]
    assert "cost" not in readout.section_ids
    assert load_project(tmp_path / "p").title == "Does hybrid search pay for itself"


def test_every_commented_source_of_a_project_without_rerank_traces(tmp_path, capsys, write_fixture_results):
    root = tmp_path / "p"
    init_project(root, rerank=False)
    write_fixture_results(root / "outputs", started_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat())
    _uncomment_sources(root / "claims" / "ledger.yaml")
    code = main(["check", "--no-record", str(root)])
    out = capsys.readouterr().out
    # The fixture's results hold a rerank row the project does not declare; every claim still traces.
    assert "Decision D2" in out and "ship the reranker" not in out
    assert code == 0 or "results-hybrid" in out, out


def test_a_hint_names_the_projects_own_decision(tmp_path, capsys):
    init_project(tmp_path / "p", rerank=False)
    ledger = tmp_path / "p" / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8") + '''  - id: verdict
    output: readout
    section: verdict
    kind: recommendation
    text: "Keep dense."
    sources:
      - design: {document: decisions.md, quote: "**Alternative beaten:** switching to hybrid because fusion usually helps."}
''', encoding="utf-8")
    assert main(["check", "--no-record", str(tmp_path / "p")]) == 1
    out = capsys.readouterr().out
    finding = next(line for line in out.splitlines() if "[verdict-licensed]" in line)
    assert "claim verdict" in finding and "trigger: D2" in finding and "D5" not in out


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_relative_data_folder_builds_from_a_second_clone_and_the_gate_needs_no_data(tmp_path, monkeypatch, capsys,
                                                                                      make_small_dataset):
    from tests.conftest import git_commit, run_git

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    origin = tmp_path / "origin"
    origin.mkdir()
    run_git(origin, "init", "-q")
    make_small_dataset(origin / "data-cranfield")
    monkeypatch.chdir(origin)
    assert main(["init", "review", "--data", "data-cranfield"]) == 0
    assert (origin / "review" / "readout.yaml").read_text(encoding="utf-8").count('data: "../data-cranfield"') == 1
    git_commit(origin, "design", ".")
    assert main(["build", "review", "--draft"]) == 0
    git_commit(origin, "a draft", ".")
    elsewhere = tmp_path / "elsewhere" / "team"
    elsewhere.parent.mkdir()
    run_git(tmp_path, "clone", "-q", origin.as_uri(), str(elsewhere))
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["build", str(elsewhere / "review"), "--draft"]) == 0, capsys.readouterr().err
    # The gate reads the ledger, the design and the results, never the dataset.
    (elsewhere / "data-cranfield" / "corpus.jsonl").unlink()
    code = main(["gate", str(elsewhere / "review")])
    out = capsys.readouterr()
    assert code == 1 and "no source" in out.out and "corpus.jsonl" not in out.out + out.err
