"""Benchmark of the evaluation stage's two retrieval paths on synthetic corpora of growing size
(not a test): time and peak memory per size, and how they grow.

For each size (default 10k, 100k and 1M documents) it builds, once, a BEIR-layout corpus of
synthetic documents: words drawn from SciFact's own word frequencies, MS MARCO passage lengths
(uniform in [0.5, 1.5] x --words, default 60 words: MS MARCO passages average about 56). Then,
each in its own child process (so peak memory is that stage's own):

- load:   `load_dataset` of the corpus (streamed, one record at a time);
- sparse: load, then BM25 over --queries SciFact queries at --depth (`sparse_rankings`: bm25s
          index built, saved and searched memory-mapped; a second run re-uses the saved index);
- dense:  load, then `dense_rankings` with MiniLM over the same queries, the corpus embeddings
          generated directly into the cache beforehand (random unit vectors under the key the
          tool computes), so this measures the key, the verification and the search, not encoding.

Peak memory is reported twice: peak RSS (VmHWM: everything the process touched, including
memory-mapped cache files, which the kernel can drop at any time) and peak anonymous memory
(RssAnon, sampled every 20 ms: what the process itself allocated and cannot give back). Growth
exponent: the slope of log(value) against log(documents) between the smallest and the largest size.

Usage: python bench/bench_scale.py [--sizes 10000,100000,1000000] [--queries 50] [--depth 100]
                                   [--words 60] [--work DIR] [--stages load,sparse,dense]
The corpora and embeddings are kept in --work (default ~/.cache/readout/bench-scale: 1.5 GB of
embeddings and 0.5 GB of text at a million documents) so that a second run only measures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
SCIFACT = REPOSITORY / ".." / "shared" / "data" / "scifact"
sys.path.insert(0, str(REPOSITORY))


def _memory_fields() -> dict[str, int]:
    fields = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmHWM", "RssAnon", "VmRSS"):
                fields[name] = int(value.split()[0]) * 1024
    return fields


class PeakAnonymous:
    """Samples RssAnon every 20 ms in a thread; the kernel keeps no high-water mark of it."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _memory_fields().get("RssAnon", 0))
            self._stop.wait(0.02)

    def __enter__(self) -> "PeakAnonymous":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _memory_fields().get("RssAnon", 0))


# ---------------------------------------------------------------------------------------------
# The corpora


def _scifact_words() -> tuple[list[str], "object"]:
    import numpy as np

    counts: dict[str, int] = {}
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as corpus:
        for line in corpus:
            record = json.loads(line)
            for word in (record["title"] + " " + record["text"]).lower().split():
                word = word.strip(".,;:()[]\"'")
                if word.isalpha():
                    counts[word] = counts.get(word, 0) + 1
    words = sorted(counts)
    frequencies = np.array([counts[word] for word in words], dtype=np.float64)
    return words, frequencies / frequencies.sum()


def build_corpus(root: Path, documents: int, words_per_document: int, queries: int, seed: int = 13) -> Path:
    """A BEIR-layout dataset of `documents` synthetic documents and SciFact's first test queries."""
    import numpy as np

    done = root / ".complete"
    if done.is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    words, probabilities = _scifact_words()
    vocabulary = np.array(words, dtype=object)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for start in range(0, documents, 10_000):
            count = min(10_000, documents - start)
            lengths = rng.integers(words_per_document // 2, words_per_document * 3 // 2 + 1, size=count)
            drawn = rng.choice(len(words), size=int(lengths.sum()), p=probabilities)
            offset = 0
            lines = []
            for index, length in enumerate(lengths):
                text = " ".join(vocabulary[drawn[offset:offset + length]])
                offset += length
                lines.append(json.dumps({"_id": f"d{start + index}", "title": "", "text": text}) + "\n")
            corpus.write("".join(lines))
    (root / "qrels").mkdir(exist_ok=True)
    test_ids = []
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as qrels:
        next(qrels)
        for line in qrels:
            query_id = line.split("\t")[0]
            if query_id not in test_ids:
                test_ids.append(query_id)
    chosen = test_ids[:queries]
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as source, \
            open(root / "queries.jsonl", "w", encoding="utf-8") as target:
        for line in source:
            if json.loads(line)["_id"] in chosen:
                target.write(line)
    with open(root / "qrels" / "test.tsv", "w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        qrels.writelines(f"{query_id}\td0\t1\n" for query_id in chosen)
    done.write_text("")
    print(f"  built {documents:,} documents in {time.perf_counter() - started:.0f} s at {root}", flush=True)
    return root


def prepare_embeddings(data: Path, cache: Path) -> None:
    """Random unit vectors under the very key `dense_rankings` computes for this corpus."""
    import numpy as np

    from generator.evaluate.cache import EmbeddingCache, content_key
    from generator.evaluate.data import load_dataset
    from generator.evaluate.models import load_bi_encoder, resolve_model
    from generator.evaluate.retrieval import corpus_fingerprint

    documents = load_dataset(data).documents
    identity = resolve_model("minilm-offline")
    model = load_bi_encoder(identity, "cpu")
    # dense_rankings's key, spelled out so that this bench also runs on versions before this one.
    key = content_key("dense-corpus-v2", identity.name, identity.weights_sha256, corpus_fingerprint(documents),
                      int(model.max_seq_length), "normalized")
    embeddings = EmbeddingCache(cache)
    if (embeddings.root / f"{key}.npy").is_file():
        return
    rng = np.random.default_rng(5)
    dimension = 384
    matrix = np.empty((len(documents), dimension), dtype=np.float32)
    for start in range(0, len(documents), 100_000):
        block = rng.standard_normal((min(100_000, len(documents) - start), dimension)).astype(np.float32)
        matrix[start:start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    embeddings.store(key, matrix, {"documents": len(documents), "normalized": True,
                                   "synthetic": "bench_scale random unit vectors"})


# ---------------------------------------------------------------------------------------------
# One stage, in a child process


def run_stage(stage: str, data: Path, cache: Path, depth: int) -> dict:
    from generator.evaluate.data import load_dataset

    seconds: dict[str, float] = {}
    with PeakAnonymous() as anonymous:
        started = time.perf_counter()
        dataset = load_dataset(data)
        seconds["load"] = time.perf_counter() - started
        queries = dict(dataset.queries)
        if stage == "sparse":
            from generator.evaluate.retrieval import sparse_rankings

            import inspect

            # Versions before the saved index take no cache: their second run builds it again.
            saved = "cache_dir" in inspect.signature(sparse_rankings).parameters
            for attempt in ("sparse", "sparse (index re-used)" if saved else "sparse (again)"):
                started = time.perf_counter()
                rankings = sparse_rankings(dataset.documents, queries, depth, **({"cache_dir": cache} if saved else {}))
                seconds[attempt] = time.perf_counter() - started
        elif stage == "dense":
            from generator.evaluate.cache import EmbeddingCache
            from generator.evaluate.models import resolve_model
            from generator.evaluate.retrieval import dense_rankings

            started = time.perf_counter()
            outcome = dense_rankings(dataset.documents, queries, resolve_model("minilm-offline"), depth,
                                     EmbeddingCache(cache), progress=False, log=lambda _: None, device="cpu")
            seconds["dense"] = time.perf_counter() - started
            assert outcome.embeddings_cached, "the bench measures search: embeddings must come from the cache"
            rankings = outcome.rankings
        else:
            rankings = {}
    return {"seconds": seconds, "peak_rss": _memory_fields()["VmHWM"], "peak_anonymous": anonymous.peak,
            "documents": len(dataset.documents), "ranked_queries": len(rankings)}


# ---------------------------------------------------------------------------------------------


def _gib(value: float) -> str:
    return f"{value / 2 ** 30:.2f} GiB"


def _exponent(sizes: list[int], values: list[float]) -> str:
    pairs = [(size, value) for size, value in zip(sizes, values) if value > 0]
    if len(pairs) < 2:
        return "n/a"
    (first_size, first), (last_size, last) = pairs[0], pairs[-1]
    return f"{math.log(last / first) / math.log(last_size / first_size):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--words", type=int, default=60, help="mean words per document (default 60)")
    parser.add_argument("--stages", default="load,sparse,dense")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "readout" / "bench-scale")
    parser.add_argument("--child", nargs=3, metavar=("STAGE", "DATA", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        stage, data, cache = args.child
        print(json.dumps(run_stage(stage, Path(data), Path(cache), args.depth)))
        return

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sizes = [int(size) for size in args.sizes.split(",")]
    stages = args.stages.split(",")
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"corpora: {args.words} words per document on average, {args.queries} queries, depth {args.depth}; "
          f"work directory {args.work}")
    table: dict[str, dict[int, dict]] = {stage: {} for stage in stages}
    for size in sizes:
        data = build_corpus(args.work / f"corpus-{size}-{args.words}w-{args.queries}q", size, args.words, args.queries)
        cache = args.work / "cache"
        if "dense" in stages:
            prepare_embeddings(data, cache)
        for stage in stages:
            if stage == "sparse":
                # The bench's own cache: its first sparse run must build the index, not re-use the last run's.
                shutil.rmtree(cache / "sparse", ignore_errors=True)
            child = subprocess.run([sys.executable, __file__, "--depth", str(args.depth), "--child", stage,
                                    str(data), str(cache)], capture_output=True, text=True, check=False)
            if child.returncode != 0:
                print(child.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{stage} at {size:,} documents failed (exit {child.returncode})")
            figures = json.loads(child.stdout.strip().splitlines()[-1])
            table[stage][size] = figures
            timings = ", ".join(f"{name} {value:.1f} s" for name, value in figures["seconds"].items())
            print(f"{size:>9,} documents  {stage:<6}  {timings};  peak RSS {_gib(figures['peak_rss'])}, "
                  f"peak anonymous {_gib(figures['peak_anonymous'])}", flush=True)
    print()
    print("growth exponent (log value / log documents, smallest to largest size):")
    for stage in stages:
        measured = [size for size in sizes if size in table[stage]]
        names = list(table[stage][measured[0]]["seconds"]) if measured else []
        parts = [f"{name} time {_exponent(measured, [table[stage][s]['seconds'][name] for s in measured])}"
                 for name in names]
        parts.append(f"peak anonymous {_exponent(measured, [table[stage][s]['peak_anonymous'] for s in measured])}")
        print(f"  {stage:<6}  " + ", ".join(parts))
    largest = max(sizes)
    for stage in stages:
        if largest in table[stage]:
            per_million = table[stage][largest]["peak_anonymous"] * 1_000_000 / largest
            print(f"  {stage:<6}  peak anonymous memory per million documents: {_gib(per_million)}")
    if largest >= 1_000_000 and largest in table.get("sparse", {}):
        # Issue 39's bound: a million short documents on the sparse path within 3 GB (decimal) here.
        peak = max(table["sparse"][largest]["peak_rss"], table["sparse"][largest]["peak_anonymous"])
        print(f"  sparse  {largest:,} documents within 3 GB: {'yes' if peak <= 3e9 else 'NO'} "
              f"(peak {peak / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
