"""The two heavy stages, corpus encoding and reranking, as Ray Data jobs: the same work the
single process does, spread over a Ray cluster's workers, written into the same cache entries.

What each worker gets is what the single process would have computed in one piece, so the two
give the same bits:
- encoding: whole encoder batches, exactly those `SentenceTransformer.encode` forms over the
  whole corpus (generator.evaluate.encoding; an embedding depends on its batch, not on which
  machine or thread computes it), written by the driver into the cache entry's rows;
- reranking: whole queries, each scored in one `predict` call over its candidate list, the cache
  entry (scores and the query's own milliseconds) stored by the driver under the key the single
  process uses. A query the cache already holds is not sent.
So a run on a cluster and a run on a laptop meet in one cache: whichever ran first, the other
re-uses its entries. Each worker (a Ray actor) loads its model once, on its own `--device`; the
driver shows the progress. Ray schedules; there is no scheduler here.

Ray is an optional extra (`pip install 'traced-readout[ray]'`) imported only when this engine runs.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from contextlib import contextmanager
from dataclasses import field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.evaluate.encoding import BATCHES_PER_SHARD, encode_shard, encoding_batches, shards
from generator.evaluate.models import apply_precision, load_bi_encoder, load_cross_encoder
from generator.evaluate.retrieval import candidate_pairs, score_query

ENGINES = ("local", "ray")
RAY_INSTALL_HINT = "pip install 'traced-readout[ray]'"
# Queries per Ray batch: small, so that work spreads evenly and progress moves.
QUERIES_PER_TASK = 4


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is the part this engine uses
    except ImportError:
        raise InputError(f"--engine ray needs Ray Data, which is not installed: {RAY_INSTALL_HINT}",
                         field="--engine") from None
    return ray


@contextmanager
def python_signal_handlers_kept() -> Iterator[None]:
    """Ray's core worker installs its failure-signal handler for SIGTERM in the driver, which
    prints a C++ stack dump where readout says "Terminated." (exit 143): the Python handler that
    was in place before (generator.commands.cli) is put back. Only the main thread can set one."""
    import signal
    import threading

    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)


# Ray Data's executor needs the driver to be a full Ray worker; through Ray Client (ray://) it
# fails inside Ray (Ray 2.60: "'Worker' object has no attribute 'core_worker'").
RAY_CLIENT_REFUSED = ("{address!r} is a Ray Client address, and Ray Data does not run through Ray Client: run "
                      "readout on a node of the cluster with --ray-address auto, or give the head's GCS address "
                      "(HOST:6379) from a machine every node can reach")

# How long a cluster address may take to accept a connection before it counts as not there:
# without this, ray.init waits for ever on an address where nothing listens.
CONNECT_SECONDS = 10.0
GCS_PORT = 6379


def cluster_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) a --ray-address names, or None for "auto" and "local" (Ray finds those itself)."""
    text = address.strip()
    if text.lower() in ("auto", "local"):
        return None
    scheme, _, rest = text.rpartition("://")
    if scheme.lower() == "ray":
        raise InputError(RAY_CLIENT_REFUSED.format(address=address), field="--ray-address")
    if scheme:
        raise InputError(f"--ray-address {address!r}: {scheme}:// is not an address Ray joins; use auto or "
                         "HOST:PORT (the head's GCS)", field="--ray-address")
    rest = rest.split("/", 1)[0]
    if rest.startswith("["):   # [IPv6]:port
        host, _, tail = rest[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else tail
    else:
        host, colon, port = rest.rpartition(":")
        if not colon:
            host, port = rest, ""
    if not host:
        raise InputError(f"--ray-address {address!r} names no host: use auto or HOST:PORT (the head's GCS)",
                         field="--ray-address")
    if port and not port.isdigit():
        raise InputError(f"--ray-address {address!r}: the port {port!r} is not a number", field="--ray-address")
    return host, int(port) if port else GCS_PORT


def require_listening(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """Refuse, in one line and within `seconds`, an address where nothing accepts a connection."""
    import socket

    endpoint = cluster_endpoint(address)
    if endpoint is None:
        return
    host, port = endpoint
    try:
        with socket.create_connection((host, port), timeout=seconds):
            return
    except OSError as error:
        reason = (f"no answer within {seconds:g} s" if isinstance(error, TimeoutError)
                  else (error.strerror or type(error).__name__).lower())
    raise InputError(f"no Ray cluster answers at {host}:{port} ({reason}): start one there "
                     "(`ray start --head`) or check the address", field="--ray-address")


@dataclass
class RayEngine:
    """A connection to a Ray cluster: `address` None starts a local one of `workers` CPUs here
    (and stops it at `close`); an address ("auto", "head:6379") joins an existing one."""

    address: str | None = None
    workers: int | None = None
    log: Callable[[str], None] = print
    _started_here: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        ray = _ray()
        # Ray's own INFO and WARNING lines (deprecations, token set-up, "execution finished") are
        # noise in a readout's log; its errors still show.
        for name in ("ray", "ray.data"):
            logging.getLogger(name).setLevel(logging.ERROR)
        # "won't fully utilize the available concurrency": a small job (fewer shards than workers)
        # is not a problem to report.
        warnings.filterwarnings("ignore", message=".*fully utilize the available concurrency.*")
        if not ray.is_initialized():
            settings: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                        "logging_level": logging.ERROR}
            if self.address:
                require_listening(self.address)
                settings["address"] = self.address
            else:
                settings["num_cpus"] = self.workers or os.cpu_count() or 1
            with python_signal_handlers_kept():
                ray.init(**settings)
            self._started_here = not self.address
        context = ray.data.DataContext.get_current()
        # Progress comes from the driver's own lines (generator.evaluate.progress), not Ray's bars.
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        if self.workers is None:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.log(f"ray: {self.workers} worker{'' if self.workers == 1 else 's'} on "
                 f"{'the cluster at ' + self.address if self.address else 'a local cluster'}")

    def resolve_device(self, requested: str) -> str:
        """The workers' device: cpu or cuda (the cluster must have GPUs); auto picks cuda when it has."""
        gpus = int(_ray().cluster_resources().get("GPU", 0))
        name = (requested or "auto").strip().lower()
        if name == "auto":
            return "cuda" if gpus else "cpu"
        if name == "cuda" and not gpus:
            raise InputError("the Ray cluster has no GPU; use --device cpu or auto", field="--device")
        if name not in ("cpu", "cuda"):
            raise InputError(f"--engine ray places workers on cpu or cuda, not {requested!r}", field="--device")
        return name

    def close(self) -> None:
        if self._started_here:
            _ray().shutdown()
            self._started_here = False

    def _resources(self, device: str) -> dict[str, Any]:
        # A fixed pool of actors, one model each; a GPU worker holds one GPU.
        ray = _ray()
        return {"compute": ray.data.ActorPoolStrategy(size=self.workers), "num_cpus": 1,
                "num_gpus": 1 if device == "cuda" else 0}

    # --- encoding ------------------------------------------------------------------------------

    def corpus_encoder(self, identity: Any, device: str) -> Callable[..., None]:
        """A generator.evaluate.retrieval.CorpusEncoder that encodes on the cluster."""
        def encode(model: Any, texts: Sequence[str], batch_size: int, rows: np.ndarray,
                   on_batch: Callable[[int], None]) -> None:
            self.encode_corpus(model, texts, batch_size, rows, on_batch, identity=identity, device=device)
        return encode

    def encode_corpus(self, model: Any, texts: Sequence[str], batch_size: int, rows: np.ndarray,
                      on_batch: Callable[[int], None], *, identity: Any, device: str) -> None:
        ray = _ray()
        batches = encoding_batches(model, texts, batch_size)
        # Shards small enough that every worker gets some (a few per worker), never above the cap.
        per_shard = max(1, min(BATCHES_PER_SHARD, -(-len(batches) // (4 * self.workers))))
        groups = list(shards(batches, per_shard))
        items = [{"shard": number, "texts": json.dumps([[texts[i] for i in batch] for batch in group])}
                 for number, group in enumerate(groups)]
        encoded = ray.data.from_items(items, override_num_blocks=max(1, min(len(items), self.workers * 4)))
        encoded = encoded.map_batches(_ShardEncoder, fn_constructor_kwargs={"identity": identity, "device": device},
                                      batch_size=1, batch_format="numpy", **self._resources(device))
        dimension = rows.shape[1]
        for result in encoded.iter_rows():
            number = int(result["shard"])
            positions = np.concatenate(groups[number])
            rows[positions] = np.frombuffer(result["embeddings"], dtype=np.float32).reshape(-1, dimension)
            on_batch(len(positions))

    # --- reranking -----------------------------------------------------------------------------

    def score_queries(self, jobs: Sequence[tuple[str, str, list[str], list[str]]], *, identity: Any,
                      max_length: int, batch_size: int, device: str, precision: str) -> Iterator[tuple[str, dict]]:
        """(query_id, cache entry) for each (query_id, query, candidates, candidate texts), as
        the workers finish them."""
        ray = _ray()
        items = [{"job": json.dumps(job)} for job in jobs]
        scored = ray.data.from_items(items, override_num_blocks=max(1, min(len(items), self.workers * 4)))
        scored = scored.map_batches(_QueryScorer, fn_constructor_kwargs={
            "identity": identity, "max_length": max_length, "batch_size": batch_size, "device": device,
            "precision": precision}, batch_size=QUERIES_PER_TASK, batch_format="numpy", **self._resources(device))
        for result in scored.iter_rows():
            entry = json.loads(result["entry"])
            yield entry["query_id"], entry


class _ShardEncoder:
    """A worker's bi-encoder, loaded once; each call encodes one shard, batch by batch."""

    def __init__(self, identity: Any, device: str) -> None:
        self.model = load_bi_encoder(identity, device)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list]:
        shard_numbers, embeddings = [], []
        for number, texts in zip(batch["shard"], batch["texts"]):
            encoded = encode_shard(self.model, json.loads(str(texts)))
            shard_numbers.append(int(number))
            embeddings.append(np.concatenate(encoded).astype(np.float32).tobytes())
        return {"shard": np.asarray(shard_numbers, dtype=np.int64), "embeddings": np.asarray(embeddings, dtype=object)}


class _QueryScorer:
    """A worker's cross-encoder, loaded and warmed up once; each query scored in one `predict`
    call and timed exactly as the single process times it."""

    def __init__(self, identity: Any, max_length: int, batch_size: int, device: str, precision: str) -> None:
        self.model = apply_precision(load_cross_encoder(identity, max_length, device), precision)
        self.batch_size = batch_size
        self.warm = False

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        entries = []
        for text in batch["job"]:
            query_id, query, candidates, candidate_texts = json.loads(str(text))
            texts = dict(zip(candidates, candidate_texts))
            if not self.warm:
                # As the single process does: the first timed query must not pay for the warm-up.
                self.model.predict(candidate_pairs(query, candidates, texts), batch_size=self.batch_size,
                                   show_progress_bar=False)
                self.warm = True
            entries.append(json.dumps(score_query(self.model, query_id, query, candidates, texts, self.batch_size)))
        return {"entry": np.asarray(entries, dtype=object)}
