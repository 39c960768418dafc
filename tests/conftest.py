"""Shared fixtures (the only place tests share code): small BEIR-layout datasets, a small
readout project checked by the real checker, a tiny random cross-encoder, and the helpers that
attack a fixture project (claims written as YAML, the CLI run in-process or in a child process).

Unit tests stay on these fixtures so the suite is fast; only tests marked `integration` read
the real SciFact copy, and only tests marked `model` load torch or the packaged MiniLM.

`make_project(root)` writes readout.yaml (the repository's own `outputs:` block, so the real
configuration is what gets tested), one design document, a ledger with claims in every output,
a results.json with the four rows (the rerank row not measured), a design freeze and a
first-draft history entry.
"""

from __future__ import annotations

import atexit
import copy
import functools
import hashlib
import inspect
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import pytest
import yaml

from generator.claims.record.freeze import freeze_project, pending_post_hoc
from generator.commands.cli import main
from generator.project import load_project
from generator.core.results import seal
from tests.one_thread import one_torch_thread  # noqa: F401 (a fixture: tests/one_thread.py says why)

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
SCIFACT_DIR = (REPOSITORY_ROOT / ".." / "shared" / "data" / "scifact").resolve()
ROOT_CONFIG = yaml.safe_load((REPOSITORY_ROOT / "readout.yaml").read_text(encoding="utf-8"))

WORDS = ("protein cell gene tumor virus insulin receptor mutation therapy immune brain neuron blood "
         "vaccine enzyme kinase signal pathway mouse human trial dose risk cancer heart lung liver "
         "bacteria antibody memory sleep diet obesity glucose").split()


def write_beir(root: Path, corpus: list[dict], queries: list[dict], qrels: list[tuple[str, str, object]]) -> Path:
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries), encoding="utf-8")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def make_small_dataset(root: Path, documents: int = 80, queries: int = 6, seed: int = 7) -> Path:
    rng = random.Random(seed)
    corpus = [{"_id": f"doc{i:03d}", "title": " ".join(rng.sample(WORDS, 3)),
               "text": " ".join(rng.choice(WORDS) for _ in range(25))} for i in range(documents)]
    query_records, qrels = [], []
    for j in range(queries):
        relevant = rng.sample(range(documents), 2)
        words = corpus[relevant[0]]["title"].split() + rng.sample(WORDS, 2)
        query_records.append({"_id": f"q{j}", "text": " ".join(words)})
        qrels += [(f"q{j}", f"doc{r:03d}", 1) for r in relevant]
    return write_beir(root, corpus, query_records, qrels)


@pytest.fixture
def small_dataset(tmp_path: Path) -> Path:
    return make_small_dataset(tmp_path / "data")


@pytest.fixture(name="make_small_dataset")
def make_small_dataset_fixture():
    """A factory: `make_small_dataset(root, documents=80, queries=6, seed=7)`."""
    return make_small_dataset


@pytest.fixture
def repository() -> Path:
    return REPOSITORY_ROOT


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    if not SCIFACT_DIR.is_dir():
        pytest.fail(f"BEIR SciFact is expected at {SCIFACT_DIR} (CI has it read-only)")
    return SCIFACT_DIR


DECISIONS = """\
# Decision records

## Fusion

Hybrid uses RRF with constant 60 over both top-50 lists.

## Reranking

The cross-encoder reorders the same 50 candidates; nothing enters or leaves.

## Rows

The rows are dense, sparse, hybrid and hybrid+rerank; a row that was not measured gives no figure.
"""


FIXTURE_QUERIES = [f"q{number:02d}" for number in range(1, 21)]

# A latency budget and the reranker's decision record with its trigger, for fixture designs.
BUDGET_REQUIREMENTS = """\
# Requirements

A reranker may add at most 500 milliseconds per query at p95 on the release CPU.

```budget
rerank_p95_milliseconds: 500
```
"""


def d5_record(p95_path: str = "rerank_cost.p95_milliseconds") -> str:
    """Decision D5 with its trigger: ship the reranker only on a lift above zero within the budget."""
    return f"""
## D5. A reranker ships only when it pays for itself

Ship it only when the lift over hybrid clears zero and its p95 fits the budget.

```trigger
decision: D5
when: lift_low > 0 and lift_p < 0.05 and p95 <= budget
fires: ship the reranker
otherwise: do not ship the reranker
values:
  lift_low: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.ci95_low
  lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.p_value
  p95: {p95_path}
  budget: budget.rerank_p95_milliseconds
```
"""


# --- fixture builds, memoised ----------------------------------------------------------------------
# A fixture evaluation draws its intervals and power again (most of a second a build, and hundreds of
# tests build one). The same arguments always give the same bytes, so each process computes each
# variant once and every later call gets a copy of its own: a test still receives a fresh evaluation,
# a freshly written results set or a fresh writable project, never one another test could change.


def _variant_key(function, args: tuple, kwargs: dict) -> str:
    """The arguments of a call with their defaults filled in, as text: equal calls, equal keys."""
    import generator.core.metrics as metrics_module

    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    # A test may score the fixture's rankings with other metrics (monkeypatched ROW_METRICS): a
    # different evaluation, so a different key.
    metrics = [getattr(metric, "name", repr(metric)) for metric in metrics_module.ROW_METRICS]
    return repr((sorted(bound.arguments.items()), metrics))


def _each_call_a_copy(function):
    """`function`, computed once per distinct arguments in this process; every call returns a deep copy."""
    computed: dict[str, Any] = {}

    @functools.wraps(function)
    def memoised(*args, **kwargs):
        key = _variant_key(function, args, kwargs)
        if key not in computed:
            computed[key] = function(*args, **kwargs)
        return copy.deepcopy(computed[key])

    return memoised


@functools.cache
def _build_directory() -> Path:
    """Where this process keeps the fixture builds it copies from (removed when it exits)."""
    directory = Path(tempfile.mkdtemp(prefix="readout-test-builds-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


@_each_call_a_copy
def fixture_evaluation(*, hybrid_variant: int = 0, rerank_milliseconds: dict | None = None,
                       shape_milliseconds: float | None = None, skip_reason: str = "no cross-encoder offline",
                       started_at: str = "2026-11-30T08:00:00Z", frontier_p95: dict | None = None):
    """A small, real evaluation: 20 queries over 40 documents, seeded rankings for dense, sparse
    and hybrid (hybrid the best on nDCG@5), the rerank row not measured unless times are given
    (then it reorders hybrid's candidates; an oracle order, so its lift is large). `hybrid_variant`
    makes another, still consistent run. `shape_milliseconds` records the reranker's cost as
    measured by shape (that many milliseconds per query, rising slightly) while its quality is not
    measured; `rerank_cost` otherwise follows the rerank row. `frontier_p95` ({(model, depth): ms})
    adds a frontier over hybrid's candidates, each configuration that many ms per query (by shape)."""
    from generator.core.comparisons import method_description
    from generator.core.metrics import ROW_METRICS
    from generator.evaluate.pipeline import Evaluation, not_measured_cost
    from generator.core.results.builders import (RowRun, evaluation_document, ranked_ids, rerank_summary, score_rows,
                                                 timing_summary)

    rng = random.Random(20261130 + hybrid_variant)
    documents = [f"d{number:02d}" for number in range(40)]
    judgements, rankings = {}, {"dense": {}, "sparse": {}, "hybrid": {}}
    for query in FIXTURE_QUERIES:
        relevant = rng.sample(documents, 2)
        judgements[query] = {doc: 1 for doc in relevant}
        for row, boost in (("dense", 0.45), ("sparse", 0.35), ("hybrid", 0.7 + 0.05 * hybrid_variant)):
            others = [doc for doc in documents if doc not in relevant]
            ranked = rng.sample(others, 10)
            for doc in relevant:
                if rng.random() < boost:
                    ranked.insert(rng.randrange(0, 5), doc)
                elif rng.random() < 0.5:
                    ranked.insert(rng.randrange(5, len(ranked)), doc)
            rankings[row][query] = [(doc, round(1.0 - rank / 100, 4)) for rank, doc in enumerate(ranked)]
    rerank = None
    if rerank_milliseconds is not None:
        rerank = {q: sorted(rankings["hybrid"][q], key=lambda item: (item[0] not in judgements[q], item[0]))
                  for q in FIXTURE_QUERIES}
        rerank = {q: [(doc, round(1.0 - rank / 100, 4)) for rank, (doc, _) in enumerate(ranked)]
                  for q, ranked in rerank.items()}
        rankings["hybrid+rerank"] = rerank
    rows = [RowRun("dense", "dense-model", rankings["dense"]), RowRun("sparse", "sparse-model", rankings["sparse"]),
            RowRun("hybrid", "hybrid-model", rankings["hybrid"]),
            RowRun("hybrid+rerank", "BAAI/bge-reranker-v2-m3", rerank, None if rerank else skip_reason)]
    scored = score_rows(rows, judgements, FIXTURE_QUERIES, bootstrap_resamples=500, seed=20261130,
                        metrics=ROW_METRICS)
    pairs = {q: len(rankings["hybrid"][q]) for q in FIXTURE_QUERIES}
    if rerank_milliseconds is not None:
        times = {q: float(rerank_milliseconds[q]) for q in FIXTURE_QUERIES}
        rerank_cost = {"measured": True, "cost": "measured", "quality": "measured", "model": "BAAI/bge-reranker-v2-m3",
                       **timing_summary(times, pairs), "per_query_milliseconds": times, "per_query_pairs": pairs}
    elif shape_milliseconds is not None:
        times = {q: float(shape_milliseconds) + index for index, q in enumerate(FIXTURE_QUERIES)}
        rerank_cost = {"measured": True, "cost": "measured by shape", "quality": "not measured",
                       "model": "BAAI/bge-reranker-v2-m3", "max_length": 512, "batch_size": 16,
                       **timing_summary(times, pairs), "per_query_milliseconds": times, "per_query_pairs": pairs}
    else:
        rerank_cost = not_measured_cost("BAAI/bge-reranker-v2-m3", "no cross-encoder offline")
    results = evaluation_document(
        documents=len(documents), query_ids=FIXTURE_QUERIES, query_set="sample", candidate_depth=50, quality=scored,
        rerank=rerank_summary(ranked_ids(rankings["hybrid"], FIXTURE_QUERIES), rerank, rerank_milliseconds,
                              FIXTURE_QUERIES),
        rerank_costs={"hybrid+rerank": rerank_cost}, frontier=None, rankings=rankings, query_texts={},
        runs={row: f"runs/{row.replace('+', '-')}.trec" for row in rankings},
        manifest={
            "inputs": {"corpus.jsonl": {"sha256": "ab12" * 16, "bytes": 10}},
            "parameters": {"candidate_depth": 50}, "query_ids": FIXTURE_QUERIES,
            "models": {"dense": {"name": "sentence-transformers/all-MiniLM-L6-v2", "weights_sha256": "cd34" * 16},
                       "rerank": {"name": "BAAI/bge-reranker-v2-m3",
                                  "weights_sha256": "ef56" * 16 if rerank_milliseconds else None}},
            # How every interval was drawn: check draws each one again from this, bit for bit.
            "uncertainty": method_description(500, 20261130),
            "packages": {"sentence-transformers": "6.2.0", "torch": "2.13.0"},
            "platform": "Linux-x86_64", "threads": 2,
            "started_at": started_at, "finished_at": started_at})
    # The fixture's rows predate configurable rows: no manifest.rows, so the SciFact roles apply.
    if frontier_p95 is not None:
        from generator.core.metrics import metrics_from_names
        from generator.core.results.builders import frontier_block

        def fitted(total: float) -> dict:
            # An extrapolation as the cost stage writes it: layers 0 and 2 timed, read at 12.
            intercept = total / 10
            per_layer = (total - intercept) / 12
            return {"intercept_milliseconds": intercept, "per_layer_milliseconds": per_layer,
                    "layer_milliseconds": {"0": intercept, "2": intercept + 2 * per_layer}}

        configurations = []
        for (model, depth), ms in sorted(frontier_p95.items()):
            times = {q: float(ms) + index for index, q in enumerate(FIXTURE_QUERIES)}
            configurations.append({
                "model": model, "depth": depth, "max_length": 256, "precision": "fp32", "batch_size": 5,
                "cost": "measured by shape, extrapolated from 2 of 12 layers", "quality": "not measured",
                "layers_timed": [0, 2], "full_layers": 12, "per_query_fit": {q: fitted(t) for q, t in times.items()},
                "per_query_milliseconds": times,
                "per_query_pairs": {q: len(rankings["hybrid"][q][:depth]) for q in FIXTURE_QUERIES}})
        results["frontier"] = frontier_block(configurations, "hybrid",
                                             {q: [d for d, _ in rankings["hybrid"][q]] for q in FIXTURE_QUERIES},
                                             judgements, FIXTURE_QUERIES, metrics_from_names(["nDCG@5"])[0])
    return Evaluation(results=results, rankings=rankings, judgements=judgements)


def write_fixture_results(outputs_dir: Path, **variant) -> dict:
    """Write a sealed results.json with its run files and judgements; returns what was written.
    The set is written as the evaluation writes one (generator.storage.fileio.write_set: temporaries,
    then renames, results.json last), from the bytes of the first such set this process wrote."""
    from generator.storage.fileio import write_set

    files = _fixture_results_files(_variant_key(fixture_evaluation, (), variant), variant)
    write_set([(outputs_dir / relative, data) for relative, data in files])
    return json.loads(files[-1][1])


_RESULTS_FILES: dict[str, list[tuple[str, bytes]]] = {}


def _fixture_results_files(key: str, variant: dict) -> list[tuple[str, bytes]]:
    """The results set of one variant, each file by its path inside outputs/, results.json last."""
    if key not in _RESULTS_FILES:
        from generator.evaluate.pipeline import write_sealed_results

        outputs = Path(tempfile.mkdtemp(prefix="results-", dir=_build_directory()))
        results = write_sealed_results(outputs / "results.json", outputs / "runs", fixture_evaluation(**variant))
        others = sorted(path for path in outputs.rglob("*") if path.is_file() and path != results)
        _RESULTS_FILES[key] = [(path.relative_to(outputs).as_posix(), path.read_bytes()) for path in [*others, results]]
    return _RESULTS_FILES[key]


CLAIMS = """\
  - id: verdict-hybrid
    output: readout
    section: verdict
    kind: evaluative
    text: "Hybrid's nDCG@5 is {hybrid:.3f} and dense's is {dense:.3f}."
    sources:
      - measured:
          values: {hybrid: "table[search=hybrid].nDCG@5", dense: "table[search=dense].nDCG@5"}
          predicate: "hybrid > dense"
  - id: rrf-constant
    output: readout
    section: results
    kind: factual
    text: 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."'
    sources:
      - design: {document: decisions.md, quote: "Hybrid uses RRF with constant 60 over both top-50 lists."}
  - id: rerank-not-measured
    output: readout
    section: cost
    kind: factual
    text: "The rerank row was not measured: {why}."
    sources:
      - measured:
          values: {measured: "table[search=hybrid+rerank].measured",
                   why: "table[search=hybrid+rerank].not_measured_reason"}
          predicate: "not measured"
  - id: struck-speed
    output: readout
    section: cost
    kind: performance
    text: "Reranking adds 12 ms per query."
    status: struck
    strike_reason: "the rerank row was not measured"
    strike_display: strike
  - id: omitted-guess
    output: readout
    section: limits
    kind: causal
    text: "The guess that should never be printed."
    status: struck
    strike_reason: "no source"
    strike_display: omit
  - id: same-candidates
    output: teachback
    section: candidates
    kind: factual
    text: 'The design: "The cross-encoder reorders the *same* 50 candidates; nothing enters or leaves."'
    sources:
      - design: {document: decisions.md, quote: "The cross-encoder reorders the same 50 candidates; nothing enters or leaves."}
  - id: happened-hybrid
    output: aar
    section: happened
    kind: performance
    text: "Hybrid's nDCG@5 is {hybrid:.3f}."
    sources:
      - measured:
          values: {hybrid: "table[search=hybrid].nDCG@5"}
"""

# The first check of the fixture's first draft: 2 of its 5 active claims did not trace, 2 were struck.
FIRST_DRAFT = {"checked_at": "2026-11-30T07:00:00Z", "untraceable": 2, "struck": 2, "total": 7,
               "previous_sha256": "genesis"}


def ledger_text(extra: str = "", claims: str = CLAIMS) -> str:
    """A ledger: `claims` (already indented under `claims:`), then `extra` (claims at column 0)."""
    extra = textwrap.dedent(extra)
    return "version: 1\nclaims:\n" + claims + "".join(
        "  " + line if line.strip() else line for line in extra.splitlines(keepends=True))


def write_project_files(root: Path, *, config_text: str, decisions: str, ledger: str, write_results=None,
                        results: dict | None = None, freeze=None, design: dict[str, str] | None = None) -> None:
    """What every fixture project holds: readout.yaml, design/decisions.md, a sealed results.json
    with its run files and judgements in outputs/, and claims/ledger.yaml. `freeze(root)` runs once
    the design is written and before any result exists, as a review made in order would."""
    (root / "design").mkdir(parents=True)
    (root / "claims").mkdir()
    (root / "outputs").mkdir()
    (root / "readout.yaml").write_text(config_text, encoding="utf-8")
    (root / "design" / "decisions.md").write_text(decisions, encoding="utf-8")
    for name, text in (design or {}).items():
        (root / "design" / name).write_text(text, encoding="utf-8")
    if freeze is not None:
        freeze(root)
    (write_results or write_fixture_results)(root / "outputs", **(results or {}))
    (root / "claims" / "ledger.yaml").write_text(ledger, encoding="utf-8")


def _make_project(root: Path, *, extra_claims: str = "", results: dict | None = None, outputs=None,
                  own_templates: bool = False) -> Path:
    """Write a fixture project at `root`, its design frozen before its results; returns root.
    Each process builds a project once per `results` and `outputs` and copies it: what a build
    writes does not depend on where it stands (no path is recorded), and the ledger, the one file
    `extra_claims` changes, is written last into the copy."""
    template = _built_project(_variant_key(fixture_evaluation, (), results or {}) + repr(outputs), results, outputs)
    root.mkdir(parents=True, exist_ok=True)
    for entry in sorted(template.iterdir()):
        # A fresh copy (new files, new times), as a build writes them; an existing directory is an
        # error, as it is to a build.
        if entry.is_dir():
            shutil.copytree(entry, root / entry.name, copy_function=shutil.copyfile)
        else:
            shutil.copyfile(entry, root / entry.name)
    if extra_claims:
        (root / "claims" / "ledger.yaml").write_text(ledger_text(extra_claims), encoding="utf-8")
    if own_templates:
        shutil.copytree(REPOSITORY_ROOT / "templates", root / "templates")
    return root


_PROJECTS: dict[str, Path] = {}


def _built_project(key: str, results: dict | None, outputs) -> Path:
    """The fixture project of these results and outputs with the fixture's own ledger, built once."""
    if key not in _PROJECTS:
        root = Path(tempfile.mkdtemp(prefix="project-", dir=_build_directory()))
        config = {"title": ROOT_CONFIG["title"], "kind": "beir",
                  "outputs": copy.deepcopy(outputs if outputs is not None else ROOT_CONFIG["outputs"])}
        write_project_files(root, config_text=yaml.safe_dump(config, sort_keys=False), decisions=DECISIONS,
                            ledger=ledger_text(), results=results,
                            freeze=lambda where: freeze_project(load_project(where), now=FIXTURE_FREEZE_TIME))
        first_draft = ledger_text().encode("utf-8")
        (root / "claims" / "ledger.first-draft.yaml").write_bytes(first_draft)
        entry = {**FIRST_DRAFT, "ledger_sha256": hashlib.sha256(first_draft).hexdigest()}
        (root / "claims" / "trace-history.jsonl").write_text(json.dumps(entry, sort_keys=True) + "\n",
                                                            encoding="utf-8")
        _PROJECTS[key] = root
    return _PROJECTS[key]


# Fixture freezes carry a fixed time, so what they render is the same on every run.
FIXTURE_FREEZE_TIME = datetime(2026, 11, 30, 6, 0, tzinfo=timezone.utc)


@pytest.fixture(name="make_project")
def make_project_fixture():
    """A factory: `make_project(root, extra_claims="", results=None, outputs=None, own_templates=False)`;
    `results` holds keyword arguments of `fixture_evaluation` (a variant of the sealed results)."""
    return _make_project


@pytest.fixture(name="write_fixture_results")
def write_fixture_results_fixture():
    """A factory: `write_fixture_results(outputs_dir, hybrid_variant=0, rerank_milliseconds=None)`."""
    return write_fixture_results


@pytest.fixture
def memos(tmp_path, monkeypatch) -> Path:
    """Memos on, in a cache and with a signing key of this test's own: the memo directory."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("READOUT_CACHE", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    return cache / "memo"


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A randomly initialised two-layer BERT cross-encoder (one output): its scores mean nothing;
    it exists to exercise the rerank mechanics without a model hub."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from generator.evaluate.models import _packaged_minilm_path

    torch.manual_seed(0)
    target = tmp_path_factory.mktemp("models") / "tiny-random-cross-encoder"
    tokenizer = BertTokenizerFast.from_pretrained(str(_packaged_minilm_path()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
                        num_labels=1)
    BertForSequenceClassification(config).save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target


# --- attacking a fixture project: claims as YAML, the CLI in-process or in a child, edits -------
# (the adversarial suites of tests/claims, tests/render and tests/test_adversarial_inputs.py use
# these; a test that writes a ledger builds its claims with `claim`, `measured` and `design`)

WRITER = "readout evaluate 0.1.0"
HISTORY = Path("claims") / "trace-history.jsonl"

@dataclass
class Outcome:
    code: int
    out: str
    err: str

    def claim_lines(self, claim_id: str) -> list[str]:
        """The report lines that name one claim (`claims/ledger.yaml:N: claim ID (kind): reason`)."""
        return [line for line in self.out.splitlines() if f" claim {claim_id} (" in line]

    def claim_says(self, claim_id: str, fragment: str) -> bool:
        return any(fragment in line for line in self.claim_lines(claim_id))


def claim(claim_id: str, text: str, sources: str = "", *, kind: str = "factual", output: str = "readout",
          section: str = "results", extra: str = "", asserts: list[dict] | None = None) -> str:
    """One ledger claim as YAML (column 0; conftest's ledger_text indents it into `claims:`)."""
    lines = [f"- id: {claim_id}", f"  output: {output}", f"  section: {section}", f"  kind: {kind}",
             f"  text: {json.dumps(text, ensure_ascii=False)}"]
    lines += ["  " + line for line in extra.splitlines() if line.strip()]
    if sources:
        lines.append("  sources:")
        lines += ["    " + line for line in sources.splitlines() if line.strip()]
    if asserts:
        lines.append("  asserts:")
        lines += ["    - " + json.dumps(entry, ensure_ascii=False) for entry in asserts]
    return "\n".join(lines) + "\n"


def measured(values: dict, predicate: str | None = None, file: str | None = None) -> str:
    body: dict = {}
    if file is not None:
        body["file"] = file
    body["values"] = values
    if predicate is not None:
        body["predicate"] = predicate
    return "- measured: " + json.dumps(body, ensure_ascii=False) + "\n"


def design(quote: str, document: str = "decisions.md") -> str:
    return "- design: " + json.dumps({"document": document, "quote": quote}, ensure_ascii=False) + "\n"


# A design source that holds no number: the carrier for every hand-typed-number case.
FUSION = design("Hybrid uses RRF with constant 60 over both top-50 lists.")
HYBRID = "table[search=hybrid].nDCG@5"
DENSE = "table[search=dense].nDCG@5"
SPARSE = "table[search=sparse].nDCG@5"
HYBRID_VS_DENSE = "Hybrid reaches nDCG@5 {h:.3f} and dense {d:.3f}."


def run_cli(root: Path, monkeypatch, capsys, *args: str) -> Outcome:
    """`readout ARGS ROOT`, in-process, from the project directory (messages are relative)."""
    monkeypatch.chdir(root)
    capsys.readouterr()
    code = main([*args, str(root)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "Traceback" not in err, err
    return Outcome(code, out, err)


def run_subprocess(root: Path, *args: str, timeout: float = 10.0) -> tuple[Outcome, float]:
    """`python -m generator.commands.cli ARGS .` in a child process with a timeout: for inputs that might hang."""
    started = time.monotonic()
    completed = run_python("-m", "generator.commands.cli", *args, ".", cwd=root, timeout=timeout)
    elapsed = time.monotonic() - started
    return Outcome(completed.returncode, completed.stdout, completed.stderr), elapsed


def one_line_error(outcome: Outcome) -> str:
    """The single line an input error prints (exit 2): no traceback, nothing more."""
    assert "Traceback" not in outcome.err + outcome.out, outcome.err
    lines = [line for line in outcome.err.splitlines() if line.strip()]
    assert len(lines) == 1, outcome.err
    return lines[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit_results(root: Path, change, *, reseal: bool = False) -> None:
    """Edit outputs/results.json in place; with `reseal`, recompute its seal as anyone can."""
    path = root / "outputs" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    if reseal:
        data = seal(data, WRITER)
    path.write_text(json.dumps(data), encoding="utf-8")


def add_design(root: Path, text: str, name: str = "decisions.md") -> None:
    """Append to (or write) a design document and renew the freeze, as an author would once the
    fixture's results exist: an amendment with a reason, every decision it moves acknowledged as
    post hoc."""
    path = root / "design" / name
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + text, encoding="utf-8")
    refreeze(root)


def refreeze(root: Path, reason: str = "the fixture's design grows after its results"):
    """Freeze a fixture project's design again once its results exist: an amendment with a reason,
    every decision it sets or moves acknowledged as post hoc."""
    project = load_project(root)
    return freeze_project(project, reason=reason, post_hoc=pending_post_hoc(project), now=FIXTURE_FREEZE_TIME)


def edit_config(root: Path, change) -> None:
    path = root / "readout.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def set_label(root: Path, key: str, value: str) -> None:
    path = root / "templates" / "labels.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(key + ":") for line in lines), key
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" if line.startswith(key + ":") else line
             for line in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")




# --- child processes ----------------------------------------------------------------------------

# What the light commands must never import (generator.commands.cli imports the evaluation stage late).
HEAVY_MODULES = ("torch", "sentence_transformers", "bm25s", "transformers", "numpy", "scipy")


def cost_project(root: Path, data: Path) -> Path:
    """A beir project whose outputs name a hybrid run of five candidates per query."""
    from generator.evaluate.data import load_dataset   # here: conftest loads on Pythons without the evaluation stack
    from generator.core.runfiles import write_run

    dataset = load_dataset(data)
    rankings = {q: [(doc_id, 1.0 / rank) for rank, doc_id in enumerate(dataset.document_ids[i:i + 5], start=1)]
                for i, q in enumerate(dataset.test_query_ids())}
    (root / "outputs").mkdir(parents=True)
    (root / "readout.yaml").write_text(yaml.safe_dump({"title": "Cost", "kind": "beir", "data": str(data),
                                                       "evaluate": {"progress": False}}), encoding="utf-8")
    write_run(root / "outputs" / "runs" / "hybrid.trec", rankings, "hybrid")
    (root / "outputs" / "results.json").write_text(json.dumps({"runs": {"hybrid": "runs/hybrid.trec"}}),
                                                   encoding="utf-8")
    return root


def run_python(*args: str, cwd: Path | None = None, timeout: float = 120,
               env: dict | None = None) -> subprocess.CompletedProcess:
    """`python ARGS` in a child process that imports this checkout's `generator` from any working
    directory, whether the package is installed, installed elsewhere, or not at all (the only way
    the tests start Python; tests/test_architecture.py holds them to it)."""
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_python_environment(env), capture_output=True,
                          text=True, timeout=timeout)


def _python_environment(env: dict | None) -> dict:
    base = dict(os.environ if env is None else env)
    base["PYTHONPATH"] = os.pathsep.join(part for part in (str(REPOSITORY_ROOT), base.get("PYTHONPATH")) if part)
    base.pop("READOUT_DEBUG", None)
    return base


def start_python(*args: str, cwd: Path | None = None, env: dict | None = None, under: Sequence[str] = (),
                 **popen: Any) -> subprocess.Popen:
    """`python ARGS` started as run_python starts it, without waiting for it (a test that signals
    it or reads its output as it runs); `under` runs it under another command (`setpriv ...`)."""
    return subprocess.Popen([*under, sys.executable, *args], cwd=cwd, env=_python_environment(env), **popen)


def run_tool(*argv: str, timeout: float = 120, check: bool = False) -> subprocess.CompletedProcess:
    """A system tool (mount, umount, chmod), never Python: start_python and run_python start that."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=check)


def readout_on_path(directory: Path) -> dict:
    """An environment whose PATH starts with a `readout` command that runs this checkout, however
    the package was installed: for tools that call `readout` themselves (pre-commit, the CI gate)."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    command = bin_dir / "readout"
    command.write_text(f'#!/bin/sh\nPYTHONPATH="{REPOSITORY_ROOT}" exec "{sys.executable}" -m generator.commands.cli "$@"\n')
    command.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def run_program(argv: list[str], cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    """A program that is not Python (a shell script, git) in a child process; a Python tool runs
    through run_python."""
    return subprocess.run([str(part) for part in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def cli_in_fresh_interpreter(argv: list[str], cwd: Path) -> tuple[int, list[str] | None, str]:
    """`readout ARGV` in a fresh interpreter: its exit code, which of HEAVY_MODULES it imported, and
    everything it printed."""
    code = ("import json, sys; from generator.commands.cli import main; rc = main(sys.argv[1:]); "
            f"print(json.dumps(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))); sys.exit(rc)")
    completed = run_python("-c", code, *argv, cwd=cwd)
    lines = completed.stdout.strip().splitlines()
    heavy = json.loads(lines[-1]) if lines and lines[-1].startswith("[") else None
    return completed.returncode, heavy, completed.stdout + completed.stderr


# --- git -----------------------------------------------------------------------------------------


def run_git(root: Path, *args: str) -> str:
    """`git ARGS` in `root` with a fixed identity and no user configuration: a test's own repository."""
    completed = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                               env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                                    "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root), "PATH": os.environ.get("PATH", "")})
    return completed.stdout.strip()


def git_commit(root: Path, message: str, *paths: str) -> str:
    """Commit `paths` in the test repository at `root`; returns the commit id."""
    run_git(root, "add", *paths)
    run_git(root, "commit", "-q", "-m", message)
    return run_git(root, "rev-parse", "HEAD")


def rule_view(text: str, rows=(), **paths: str):
    """A claim's view (generator.claims.tracing.view) bound by hand, for a rule's unit test: the
    sentence `text`, its placeholders bound to `paths` of results.json (located with the SciFact
    review's roles) and the rows of its file. Rules that read the project (decisions, the
    design's budgets, other files) are tested through `make_project` instead."""
    from types import SimpleNamespace

    from generator.claims.language.ledger import Claim, parse_placeholders
    from generator.claims.language.visible import Visible
    from generator.claims.tracing.naming import ShownValue
    from generator.claims.tracing.view import ClaimView
    from generator.core.results import parse_path

    claim = Claim(id="c", line=1, output="readout", section="results", kind="factual", text=text,
                  placeholders=parse_placeholders(text))
    view = ClaimView(claim, SimpleNamespace(languages=()))
    view.declared = {name: ShownValue(name, "results.json", parse_path(path)) for name, path in paths.items()}
    view.rows = set(rows)
    view.visible = Visible(" ".join(text.split()))
    return view


# --- scheduling ------------------------------------------------------------------------------------

# The modules that hold a worker longest (measured with --durations=0 on a clean clone, 2026-12-06:
# the Ray engine's clusters, Chromium, the evaluations), handed out first. pytest-xdist's
# loadscope hands out modules in the order they are queued; the one queued last decides when the
# suite ends, so a three-minute module queued last kept one worker busy while the other waited.
# The Ray clusters (two CPUs each) are one module, so that they never run beside each other
# (queued apart, as two modules, they still overlapped). Only the order changes: every test runs,
# each independent of the others.
LONGEST_FIRST = (
    "tests/evaluate/test_distributed.py",
    "tests/render/test_shell_browser.py",
    "tests/evaluate/test_evaluation.py",
    "tests/test_concurrency.py",
    "tests/test_signals.py",
    "tests/render/test_browser.py",
    "tests/test_architecture.py",
    "tests/test_bounded_reads.py",
    "tests/test_regression_gate.py",
    "tests/evaluate/test_cache_integrity.py",
)


def pytest_collection_modifyitems(config, items):
    """The longest modules first, then the others by their number of tests, most first (what
    pytest-xdist's own reordering does, which `make test` turns off with --no-loadscope-reorder so
    that this order holds); a module's tests keep their order."""
    module = {id(item): item.nodeid.split("::", 1)[0] for item in items}
    tests_in = {}
    for name in module.values():
        tests_in[name] = tests_in.get(name, 0) + 1
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: (rank.get(module[id(item)], len(rank)), -tests_in[module[id(item)]],
                                 module[id(item)]))
