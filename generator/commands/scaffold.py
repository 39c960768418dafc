"""`readout init DIR`: scaffold a working review project a team can build in a minute.

The scaffold is a `kind: beir` project (generator.project) holding:

- `readout.yaml`, commented: the title, `data` (the BEIR folder; `--data PATH` writes it), an
  `evaluate:` block that runs offline (the packaged all-MiniLM-L6-v2 as the dense model; the
  rerank row where a cross-encoder can be loaded here, none where none can, which init says, and
  with `--rerank` the row recorded as not measured with its reason; the online alternatives
  commented beside them) and an `outputs:` block for readout.html, TEACHBACK.md and AAR.md, whose
  charts follow the metrics the evaluation computes;
- the five design documents of design/ as short templates with the headings the checker reads
  (decision records `## D1. ...` with a fenced `trigger` block under one of them, the latency
  budget in a fenced `budget` block), frozen in `claims/design-freeze.json`;
- `claims/ledger.yaml` with a few starter claims and no source, so a draft render shows every one
  flagged and `readout check` exits 1 until they are sourced (each carries a commented source that
  traces against these design documents);
- `outputs/` (empty) and a README naming the next four commands.

`readout build DIR --data BEIR_FOLDER --draft` on the scaffold evaluates the four rows, checks
the ledger and renders a draft readout whose claims are all flagged as having no source.

The target is a new or empty directory (a `.git` folder alone counts as empty). A non-empty one
is refused unless `--force`, and even then no existing file is ever replaced: `init` adds the
files it writes beside what is there, or stops (before writing anything) naming the first file
that already exists. Every file is written atomically (generator.storage.fileio). The written
readout.yaml is loaded back and validated before the design is frozen, so a scaffold that `init`
reports as created always loads. `init` records no trace history: the first `readout check`
scores the starter ledger as the first draft.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import field
from pathlib import Path

from generator.core.dataclass import dataclass
from generator.core.text.characters import describe, hidden_character
from generator.claims.record.freeze import freeze_project
from generator.core.options import RERANK_MODEL
from generator.core.rows import ROW_NAME, name_kind_problem
from generator.commands.cli import EXIT_OK, print_lines
from generator.commands.starter_files import (_DEFAULT_ROWS, DEFAULT_DATA, DEFAULT_TITLE, DEFAULT_TITLE_WITHOUT_RERANK,
                                              README_NAME, scaffold_files)
from generator.core.runfiles import run_file_lines
from generator.storage.errors import InputError
from generator.storage.bounded_reads import regular_file_problem
from generator.storage.fileio import atomic_write_bytes, atomic_write_text
from generator.storage.paths import display_path, path_option
from generator.project import load_project
from generator.core.text.wording import label_problem


# --- init --------------------------------------------------------------------------------------


@dataclass
class InitOutcome:
    root: Path
    written: list[Path] = field(default_factory=list)
    frozen: dict[str, str] = field(default_factory=dict)
    data_given: bool = False
    run_row: str | None = None
    # Why init left the rerank row out by itself (no cross-encoder can load here), or None.
    no_rerank_because: str | None = None


def cross_encoder_problem(model: str = RERANK_MODEL) -> str | None:
    """Why no cross-encoder can be loaded on this machine, or None when one can: the package that
    loads it is installed and the model is a local folder or in the Hugging Face cache. Nothing is
    loaded or downloaded to tell."""
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is None:
        return "sentence-transformers is not installed"
    if Path(model).expanduser().is_dir():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub comes with sentence-transformers
        return "huggingface_hub is not installed"
    cached = try_to_load_from_cache(model, "config.json")
    return None if isinstance(cached, str) else f"{model} is not in the Hugging Face cache, and init downloads nothing"


RUNS_FOLDER = "runs"


def _team_run(run: Path, name: str | None) -> tuple[str, str, bytes]:
    """The team's run file checked as a TREC run (six fields a line, finite scores) and its row
    name (the file's stem unless given): (name, its path in the project, the file's bytes)."""
    shown = display_path(run)
    if problem := regular_file_problem(run):
        raise InputError(f"{problem}: give a TREC run file (query Q0 document rank score tag)", path=shown,
                         field="--run")
    if sum(1 for _ in run_file_lines(run, shown)) == 0:   # every line read: a bad one later is named too
        raise InputError("holds no ranking: give a TREC run file (query Q0 document rank score tag)", path=shown,
                         field="--run")
    option = "--run" if name is None else "--run-name"
    name = (run.stem if name is None else name).strip()
    if hidden := hidden_character(name):
        raise InputError(f"the row name holds the invisible, private-use or control character {describe(hidden)}: "
                         "remove it (a reader would not see it); name the row with --run-name", field=option)
    if not ROW_NAME.fullmatch(name):
        raise InputError(f"the row name {name[:60]!r} is not a short identifier (letters, digits, _ + -): "
                         f"name the row with --run-name", field=option)
    if name in {row for row, _ in _DEFAULT_ROWS}:
        raise InputError(f"the row name {name!r} is one of the four default rows: name the run with --run-name",
                         field=option)
    if problem := name_kind_problem(name, "run"):
        raise InputError(f"{problem}; name the row with --run-name", field=option)
    return name, f"{RUNS_FOLDER}/{name}.trec", run.read_bytes()


def _data_text(data: Path, root: Path) -> str:
    """`data` as readout.yaml holds it (relative to readout.yaml): a relative --data stays relative,
    so the project builds from any clone that keeps the folder beside it; an absolute one stays
    absolute, unless it lies inside the project."""
    absolute = Path(os.path.abspath(data.expanduser()))
    if not absolute.is_dir():
        raise InputError("not a directory: give the BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)",
                         field="--data", path=str(data))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        pass
    if data.expanduser().is_absolute():
        return str(absolute)
    return Path(os.path.relpath(absolute, root)).as_posix()


def init_project(target: str | Path, *, title: str | None = None, data: str | Path | None = None,
                 force: bool = False, run: str | Path | None = None, run_name: str | None = None,
                 rerank: bool | None = True) -> InitOutcome:
    """Write the scaffold into `target` (created if missing) and freeze its design; raises
    InputError (nothing written) when the target is unusable or any file would be replaced.

    `run`: a TREC run file the team already has, copied byte for byte to runs/NAME.trec and listed
    as a `run` row after the four default rows (NAME: `run_name`, else the file's stem). `rerank`: None
    chooses, as `readout init` does: the rerank row where a cross-encoder can be loaded, none
    (`--no-rerank`, said in the outcome) where none can."""
    root = Path(os.path.abspath(Path(target).expanduser()))
    shown = display_path(root)
    cannot_load = cross_encoder_problem() if rerank is not False else None
    no_rerank_because = cannot_load if rerank is None and cannot_load else None
    rerank = rerank if rerank is not None else cannot_load is None
    title = (DEFAULT_TITLE if rerank else DEFAULT_TITLE_WITHOUT_RERANK) if title is None else title.strip()
    problem = label_problem(title)
    if problem:
        raise InputError(f"the title is the readout's heading: {problem}", field="--title")
    if root.exists() and not root.is_dir():
        raise InputError("exists and is not a directory; init writes a project into a new or empty directory",
                         path=shown)
    if root.is_dir() and not force:
        # A repository made first (`git init`) does not count: the scaffold is meant to be committed.
        present = sorted(path.name for path in root.iterdir() if path.name != ".git")
        if present:
            raise InputError(f"not empty (holds {present[0]!r}); init writes into a new or empty directory, or pass "
                             f"--force to add the scaffold beside what is there (no file is ever replaced)",
                             path=shown)
    data_text = _data_text(Path(data), root) if data is not None else DEFAULT_DATA
    team_run = _team_run(Path(run), run_name) if run is not None else None
    files: dict[str, str | bytes] = dict(scaffold_files(title, data_text, data_given=data is not None,
                                                        run=team_run[:2] if team_run else None, rerank=rerank,
                                                        rerank_loads=rerank and cannot_load is None))
    if team_run is not None:
        files[team_run[1]] = team_run[2]
    for relative in files:
        existing = root / relative
        if existing.exists() or existing.is_symlink():
            raise InputError("already exists; init never replaces a file: move it away or choose another directory",
                             path=display_path(existing))
    for relative in ("design", "claims", "outputs"):
        if (root / relative).exists() and not (root / relative).is_dir():
            raise InputError("exists and is not a directory", path=display_path(root / relative))
    outcome = InitOutcome(root=root, data_given=data is not None, run_row=team_run[0] if team_run else None,
                          no_rerank_because=no_rerank_because)
    for relative, content in files.items():
        write = atomic_write_bytes if isinstance(content, bytes) else atomic_write_text
        outcome.written.append(write(root / relative, content))
    (root / "outputs").mkdir(exist_ok=True)
    outcome.frozen = freeze_project(load_project(root)).current
    return outcome


def init_lines(outcome: InitOutcome) -> list[str]:
    """What `readout init` prints."""
    shown = display_path(outcome.root)
    lines = [f"wrote {display_path(path)}" for path in outcome.written]
    if outcome.no_rerank_because:
        lines.append(f"No cross-encoder can be loaded here ({outcome.no_rerank_because}): the project has no rerank "
                     "row, no reranker section, chart or rule, as with --no-rerank. Pass --rerank to keep the row "
                     "(recorded as not measured until a cross-encoder loads).")
    lines.append(f"Froze {len(outcome.frozen)} design documents in {display_path(outcome.root / 'claims')}.")
    lines.append(f"Created a readout project in {shown}. Next, the design first: write your decisions in "
                 f"{display_path(outcome.root / 'design')}, run readout freeze {shown} and commit, then build "
                 f"(the commands are in {display_path(outcome.root / README_NAME)}).")
    return lines


# --- the command line (wired into generator.commands.cli) ------------------------------------------------


def configure_init(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=path_option,
                        help="where the project goes: a new or empty directory (created if missing)")
    parser.add_argument("--data", type=path_option, default=None,
                        help="the BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) written as readout.yaml's "
                             "`data` (default: data, inside the project)")
    parser.add_argument("--run", dest="run_file", type=path_option, default=None, metavar="FILE",
                        help="a TREC run file your team already has (query Q0 document rank score tag): copied to "
                             "runs/NAME.trec and listed as a run row after the four default rows")
    parser.add_argument("--run-name", default=None, metavar="NAME",
                        help="the run row's name (default: the run file's name without its extension)")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--no-rerank", dest="rerank", action="store_const", const=False, default=None,
                        help="a project without the rerank row: three rows (dense, sparse, hybrid), and no "
                             "reranker section, chart or decision (the default where no cross-encoder can be "
                             "loaded: sentence-transformers missing or the model not in the Hugging Face cache)")
    choice.add_argument("--rerank", dest="rerank", action="store_const", const=True,
                        help="keep the rerank row even where no cross-encoder can be loaded (recorded as not "
                             "measured, with the reason, until one loads)")
    parser.add_argument("--title", default=None,
                        help=f"the readout's title, a heading of at most ten words (default: {DEFAULT_TITLE!r})")
    parser.add_argument("--force", action="store_true",
                        help="write into a non-empty directory; a file that already exists is never replaced "
                             "(init stops, writing nothing, and names it)")


def run_init(args: argparse.Namespace) -> int:
    outcome = init_project(args.directory, title=args.title, data=args.data, force=args.force, run=args.run_file,
                           run_name=args.run_name, rerank=args.rerank)
    print_lines(init_lines(outcome), sys.stdout)
    return EXIT_OK
