"""What an evaluation run is asked to do, and the defaults (the one home of every such constant).

Options come from three layers: these defaults < the project's readout.yaml `evaluate:` block <
command-line options. This module imports nothing heavy, so a project can be loaded and its
`evaluate:` block validated without numpy or torch.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.storage.paths import default_cache_dir
from generator.core.text.wording import data_text_problem
from generator.core.frontier import FrontierSpec, parse_frontier
from generator.core.fusion import RRF_K
from generator.core.data_source import PREFIX as IRDS_PREFIX, export_dir, identifier_of
from generator.core.metrics import metrics_from_names
from generator.core.rows import (BM25_B, BM25_K1, PRECISIONS, RowSpec, default_rows, fill_defaults,  # noqa: F401
                                 parse_rows)

QUERY_SETS = ("sample", "all")
# The release sample's results file, and the default for every test query (`evaluate.all_results`
# renames it: the SciFact review keeps its published results-300.json).
# The release sample's results file; also the file a measured source cites when it names none.
RESULTS_NAME = "results.json"
RESULTS_FILE = {"sample": RESULTS_NAME, "all": "results-all.json"}
SAMPLE_ORDERS = ("qrels", "seeded")

# The release sample: the first 20 test queries in qrels-file order.
SAMPLE_QUERY_COUNT = 20
CANDIDATE_DEPTH = 50
DENSE_MODEL = "BAAI/bge-small-en-v1.5"
RERANK_MODEL = "BAAI/bge-reranker-v2-m3"
RERANK_MAX_LENGTH = 512
# Pairs per forward pass when `readout cost` measures a reranker's shape (SPEC section 8).
RERANK_BATCH_SIZE = 16
# How a reranker's weights compute (generator.core.rows.PRECISIONS): fp32 as loaded, or int8 by
# PyTorch dynamic quantization of its linear layers (generator.evaluate.models.apply_precision).
DEFAULT_PRECISION = "fp32"
ENCODE_BATCH_SIZE = 32
DEVICES = ("auto", "cpu", "cuda", "mps")
# "shape": time the shape cut to a few layers and extrapolate to all of them (minutes);
# "shape-full": time every layer (a large model takes minutes per query); "none": no cost.
RERANK_COST = ("shape", "shape-full", "none")
# What a cost block says it is when random weights of the model's shape were timed; a figure
# extrapolated from a few layers says so after it ("measured by shape, extrapolated from ...").
SHAPE_COST = "measured by shape"
# bm25s's own defaults, set explicitly so the manifest states what ran.
BM25_METHOD = "lucene"
BM25_STOPWORDS = "en"
# Paired uncertainty (generator.core.uncertainty).
DEFAULT_SEED = 20261130
DEFAULT_BOOTSTRAP_RESAMPLES = 10_000
DEFAULT_PERMUTATION_RESAMPLES = 100_000
SKIP_RERANK_REASON = "skipped on request (--skip-rerank)"

# Keys of the `evaluate:` block; paths come from the project, never from this block.
# Where the heavy stages run is the machine's business, not the project's: a command-line choice.
_NOT_CONFIGURABLE = ("data", "outputs_dir", "output", "data_source", "engine", "ray_address", "workers")


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
    device: str = "auto"
    encode_batch_size: int = ENCODE_BATCH_SIZE
    rerank_batch_size: int = RERANK_BATCH_SIZE
    # When the rerank row is not run, measure the reranker's cost from its shape ("shape": random
    # weights, the real pairs; minutes per query for a large model) or leave it unmeasured ("none").
    rerank_cost: str = "none"
    # (row, baseline) comparisons; None: every row against the baseline (the first row), and the
    # rerank row against the row whose candidates it reorders.
    comparisons: tuple[tuple[str, str], ...] | None = None
    # Metric names (generator.core.metrics.metric_from_name); None: Recall@5, Recall@50, nDCG@5.
    metrics: tuple[str, ...] | None = None
    # The release sample: its size, and the first test queries in qrels order or a seeded draw.
    sample_size: int = SAMPLE_QUERY_COUNT
    sample_order: str = "qrels"
    sample_seed: int = DEFAULT_SEED
    # Where `--queries all` writes (its run files go to runs-<suffix>/ beside it).
    all_results: str = RESULTS_FILE["all"]
    # The rows to evaluate, the baseline first (generator.core.rows); None: the SciFact four.
    rows: tuple[RowSpec, ...] | None = None
    # `irds:<identifier>` when the data is an ir_datasets dataset; `data` is then its BEIR export.
    data_source: str | None = None
    # The reranker configurations to price by shape beside the ceiling of their depth
    # (generator.core.frontier); None: no frontier.
    frontier: FrontierSpec | None = None
    # Where corpus encoding and reranking run: "local" (this process) or "ray" (Ray Data workers:
    # generator.evaluate.distributed) on the cluster at `ray_address`, or a local one of `workers`.
    # The figures are the same either way (tests/evaluate/test_distributed.py).
    engine: str = "local"
    ray_address: str | None = None
    workers: int | None = None

    @property
    def results_path(self) -> Path:
        name = RESULTS_NAME if self.query_set == "sample" else self.all_results
        return self.output or (self.outputs_dir / name)

    @property
    def runs_dir(self) -> Path:
        return self.results_path.parent / runs_dir_name(self.results_path.name)

    @property
    def sample_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"size": self.sample_size, "order": self.sample_order}
        if self.sample_order == "seeded":
            spec["seed"] = self.sample_seed
        return spec

    def row_specs(self) -> tuple[RowSpec, ...]:
        """The configured rows, every unset parameter taken from these options."""
        return fill_defaults(self.rows if self.rows is not None else default_rows(), dense_model=self.dense_model, rrf_k=self.rrf_k, rerank_model=self.rerank_model,
                             rerank_max_length=self.rerank_max_length)

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
            "rerank_batch_size": self.rerank_batch_size, "rerank_cost": self.rerank_cost,
            "comparisons": [list(pair) for pair in self.comparisons] if self.comparisons is not None else "default",
            # Only when chosen, so results made with the defaults stay current.
            **({"metrics": list(self.metrics)} if self.metrics is not None else {}),
            **({"sample": self.sample_spec}
               if (self.sample_size, self.sample_order) != (SAMPLE_QUERY_COUNT, "qrels") else {}),
            **({"rows": [row.parameters() for row in self.row_specs()]} if self.rows is not None else {}),
            **({"frontier": self.frontier.parameters()} if self.frontier is not None else {}),
            "bootstrap_resamples": self.bootstrap_resamples, "seed": self.seed,
        }

    def runtime(self, device: str) -> dict[str, Any]:
        """How it ran, which changes timings but not the figures: recorded, not compared by `build`."""
        return {"device_requested": self.device, "device": device, "encode_batch_size": self.encode_batch_size,
                "rerank_batch_size": self.rerank_batch_size,
                # Only when chosen, so a local run's manifest reads as it always has.
                **({"engine": self.engine} if self.engine != "local" else {})}


def runs_dir_name(results_name: str) -> str:
    """results.json -> runs, results-300.json -> runs-300, results-all.json -> runs-all."""
    stem = Path(results_name).stem
    if stem == Path(RESULTS_NAME).stem:
        return "runs"
    return "runs-" + (stem[len("results-"):] if stem.startswith("results-") else stem)


# `sample: {size, order, seed}` in readout.yaml sets these three.
_SAMPLE_FIELDS = ("sample_size", "sample_order", "sample_seed")
CONFIGURABLE = tuple(f.name for f in fields(EvaluationOptions)
                     if f.name not in _NOT_CONFIGURABLE and f.name not in _SAMPLE_FIELDS) + ("sample",)
_TYPES: dict[str, type] = {"query_set": str, "dense_model": str, "rerank_model": str, "skip_rerank": bool,
                           "skip_rerank_reason": str, "cache_dir": str, "depth": int, "rrf_k": int,
                           "rerank_max_length": int, "bootstrap_resamples": int, "seed": int, "progress": bool,
                           "device": str, "encode_batch_size": int, "rerank_batch_size": int, "rerank_cost": str,
                           "comparisons": list, "metrics": list, "sample": dict, "all_results": str,
                           "rows": list, "frontier": dict}
_CHOICES = {"query_set": QUERY_SETS, "device": DEVICES, "rerank_cost": RERANK_COST}
# Sane ranges: a typo such as 10**90 resamples is refused when readout.yaml is read, not hours later.
INTEGER_RANGES = {"depth": (1, 10_000), "rrf_k": (1, 1_000_000), "rerank_max_length": (1, 65_536),
                  "bootstrap_resamples": (1, 1_000_000), "encode_batch_size": (1, 65_536),
                  "rerank_batch_size": (1, 65_536), "seed": (0, 2 ** 32 - 1)}


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
    for key, choices in _CHOICES.items():
        if key in block and block[key] not in choices:
            raise InputError(f"choose one of {', '.join(choices)}", path=config_display, field=f"evaluate.{key}")
    for key, (low, high) in INTEGER_RANGES.items():
        if key in block and not low <= block[key] <= high:
            raise InputError(f"must be an integer from {low:,} to {high:,}", path=config_display,
                             field=f"evaluate.{key}")
    reason = block.get("skip_rerank_reason")
    if reason is not None and (problem := data_text_problem(reason)):
        raise InputError(f"the reason is shown in the readout's table: it {problem}", path=config_display,
                         field="evaluate.skip_rerank_reason")
    all_results = block.get("all_results")
    if all_results is not None and (not re.fullmatch(r"results-[A-Za-z0-9_-]{1,40}\.json", all_results)
                                    or all_results == RESULTS_NAME):
        raise InputError("a file name such as results-all.json (results-<name>.json, beside results.json)",
                         path=config_display, field="evaluate.all_results")
    validated = dict(block)
    if "sample" in block:
        validated.update(_sample(validated.pop("sample"), config_display))
    if "comparisons" in block:
        validated["comparisons"] = _comparisons(block["comparisons"], config_display)
    if "rows" in block:
        validated["rows"] = parse_rows(block["rows"], config_display)
    if "frontier" in block:
        validated["frontier"] = parse_frontier(block["frontier"], config_display)
    if "metrics" in block:
        try:
            chosen = metrics_from_names(block["metrics"])
        except ValueError as error:
            raise InputError(str(error), path=config_display, field="evaluate.metrics") from None
        validated["metrics"] = tuple(metric.name for metric in chosen)
    return validated


def _sample(raw: dict, config_display: str) -> dict[str, Any]:
    """`sample: {size: N, order: qrels|seeded, seed: S}` -> the three option fields."""
    unknown = sorted(set(map(str, raw)) - {"size", "order", "seed"})
    if unknown:
        raise InputError("a sample has size, order and seed", path=config_display, field=f"evaluate.sample.{unknown[0]}")
    size, order, seed = raw.get("size", SAMPLE_QUERY_COUNT), raw.get("order", "qrels"), raw.get("seed", DEFAULT_SEED)
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 1_000_000:
        raise InputError("a number of queries from 1 to 1,000,000", path=config_display, field="evaluate.sample.size")
    if order not in SAMPLE_ORDERS:
        raise InputError(f"choose one of {', '.join(SAMPLE_ORDERS)}", path=config_display, field="evaluate.sample.order")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 32:
        raise InputError("an integer from 0 to 2^32 - 1", path=config_display, field="evaluate.sample.seed")
    if "seed" in raw and order != "seeded":
        raise InputError("a seed only draws a seeded sample (order: seeded)", path=config_display,
                         field="evaluate.sample.seed")
    return {"sample_size": size, "sample_order": order, "sample_seed": seed}


def _comparisons(raw: list, config_display: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for index, item in enumerate(raw):
        if (not isinstance(item, dict) or set(item) != {"row", "baseline"}
                or not all(isinstance(item[key], str) and item[key] for key in ("row", "baseline"))):
            raise InputError("expected {row: NAME, baseline: NAME}", path=config_display,
                             field=f"evaluate.comparisons[{index}]")
        if item["row"] == item["baseline"] or (item["row"], item["baseline"]) in pairs:
            raise InputError("a row is compared with another row, once", path=config_display,
                             field=f"evaluate.comparisons[{index}]")
        pairs.append((item["row"], item["baseline"]))
    return tuple(pairs)


def build_options(project_data: Path, outputs_dir: Path, configured: dict[str, Any],
                  **overrides: Any) -> EvaluationOptions:
    """Defaults < the validated `evaluate:` block < overrides that are not None."""
    configured = dict(configured)
    if "cache_dir" in configured:
        configured["cache_dir"] = Path(configured["cache_dir"]).expanduser()
    if configured.get("rows"):
        # Run files are relative to the project (the directory holding outputs/), like `data`.
        configured["rows"] = tuple(replace(row, file=row.file if row.file is None or row.file.is_absolute()
                                           else outputs_dir.parent / row.file) for row in configured["rows"])
    options = replace(EvaluationOptions(data=project_data, outputs_dir=outputs_dir), **configured)
    options = replace(options, **{key: value for key, value in overrides.items() if value is not None})
    identifier = identifier_of(options.data)
    if identifier is not None:
        options = replace(options, data_source=f"{IRDS_PREFIX}{identifier}",
                          data=export_dir(identifier, options.cache_dir or default_cache_dir()))
    if options.query_set not in QUERY_SETS:
        raise InputError(f"unknown query set {options.query_set!r}; choose 'sample' or 'all'", field="--queries")
    return options
