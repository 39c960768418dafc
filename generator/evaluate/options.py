"""What an evaluation run is asked to do, and the defaults (the one home of every such constant).

Options come from three layers: these defaults < the project's readout.yaml `evaluate:` block <
command-line options. This module imports nothing heavy, so a project can be loaded and its
`evaluate:` block validated without numpy or torch.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from generator.errors import InputError
from generator.evaluate.fusion import RRF_K
from generator.results import RESULTS_NAME

ROWS = ("dense", "sparse", "hybrid", "hybrid+rerank")
RERANK_ROW = "hybrid+rerank"
QUERY_SETS = ("sample", "all")
RESULTS_FILE = {"sample": RESULTS_NAME, "all": "results-300.json"}
RUNS_DIR = {"sample": "runs", "all": "runs-300"}

# The release sample: the first 20 test queries in qrels-file order.
SAMPLE_QUERY_COUNT = 20
CANDIDATE_DEPTH = 50
DENSE_MODEL = "BAAI/bge-small-en-v1.5"
RERANK_MODEL = "BAAI/bge-reranker-v2-m3"
RERANK_MAX_LENGTH = 512
# Pairs per forward pass when `readout cost` measures a reranker's shape (SPEC section 8).
RERANK_BATCH_SIZE = 16
# bm25s's own defaults, set explicitly so the manifest states what ran.
BM25_METHOD = "lucene"
BM25_K1 = 1.5
BM25_B = 0.75
BM25_STOPWORDS = "en"
# Paired uncertainty (generator.evaluate.uncertainty).
DEFAULT_SEED = 20261130
DEFAULT_BOOTSTRAP_RESAMPLES = 10_000
DEFAULT_PERMUTATION_RESAMPLES = 100_000
SKIP_RERANK_REASON = "skipped on request (--skip-rerank)"

# Keys of the `evaluate:` block; paths come from the project, never from this block.
_NOT_CONFIGURABLE = ("data", "outputs_dir", "output")


@dataclass(frozen=True)
class EvaluationOptions:
    data: Path
    outputs_dir: Path
    query_set: str = "sample"
    dense_model: str = DENSE_MODEL
    rerank_model: str = RERANK_MODEL
    skip_rerank: bool = False
    skip_rerank_reason: str = SKIP_RERANK_REASON
    output: Path | None = None
    cache_dir: Path | None = None
    depth: int = CANDIDATE_DEPTH
    rrf_k: int = RRF_K
    rerank_max_length: int = RERANK_MAX_LENGTH
    bootstrap_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES
    seed: int = DEFAULT_SEED
    progress: bool = True

    @property
    def results_path(self) -> Path:
        return self.output or (self.outputs_dir / RESULTS_FILE[self.query_set])

    @property
    def runs_dir(self) -> Path:
        return self.results_path.parent / RUNS_DIR[self.query_set]

    def parameters(self) -> dict[str, Any]:
        """Everything that changes the numbers (and nothing that does not, like paths)."""
        return {
            "query_set": self.query_set, "candidate_depth": self.depth, "rrf_k": self.rrf_k,
            "dense_model": self.dense_model, "dense_similarity": "dot product of normalized embeddings",
            "sparse": {"library": "bm25s", "method": BM25_METHOD, "k1": BM25_K1, "b": BM25_B,
                       "stopwords": BM25_STOPWORDS, "stemmer": None},
            "rerank_model": self.rerank_model, "rerank_max_length": self.rerank_max_length,
            "rerank_skipped": self.skip_rerank,
            "document_text": "title + ' ' + text, stripped",
            "relevant": "qrels score > 0",
            "bootstrap_resamples": self.bootstrap_resamples, "seed": self.seed,
        }


CONFIGURABLE = tuple(f.name for f in fields(EvaluationOptions) if f.name not in _NOT_CONFIGURABLE)
_TYPES: dict[str, type] = {"query_set": str, "dense_model": str, "rerank_model": str, "skip_rerank": bool,
                           "skip_rerank_reason": str, "cache_dir": str, "depth": int, "rrf_k": int,
                           "rerank_max_length": int, "bootstrap_resamples": int, "seed": int, "progress": bool}


def validate_evaluate_block(block: Any, config_display: str) -> dict[str, Any]:
    """The readout.yaml `evaluate:` mapping, each key known and of the right type."""
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise InputError("expected a mapping of evaluation options", path=config_display, field="evaluate")
    for key, value in block.items():
        if key not in CONFIGURABLE:
            raise InputError(f"unknown option; choose from {', '.join(CONFIGURABLE)}", path=config_display,
                             field=f"evaluate.{key}")
        expected = _TYPES[key]
        if isinstance(value, bool) != (expected is bool) or not isinstance(value, expected):
            raise InputError(f"expected {expected.__name__}, got {value!r}", path=config_display,
                             field=f"evaluate.{key}")
    if block.get("query_set", "sample") not in QUERY_SETS:
        raise InputError(f"choose one of {', '.join(QUERY_SETS)}", path=config_display, field="evaluate.query_set")
    return dict(block)


def build_options(project_data: Path, outputs_dir: Path, configured: dict[str, Any],
                  **overrides: Any) -> EvaluationOptions:
    """Defaults < the validated `evaluate:` block < overrides that are not None."""
    configured = dict(configured)
    if "cache_dir" in configured:
        configured["cache_dir"] = Path(configured["cache_dir"]).expanduser()
    options = replace(EvaluationOptions(data=project_data, outputs_dir=outputs_dir), **configured)
    options = replace(options, **{key: value for key, value in overrides.items() if value is not None})
    if options.query_set not in QUERY_SETS:
        raise InputError(f"unknown query set {options.query_set!r}; choose 'sample' or 'all'", field="--queries")
    return options
