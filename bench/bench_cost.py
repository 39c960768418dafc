"""Benchmark pricing a reranker by its shape: extrapolation, int8, and the scoring path (not a test).

Run: `.venv/bin/python bench/bench_cost.py [--queries 10] [--runs 1] [--batch-size 16]`

Pairs: the release sample's hybrid candidates (SciFact, from outputs/results.json's hybrid run) when
../shared/data/scifact and outputs/runs/hybrid.trec are present, else synthetic text pairs; max_length
512, fp32 unless said, cpu, the machine's threads. In one process it prints:
(a) extrapolation against the full model: cross-encoder/ms-marco-MiniLM-L-12-v2 and BAAI/bge-reranker-base
    priced both ways (`open_pricing`, method "full" and "extrapolated", fresh caches) on the same pairs,
    query by query, which method goes first flipping each query (pricing one method after the other put
    the machine's drift between the two blocks into the ratio: 0.87 on 2026-12-02); both keep each
    batch's fastest of FULL_REFERENCE_REPEATS = 2 repeats, the tool's default for the extrapolated method,
    so the reference is the same statistic of the whole model; the p50 and p95 ratios extrapolated/full
    over the queries (goal: within 5%) and the spread of the per-query ratios;
(b) int8/fp32: the MiniLM-L-12 shape's extrapolated p50 at int8 against fp32 (below 1 is faster);
(c) the tool's timed scoring path against a plain `CrossEncoder(dir).predict` of the same pairs with the
    MiniLM-L-6 shape saved to disk and loaded the ordinary way, alternating query by query (which goes
    first flips each time, so a busy spell slows both alike); pairs/s and the ratio (target at least 1.0);
(d) the wall time of each pricing in (a), and for BAAI/bge-reranker-v2-m3 the extrapolated pricing's wall
    time against its full time ESTIMATED from the fitted per-query times (the full 24 layers are not run:
    that is the half hour this avoids), to judge "at most a fifth of a full run".
Timing noise: the figures are as good as the machine is quiet; the load average is printed.
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
PLAIN_MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"
EXTRAPOLATED_MODELS = ("cross-encoder/ms-marco-MiniLM-L-12-v2", "BAAI/bge-reranker-base")
LARGE_MODEL = "BAAI/bge-reranker-v2-m3"
MAX_LENGTH = 512
FULL_REFERENCE_REPEATS = 2


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


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def price(pairs_by_query, model, cache: Path, batch_size: int, **settings) -> tuple[dict, float]:
    """One measure_rerank_cost and its wall time (shape builds, warm-up, tokens, timing, cache)."""
    from generator.evaluate.cost import measure_rerank_cost

    started = time.perf_counter()
    figures = measure_rerank_cost(pairs_by_query, model, max_length=MAX_LENGTH, batch_size=batch_size,
                                  cache_dir=cache, device="cpu", progress=False, log=lambda _: None,
                                  **settings).as_dict()
    return figures, time.perf_counter() - started


def interleaved(pairs_by_query, pricings: dict) -> tuple[dict, dict]:
    """Every pricing of `pricings` (name -> generator.evaluate.cost.Pricing) query by query, which
    goes first flipping each query, so drift over the run (another process, the host) reaches every
    method alike; pricing the methods one after the other put whatever changed between the blocks
    into the ratio. Returns (name -> the query costs, name -> wall seconds of its own calls,
    including its shape builds and warm-up)."""
    costs = {name: {} for name in pricings}
    walls = dict.fromkeys(pricings, 0.0)
    names = list(pricings)
    for index, (query_id, pairs) in enumerate(pairs_by_query.items()):
        for name in (names if index % 2 == 0 else names[::-1]):
            started = time.perf_counter()
            found, _, _ = pricings[name].costs({query_id: pairs}, progress=False,
                                               warm_pairs=next(iter(pairs_by_query.values())))
            walls[name] += time.perf_counter() - started
            costs[name].update(found)
    return costs, walls


def _percentiles(costs: dict) -> tuple[float, float]:
    from generator.core.results.builders import timing_summary

    summary = timing_summary({q: cost.milliseconds for q, cost in costs.items()},
                             {q: cost.pairs for q, cost in costs.items()})
    return summary["p50_milliseconds"], summary["p95_milliseconds"]


def bench_extrapolation(pairs_by_query, temporary: Path, batch_size: int) -> dict:
    from generator.evaluate.cost import open_pricing

    print("(a) extrapolated / full, same pairs, interleaved query by query (goal: within 5%)")
    kept = {}
    for index, model in enumerate(EXTRAPOLATED_MODELS):
        pricings = {method: open_pricing(model, method=method, max_length=MAX_LENGTH, batch_size=batch_size,
                                         cache_dir=temporary / f"a-{index}-{method}", device="cpu",
                                         repeats=FULL_REFERENCE_REPEATS if method == "full" else None,
                                         log=lambda _: None)
                    for method in ("full", "extrapolated")}
        costs, walls = interleaved(pairs_by_query, pricings)
        (full_p50, full_p95), (ex_p50, ex_p95) = _percentiles(costs["full"]), _percentiles(costs["extrapolated"])
        ratios = [costs["extrapolated"][q].milliseconds / costs["full"][q].milliseconds for q in pairs_by_query]
        print(f"  {model}: full p50 {full_p50:.0f} ms, p95 {full_p95:.0f} ms; extrapolated p50 {ex_p50:.0f} ms, "
              f"p95 {ex_p95:.0f} ms ({pricings['extrapolated'].label})")
        print(f"    ratio p50 {ex_p50 / full_p50:.3f}, p95 {ex_p95 / full_p95:.3f}; per query median "
              f"{statistics.median(ratios):.3f} (from {min(ratios):.3f} to {max(ratios):.3f}); {_load()}")
        kept[model] = ({"extrapolated": {"p50_milliseconds": ex_p50, "p95_milliseconds": ex_p95}}, walls)
    return kept


def bench_precision(pairs_by_query, temporary: Path, batch_size: int, fp32: dict) -> None:
    model = EXTRAPOLATED_MODELS[0]
    int8, _ = price(pairs_by_query, model, temporary / "b-int8", batch_size, method="extrapolated", precision="int8")
    print(f"(b) int8 / fp32, {model}, extrapolated: p50 {int8['p50_milliseconds']:.0f} / "
          f"{fp32['p50_milliseconds']:.0f} ms = {int8['p50_milliseconds'] / fp32['p50_milliseconds']:.3f}; "
          f"p95 {int8['p95_milliseconds'] / fp32['p95_milliseconds']:.3f} (below 1: int8 is faster); {_load()}")


def bench_plain(pairs_by_query, temporary: Path, batch_size: int, runs: int) -> None:
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from generator.evaluate.shapes import choose_tokenizer, resolve_shape

    shape = resolve_shape(PLAIN_MODEL)
    model_dir = temporary / "plain-model"
    torch.manual_seed(0)
    AutoModelForSequenceClassification.from_config(shape.config).save_pretrained(str(model_dir))
    AutoTokenizer.from_pretrained(str(choose_tokenizer(shape).directory)).save_pretrained(str(model_dir))
    plain = CrossEncoder(str(model_dir), max_length=MAX_LENGTH, device="cpu")
    plain.predict(next(iter(pairs_by_query.values())), batch_size=batch_size, show_progress_bar=False)  # warm-up
    tool_ms: list[float] = []
    plain_ms: list[float] = []
    sizes: list[int] = []
    for run in range(runs):
        for index, (query_id, pairs) in enumerate(pairs_by_query.items()):
            # Query by query, alternating which path goes first, so a busy spell hits both alike.
            for path in (("tool", "plain") if (run + index) % 2 == 0 else ("plain", "tool")):
                if path == "plain":
                    plain_ms.append(plain_milliseconds(plain, pairs, batch_size))
                    continue
                figures, _ = price({query_id: pairs}, shape, temporary / f"c-{run}", batch_size, method="full")
                tool_ms.append(figures["per_query_milliseconds"][query_id])
            sizes.append(len(pairs))
    tool = sum(sizes) / (sum(tool_ms) / 1000.0)
    plain_rate = sum(sizes) / (sum(plain_ms) / 1000.0)
    per_query = statistics.median(p / t for t, p in zip(tool_ms, plain_ms))
    print(f"(c) {PLAIN_MODEL}, full: tool (measure_rerank_cost, timed predict, per batch) {tool:.2f} pairs/s; "
          f"plain CrossEncoder(dir).predict {plain_rate:.2f} pairs/s")
    print(f"    ratio tool/plain {tool / plain_rate:.3f} over all pairs; median per-query ratio {per_query:.3f} "
          f"({len(tool_ms)} query pairs, {runs} runs; target at least 1.0); {_load()}")


def bench_walls(kept: dict, pairs_by_query, temporary: Path, batch_size: int) -> None:
    print("(d) wall time of pricing (shape builds, warm-up, tokens, timing, cache)")
    for model, (_, walls) in kept.items():
        # The reference timed the whole model FULL_REFERENCE_REPEATS times; the tool's full method, once.
        once = walls["full"] / FULL_REFERENCE_REPEATS
        print(f"  {model}: extrapolated {walls['extrapolated']:.1f} s, full {walls['full']:.1f} s for "
              f"{FULL_REFERENCE_REPEATS} repeats (about {once:.1f} s for the tool's one): "
              f"{walls['extrapolated'] / once:.3f} of one full run")
    figures, wall = price(pairs_by_query, LARGE_MODEL, temporary / "d-large", batch_size, method="extrapolated")
    estimated = sum(figures["per_query_milliseconds"].values()) / 1000.0
    fits = list(figures["per_query_fit"].values())
    print(f"  {LARGE_MODEL}: extrapolated {wall:.1f} s for {figures['queries']} queries ({figures['cost']}; per "
          f"query median {statistics.median(f['intercept_milliseconds'] for f in fits):.0f} ms + "
          f"{statistics.median(f['per_layer_milliseconds'] for f in fits):.0f} ms per layer); full NOT RUN, "
          f"ESTIMATED from the fit as the sum of its extrapolated per-query times (timing only, no build or "
          f"warm-up): {estimated:.1f} s, so extrapolated/full <= {wall / estimated:.3f}; {_load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10, help="release-sample queries to price (default 10)")
    parser.add_argument("--runs", type=int, default=1, help="passes over the queries in (c) (default 1)")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    import torch

    from generator.evaluate.cost import EXTRAPOLATION_LAYERS, EXTRAPOLATION_REPEATS

    started = time.perf_counter()
    pairs_by_query, source = release_pairs(args.queries)
    total_pairs = sum(len(pairs) for pairs in pairs_by_query.values())
    print(f"machine: {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"torch {torch.__version__}, threads {torch.get_num_threads()}; {_load()}")
    print(f"pairs: {source} ({total_pairs} pairs); max_length {MAX_LENGTH}, batch size {args.batch_size}, cpu, "
          f"random weights; extrapolation times layers {EXTRAPOLATION_LAYERS}, {EXTRAPOLATION_REPEATS} repeats")
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as temporary:
        directory = Path(temporary)
        kept = bench_extrapolation(pairs_by_query, directory, args.batch_size)
        bench_precision(pairs_by_query, directory, args.batch_size,
                        kept[EXTRAPOLATED_MODELS[0]][0]["extrapolated"])
        bench_plain(pairs_by_query, directory, args.batch_size, args.runs)
        bench_walls(kept, pairs_by_query, directory, args.batch_size)
    print(f"bench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
