"""Running the configured rows in order, one method per kind (dense, sparse, fusion, rerank, a
supplied run), each row reading the rankings of the rows above it.

Every row's model is resolved before the long work starts, so a missing model fails in seconds
rather than after the corpus is encoded. The retrieval functions import torch,
sentence-transformers and bm25s when they run.
"""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path
from typing import Any, Callable, Sequence

from generator.core.dataclass import dataclass
from generator.core.options import DEFAULT_PRECISION, EvaluationOptions
from generator.core.rows import RowSpec
from generator.core.runfiles import read_supplied_run
from generator.evaluate.cache import EmbeddingCache, RerankCache
from generator.evaluate.data import Dataset
from generator.evaluate.models import resolve_model
from generator.evaluate.retrieval import dense_rankings, fused_rankings, rerank_rankings, sparse_rankings
from generator.evaluate.trained_reranker import _corpus_sha256, trained_label
from generator.core.results.builders import RowRun
from generator.storage.errors import InputError, ModelUnavailableError
from generator.storage.bounded_reads import regular_file_problem
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path


@dataclass
class RowModels:
    """The models of the configured rows, resolved before the long work starts so that a missing
    model fails in seconds: each dense row's, and each reranker's (or why it does not run)."""
    dense: dict[str, Any]
    rerank_specs: tuple[RowSpec, ...]
    rerank_identities: dict[str, Any] = field(default_factory=dict)
    rerank_reasons: dict[str, str] = field(default_factory=dict)

    def reason(self, row: str | None) -> str:
        if row is None:
            return "no rerank row is configured (evaluate.rows)"
        return self.rerank_reasons.get(row, "")


def resolve_row_models(specs: Sequence[RowSpec], options: EvaluationOptions) -> RowModels:
    models = RowModels({spec.name: resolve_model(spec.model) for spec in specs if spec.kind == "dense"},
                       tuple(spec for spec in specs if spec.kind == "rerank"))
    for spec in models.rerank_specs:
        if options.skip_rerank or spec.skip:
            models.rerank_reasons[spec.name] = spec.skip or options.skip_rerank_reason
            continue
        try:
            models.rerank_identities[spec.name] = resolve_model(spec.model)
        except ModelUnavailableError as error:
            raise ModelUnavailableError(f"{error}; or run with --skip-rerank (or give the row a skip: reason) to "
                                        f"record the {spec.name} row as not measured") from None
    return models


@dataclass
class RowRuns:
    """What running the rows gave: each row's rankings, and what the manifest says about them."""
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    rows: list[RowRun] = field(default_factory=list)
    dense_outcomes: dict[str, Any] = field(default_factory=dict)
    reranks: dict[str, Any] = field(default_factory=dict)   # row -> its RerankOutcome, for the rows that ran
    supplied: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class RowRunner:
    """Runs each configured row in order, one method per kind; a row reads the rankings of the rows
    above it."""
    dataset: Dataset
    query_ids: Sequence[str]
    options: EvaluationOptions
    models: RowModels
    cache_dir: Path
    device: str
    log: Callable[[str], None]
    load_cross_encoder: Callable | None = None
    engine: Any = None   # generator.evaluate.distributed.RayEngine, or None: here

    def run(self, specs: Sequence[RowSpec]) -> RowRuns:
        self.queries = {q: self.dataset.queries[q] for q in self.query_ids}
        self.runs = RowRuns()
        for spec in specs:
            rankings, model_name = getattr(self, f"_{spec.kind}")(spec)
            if rankings is not None:
                self.runs.rankings[spec.name] = rankings
            self.runs.rows.append(RowRun(spec.name, spec.label(self.options.depth, model_name), rankings,
                                         self.models.reason(spec.name) if spec.kind == "rerank" else None))
        return self.runs

    def _dense(self, spec: RowSpec) -> tuple[Any, str | None]:
        identity = self.models.dense[spec.name]
        # With an engine, the workers encode the corpus on `device`; this process only plans their
        # batches and encodes the queries, on its CPU.
        outcome = dense_rankings(self.dataset.documents, self.queries, identity, self.options.depth,
                                 EmbeddingCache(self.cache_dir), progress=self.options.progress, log=self.log,
                                 device="cpu" if self.engine else self.device,
                                 batch_size=self.options.encode_batch_size,
                                 **({"encode_corpus": self.engine.corpus_encoder(identity, self.device)}
                                    if self.engine else {}))
        self.runs.dense_outcomes[spec.name] = outcome
        return outcome.rankings, identity.name

    def _sparse(self, spec: RowSpec) -> tuple[Any, str | None]:
        return sparse_rankings(self.dataset.documents, self.queries, self.options.depth, k1=spec.k1, b=spec.b,
                               cache_dir=self.cache_dir, log=self.log, row=spec.name), None

    def _fusion(self, spec: RowSpec) -> tuple[Any, str | None]:
        return fused_rankings([self.runs.rankings[name] for name in spec.of], spec.method, self.options.depth,
                              k=spec.k, alpha=spec.alpha), None

    def _rerank(self, spec: RowSpec) -> tuple[Any, str | None]:
        identity = self.models.rerank_identities.get(spec.name)
        if identity is None:
            return None, None
        if spec.over not in self.runs.rankings:
            self.models.rerank_reasons[spec.name] = f"the row it reorders ({spec.over}) was not measured"
            return None, None
        outcome = rerank_rankings(self.runs.rankings[spec.over], self.queries, _texts(self.dataset), identity,
                                  spec.max_length, RerankCache(self.cache_dir, identity.cache_key),
                                  progress=self.options.progress, log=self.log, load_model=self.load_cross_encoder,
                                  device=self.device, batch_size=_batch_size(spec, self.options), depth=spec.depth,
                                  precision=spec.precision or DEFAULT_PRECISION, engine=self.engine)
        self.runs.reranks[spec.name] = outcome
        return outcome.rankings, trained_label(identity, _corpus_sha256(self.dataset)) or identity.name

    def _run(self, spec: RowSpec) -> tuple[Any, str | None]:
        shown = display_path(spec.file)
        field = f"evaluate.rows.{spec.name}.file"
        if problem := regular_file_problem(spec.file):
            raise InputError(f"run file {problem}", path=shown, field=field)
        project = self.options.outputs_dir.resolve().parent
        if not spec.outside_project and not spec.file.resolve().is_relative_to(project):
            # The configuration kept the path inside; a link on the way can still lead out.
            raise InputError(f"run file leads outside the project (to {display_path(spec.file.resolve())}): keep "
                             f"run files inside it, or add `outside_project: true` to the row", path=shown,
                             field=field)
        documents = {document.doc_id for document in self.dataset.documents}
        rankings = read_supplied_run(spec.file, shown, queries=self.dataset.queries, documents=documents,
                                     depth=self.options.depth, query_ids=self.query_ids)
        self.runs.supplied[spec.name] = {
            "path": os.path.relpath(spec.file.resolve(), self.options.outputs_dir.resolve().parent),
            "sha256": sha256_file(spec.file)}
        return rankings, None


def _texts(dataset: Dataset) -> dict[str, str]:
    return {document.doc_id: document.retrieval_text for document in dataset.documents}


def _batch_size(spec: RowSpec, options: EvaluationOptions) -> int:
    return spec.batch_size or options.rerank_batch_size
