"""Benchmark `readout cost`'s scoring path against a plain CrossEncoder.predict, side by side (not a test).

Run: `.venv/bin/python bench/bench_cost.py [--queries 4] [--runs 3] [--batch-size 16]`

Pairs: the release sample's hybrid candidates (SciFact, from outputs/results.json's hybrid run) when
../shared/data/scifact and outputs/runs/hybrid.trec are present, else synthetic text pairs. In one
process it measures pairs per second of:
(a) the tool's cost path for the cross-encoder/ms-marco-MiniLM-L-6-v2 shape
    (`measure_rerank_cost`, a fresh cache each run, so every query is timed), and
(b) a plain `sentence_transformers.CrossEncoder(dir, max_length=512).predict` of the same pairs with a
    randomly initialised model of the same config saved to disk and loaded the ordinary way,
both warmed up and timed per query (wall, perf_counter), with the same max_length, batch size and
threads. The two paths alternate query by query (which goes first flips each time), so a busy
spell on a shared machine slows both alike; each tool call is a whole `measure_rerank_cost` of one
query (its shape build and warm-up are not timed, as in the tool). Prints both pairs/s and the
ratio (a)/(b). The target is 0.9 to 1.1: the cost path adds nothing to the time it measures.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"
MAX_LENGTH = 512


def release_pairs(queries: int) -> tuple[dict[str, list[tuple[str, str]]], str]:
    from generator.evaluate.candidates import rerank_candidate_pairs

    data = REPOSITORY / ".." / "shared" / "data" / "scifact"
    results = REPOSITORY / "outputs" / "results.json"
    if data.is_dir() and (REPOSITORY / "outputs" / "runs" / "hybrid.trec").is_file():
        pairs = rerank_candidate_pairs(results, data).pairs_by_query
        chosen = dict(list(pairs.items())[:queries])
        return chosen, f"SciFact release sample, hybrid candidates of the first {len(chosen)} queries"
    rng = random.Random(7)
    words = ("protein cell gene tumor virus insulin receptor mutation therapy immune brain neuron blood vaccine "
             "enzyme kinase signal pathway mouse human trial dose risk cancer heart lung liver").split()
    synthetic = {f"q{i}": [(" ".join(rng.choices(words, k=8)), " ".join(rng.choices(words, k=rng.randint(80, 300))))
                           for _ in range(50)] for i in range(queries)}
    return synthetic, f"synthetic text pairs, {queries} queries of 50"


def plain_milliseconds(model, pairs: list[tuple[str, str]], batch_size: int) -> float:
    started = time.perf_counter()
    model.predict(pairs, batch_size=batch_size, show_progress_bar=False)
    return (time.perf_counter() - started) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=4, help="queries to score per run (default 4)")
    parser.add_argument("--runs", type=int, default=3, help="passes over the queries (default 3)")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    import torch
    from sentence_transformers import CrossEncoder
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from generator.evaluate.cost import measure_rerank_cost
    from generator.evaluate.shapes import choose_tokenizer, resolve_shape

    pairs_by_query, source = release_pairs(args.queries)
    total_pairs = sum(len(pairs) for pairs in pairs_by_query.values())
    shape = resolve_shape(MODEL)
    print(f"machine: {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"pairs: {source} ({total_pairs} pairs); shape {MODEL} ({shape.parameters:,} parameters, random "
          f"weights); max_length {MAX_LENGTH}, batch size {args.batch_size}, fp32, cpu; {args.runs} runs each")

    with tempfile.TemporaryDirectory(prefix="bench-cost-") as temporary:
        model_dir = Path(temporary) / "plain-model"
        torch.manual_seed(0)
        AutoModelForSequenceClassification.from_config(shape.config).save_pretrained(str(model_dir))
        AutoTokenizer.from_pretrained(str(choose_tokenizer(shape).directory)).save_pretrained(str(model_dir))
        plain = CrossEncoder(str(model_dir), max_length=MAX_LENGTH, device="cpu")

        plain.predict(next(iter(pairs_by_query.values())), batch_size=args.batch_size,
                      show_progress_bar=False)                                  # warm-up, not timed
        tool_ms: list[float] = []
        plain_ms: list[float] = []
        sizes: list[int] = []
        tool_wall = 0.0
        for run in range(args.runs):
            for index, (query_id, pairs) in enumerate(pairs_by_query.items()):
                # Query by query, alternating which path goes first, so a busy spell hits both alike.
                for path in (("tool", "plain") if (run + index) % 2 == 0 else ("plain", "tool")):
                    if path == "plain":
                        plain_ms.append(plain_milliseconds(plain, pairs, args.batch_size))
                        continue
                    started = time.perf_counter()
                    measurement = measure_rerank_cost(
                        {query_id: pairs}, shape, max_length=MAX_LENGTH, batch_size=args.batch_size,
                        cache_dir=Path(temporary) / f"cache-{run}", device="cpu", progress=False,
                        log=lambda _: None)
                    tool_wall += time.perf_counter() - started
                    tool_ms.append(measurement.as_dict()["per_query_milliseconds"][query_id])
                sizes.append(len(pairs))
            print(f"run {run + 1}: load average {os.getloadavg()[0]:.2f}")

    tool = sum(sizes) / (sum(tool_ms) / 1000.0)
    plain_rate = sum(sizes) / (sum(plain_ms) / 1000.0)
    per_query = statistics.median(p / t for t, p in zip(tool_ms, plain_ms))
    print(f"(a) tool cost path (measure_rerank_cost, timed predict): {tool:8.2f} pairs/s")
    print(f"(b) plain CrossEncoder(dir).predict of the same pairs:   {plain_rate:8.2f} pairs/s")
    print(f"ratio (a)/(b): {tool / plain_rate:.3f} over all pairs; median per-query ratio {per_query:.3f} "
          f"({len(tool_ms)} query pairs; target 0.9 to 1.1)")
    print(f"tool path end to end (build shape + warm-up + tokens + timing + cache): "
          f"{tool_wall / len(tool_ms):.1f} s per query call, {sum(tool_ms) / len(tool_ms) / 1000:.1f} s of it timed")


if __name__ == "__main__":
    main()
