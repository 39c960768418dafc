"""Sealed results are re-derived, not believed: the checker recomputes every figure a results file
states from the run files and the judgements it names, and refuses the file at the first value
that differs.

What a sealed results file must hold (both `readout evaluate` and `readout sandbox` write it):
`manifest.query_ids`, `manifest.metrics` (each metric's definition, generator.core.metrics.Metric),
`manifest.run_files` (row -> path and sha256) and `manifest.qrels_copy` (the judgements of exactly
those queries, with sha256). From these the checker rebuilds each block with the builder that
wrote it (generator.results.builders) and compares: for every measured row, each query's value
of every metric, the table (each row's mean and its change over the baseline, the first of
`manifest.rows`, dense in the SciFact review), every paired comparison (`comparisons`: the
per-query differences' mean, wins, ties and losses, the exact sign-flip p-value, the interval
drawn again with the recorded seed, and whether it makes the change distinguishable); the
oracle ceiling of every row's candidates (`ceiling`); the p95 of the per-query rerank times;
each RRF fusion row from its inputs' runs; every reranker's cost (`rerank_costs`: its summary
figures from its per-query times, exactly the candidates of the row it reranks, and a cost by
shape never claiming quality); whether reranking
kept every candidate set; the candidate-miss diagnosis; and the sample-versus-full comparison,
which it rebuilds from the sealed sample file it was made against. Timings cannot be
recomputed; what follows from them is.

Side files a project cites (the sandbox's run_manifest.json, stage_boundary.json, ...) are
citable when a sealed results.json of the same outputs/ lists them with their sha256
(`manifest.files`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from generator.core.fusion import reciprocal_rank_fusion
from generator.core.metrics import Metric, metrics_from_names, percentile, same_candidate_sets
from generator.core.options import SHAPE_COST
from generator.core.rows import name_kind_problem
from generator.core.runfiles import positive_grades, read_qrels
from generator.core.signflip import SIGNIFICANCE, agreement, exact_p_value, wins_ties_losses
from generator.storage.bounded_reads import input_problem, read_input
from generator.storage.fileio import sha256_file
from generator.results import Results, seal_problem
from generator.results.builders import (RowRun, all_pairs_block, ceiling_block, diagnosis_block,
                                        diagnosis_summary_block, draw_comparison, frontier_block, per_query_block,
                                        queries_without_candidates_block, reranked_top_ids, run_manifest_view,
                                        power_block, sample_comparison_blocks, scores_of, table_block, timing_summary,
                                        topic_diagnosis_entry)
from generator.results.model import ResultsModel, comparison_name, sandbox_figures
from generator.results.schema import (ALL_PAIRS, BLOCK_NAMES, CEILING, POWER, COMPARISONS, DIAGNOSIS, DIAGNOSIS_SUMMARY, FRONTIER, MANIFEST,
                                      P95_RERANK, PARAMETERS, PER_QUERY, QUERIES, QUERIES_WITHOUT_CANDIDATES,
                                      RERANK_COSTS, SAME_CANDIDATES, TABLE)
from generator.sandbox.pipeline import stage_boundary

_CHANGE_FIELD = re.compile(r"^delta_(?P<metric>.+)_vs_(?P<baseline>.+)$")


class Mismatch(Exception):
    """The first figure of a results file that its evidence does not give."""


def _same(recorded: Any, derived: Any) -> bool:
    if isinstance(recorded, bool) or isinstance(derived, bool):
        return recorded is derived
    if isinstance(recorded, (int, float)) and isinstance(derived, (int, float)):
        if isinstance(recorded, float) and not math.isfinite(recorded):
            return False
        return math.isclose(recorded, derived, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(recorded, dict) and isinstance(derived, dict):
        return recorded.keys() == derived.keys() and all(_same(recorded[k], derived[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(derived, list):
        return len(recorded) == len(derived) and all(_same(a, b) for a, b in zip(recorded, derived))
    return recorded == derived


def _expect(where: str, recorded: Any, derived: Any) -> None:
    """Refuse at the first value of `recorded` that is not `derived`, naming it by its path."""
    if _same(recorded, derived):
        return
    if isinstance(recorded, dict) and isinstance(derived, dict) and recorded.keys() == derived.keys():
        for key in sorted(derived, key=str):
            _expect(f"{where}.{key}" if where else str(key), recorded[key], derived[key])
    if isinstance(recorded, list) and isinstance(derived, list) and len(recorded) == len(derived):
        for index, (written, made) in enumerate(zip(recorded, derived)):
            label = made.get("search") if isinstance(made, dict) and "search" in made else None
            _expect(f"{where}[search={label}]" if label is not None else f"{where}[{index}]", written, made)
    if isinstance(recorded, dict) and isinstance(derived, dict) and recorded.keys() != derived.keys():
        extra, missing = sorted(set(recorded) - set(derived), key=str), sorted(set(derived) - set(recorded), key=str)
        if missing:
            raise Mismatch(f"{where}.{missing[0]} is missing, but its run files and judgements give "
                           f"{_show(derived[missing[0]])}")
        raise Mismatch(f"{where}.{extra[0]} is {_show(recorded[extra[0]])}, but its run files and judgements give "
                       "no such value")
    raise Mismatch(f"{where} is {_show(recorded)}, but its run files and judgements give {_show(derived)}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _field(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise Mismatch(f"{where}.{key} is missing")
    return mapping[key]


def _read_hashed(outputs_dir: Path, entry: Any, where: str, read: dict[str, str | None]) -> Path:
    """The file a manifest entry names, when its bytes still have the recorded sha256; `read`
    collects every file looked at, with its sha256 (None when it is not a file)."""
    path_text = _field(entry, "path", where)
    recorded = _field(entry, "sha256", where)
    path = outputs_dir / str(path_text)
    if problem := input_problem(path):
        read[str(path_text)] = None
        raise Mismatch(f"{where}: {path_text} {problem}")
    if not path.is_file():
        read[str(path_text)] = None
        raise Mismatch(f"{where}: {path_text} is missing")
    read[str(path_text)] = digest = sha256_file(path)
    if digest != recorded:
        raise Mismatch(f"{where}: {path_text} changed after the results were sealed (sha256 differs)")
    return path


_BLANK_LINE = re.compile(r"^[ \t\r]*$\n", re.M)
_RUN_LINE = re.compile(r"^(\S+)[ \t]+\S+[ \t]+(\S+)[ \t]+(\d+)[ \t]+\S+[ \t]+\S+[ \t]*$", re.M)


def read_ranked_run(path: Path) -> dict[str, list[str]]:
    """A TREC run as query -> documents in rank order (the rank column, as written)."""
    text = read_input(path, "run file").decode("utf-8")
    lines = _RUN_LINE.findall(text)
    if len(lines) != text.count("\n") + (not text.endswith("\n") and bool(text)) - len(_BLANK_LINE.findall(text)):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip() and not _RUN_LINE.match(line):
                raise Mismatch(f"{path.name}:{number}: not a TREC run line (query Q0 document rank score tag)")
    ranked: dict[str, list[tuple[int, str]]] = {}
    for query, document, rank in lines:
        ranked.setdefault(query, []).append((int(rank), document))
    return {query: [doc for _, doc in sorted(entries)] for query, entries in ranked.items()}


def verify_results(results: Results, outputs_dir: Path,
                   read_other: Callable[[str], Results] | None = None) -> str | None:
    """None when every figure re-derives; otherwise the first mismatch, as a sentence."""
    return derive_results(results, outputs_dir, read_other)[0]


def derive_results(results: Results, outputs_dir: Path, read_other: Callable[[str], Results] | None = None
                   ) -> tuple[str | None, dict[str, str | None]]:
    """What `verify_results` says, and every file of outputs/ the derivation read, by its path in
    the manifest, with its sha256 (None for a path that is not a file): what the outcome depends
    on besides the results file itself and the code (generator.storage.memo keeps it by both)."""
    read: dict[str, str | None] = {}
    problem = seal_problem(results.written)
    if problem:
        return problem, read
    try:
        _Derivation(results, outputs_dir, read_other, read).check()
    except Mismatch as mismatch:
        return str(mismatch), read
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as error:
        # A sealed file whose figures have the wrong shape was not written by the tool: the seal
        # proves only that nobody changed it since, so it cannot be re-derived and is not cited.
        detail = " ".join(str(error).split())[:100]
        return f"cannot be re-derived: a value has the wrong shape ({type(error).__name__}: {detail})", read
    return None, read


# The side files a sealed results.json vouches for, and how each is derived from it.
SIDE_FILES: dict[str, Callable[[ResultsModel], Any]] = {
    "acquisition_funnel.json": lambda primary: sandbox_figures(primary).funnel,
    "stage_boundary.json": lambda primary: stage_boundary(sandbox_figures(primary)),
    "run_manifest.json": lambda primary: run_manifest_view(primary.data),
}
# A side file holds more than a results file vouches for: these are compared.
_SIDE_KEYS = {"run_manifest.json": ("status", "inputs", "parameters")}


def side_file_problem(results: Results, primary: Results | None) -> str | None:
    """Whether a side file (not itself a results file) is exactly what the sealed results.json of
    the same outputs/ derives and lists."""
    if results.name not in SIDE_FILES:
        return ("not sealed: only files written by `readout evaluate` or `readout sandbox` can be cited "
                "(no manifest.seal)")
    if primary is None:
        return "not sealed, and no sealed, re-derivable results.json in outputs/ vouches for it"
    files = primary.model.manifest_block("files")
    if files.get(results.name) != results.sha256:
        return f"changed after {primary.name} was sealed (its sha256 is not the one {primary.name} records)"
    derived = SIDE_FILES[results.name](primary.model)
    keys = _SIDE_KEYS.get(results.name)
    recorded = {key: results.data.get(key) for key in keys} if keys else results.data
    if not _same(recorded, derived):
        return f"does not match what {primary.name} derives for it"
    return None


def _check_paired(where: str, stats: Mapping[str, Any], differences: list[float]) -> None:
    """The figures of one paired comparison that follow from its per-query differences, and the
    verdict that follows from its interval and p-value (the interval's endpoints are random draws)."""
    _expect(f"{where}.delta", stats.get("delta"), math.fsum(differences) / len(differences))
    wins, ties, losses = wins_ties_losses(differences)
    _expect(f"{where}.wins", stats.get("wins"), wins)
    _expect(f"{where}.ties", stats.get("ties"), ties)
    _expect(f"{where}.losses", stats.get("losses"), losses)
    _expect(f"{where}.queries", stats.get("queries", len(differences)), len(differences))
    if stats.get("p_value_method") == "exact":
        _expect(f"{where}.p_value", stats.get("p_value"), exact_p_value(differences))
    low, high, p_value = stats.get("ci95_low"), stats.get("ci95_high"), stats.get("p_value")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (low, high, p_value)) \
            or not low <= high or not 0.0 <= p_value <= 1.0:
        raise Mismatch(f"{where} has no interval with ci95_low <= ci95_high and a p-value in [0, 1]")
    if len(set(differences)) == 1:
        _expect(f"{where}.ci95_low", low, differences[0])
        _expect(f"{where}.ci95_high", high, differences[0])
    excludes_zero = low > 0.0 or high < 0.0
    for name, derived in (("excludes_zero", excludes_zero), ("p_below_0_05", p_value < SIGNIFICANCE),
                          ("distinguishable", excludes_zero and p_value < SIGNIFICANCE),
                          ("agreement", agreement(low, high, p_value))):
        if name in stats:
            _expect(f"{where}.{name}", stats[name], derived)


def _uncertainty_method(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """The recorded parameters every interval and p-value was drawn with, or None when the file
    records none (a sandbox run has no comparisons)."""
    method = manifest.get("uncertainty")
    if method is None:
        return None
    try:
        interval, p_value = method["interval"], method["p_value"]
        parameters = {"seed": interval["seed"], "resamples": interval["resamples"],
                      "confidence": interval["confidence"],
                      "exact_max_queries": p_value["exact_when_nonzero_differences_at_most"],
                      "permutation_resamples": p_value["monte_carlo_resamples"]}
    except (KeyError, TypeError):
        raise Mismatch("manifest.uncertainty does not record the seed, resamples, confidence and sign-flip "
                       "limits its intervals were drawn with") from None
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in parameters.values()):
        raise Mismatch("manifest.uncertainty records a parameter that is not a number")
    return parameters


def recompute_comparison(row_scores: list[float], base_scores: list[float], name: str, metric: str,
                         method: Mapping[str, Any]) -> dict[str, Any]:
    """One comparison drawn again, bit for bit, by the builder that drew it: the same per-query
    values, the same seed for this comparison and metric, the same resamples."""
    try:
        return draw_comparison(row_scores, base_scores, name=name, metric=metric, seed=int(method["seed"]),
                               resamples=int(method["resamples"]), confidence=float(method["confidence"]),
                               exact_max_queries=int(method["exact_max_queries"]),
                               permutation_resamples=int(method["permutation_resamples"]))
    except ValueError as error:
        raise Mismatch(f"comparisons.{name}.metrics.{metric} cannot be drawn again: {error}") from None


_EXTRAPOLATED = re.compile(re.escape(SHAPE_COST) + r", extrapolated from (\d+) of (\d+) layers")


def _per_evaluated_query(mapping: Any, query_ids: list[str]) -> bool:
    """A per-query mapping covers exactly the evaluated queries. Its key order carries nothing:
    results.json is written with sorted keys, while manifest.query_ids keeps the qrels order."""
    return isinstance(mapping, dict) and len(mapping) == len(query_ids) and set(mapping) == set(query_ids)


def _query_difference(mapping: Any, query_ids: list[str]) -> str:
    if not isinstance(mapping, dict):
        return " (it is not an object)"
    missing, extra = sorted(set(query_ids) - set(mapping)), sorted(set(mapping) - set(query_ids))
    parts = ([f"missing {', '.join(map(repr, missing[:3]))}{' ...' if len(missing) > 3 else ''}"] if missing else []) + \
        ([f"not evaluated {', '.join(map(repr, extra[:3]))}{' ...' if len(extra) > 3 else ''}"] if extra else [])
    return f" ({'; '.join(parts)}); re-run readout evaluate to rebuild it" if parts else ""


def _check_extrapolation(where: str, cost: dict, times: dict) -> None:
    """An extrapolated time is the straight line through its timed layer counts, read at the
    model's full depth: the label's "k of N", the least-squares fit of each query's timed layers
    and the time it gives all agree (the fit is linear in the times, so a query's summed batches
    fit exactly as the sum of its batches' fits)."""
    label = _EXTRAPOLATED.fullmatch(str(cost.get("cost")))
    if label is None:
        if "extrapolated" in str(cost.get("cost")):
            raise Mismatch(f"{where}.cost is {_show(cost.get('cost'))}: not a label the tool writes")
        return
    layers, full = cost.get("layers_timed"), cost.get("full_layers")
    fits = _field(cost, "per_query_fit", where)
    if not isinstance(layers, list) or len(layers) < 2 or full != int(label.group(2)) \
            or max(layers) != int(label.group(1)) or not isinstance(fits, dict) or set(fits) != set(times):
        raise Mismatch(f"{where}: its label, layers_timed, full_layers and per_query_fit do not describe one "
                       "extrapolation per query")
    for query, fit in fits.items():
        timed = fit.get("layer_milliseconds") if isinstance(fit, dict) else None
        if not isinstance(timed, dict) or sorted(timed) != sorted(str(count) for count in layers):
            raise Mismatch(f"{where}.per_query_fit.{query} does not hold a time for each layer count timed")
        points = [(float(count), float(timed[str(count)])) for count in layers]
        mean_x = math.fsum(x for x, _ in points) / len(points)
        mean_y = math.fsum(y for _, y in points) / len(points)
        slope = (math.fsum((x - mean_x) * (y - mean_y) for x, y in points)
                 / math.fsum((x - mean_x) ** 2 for x, _ in points))
        intercept = mean_y - slope * mean_x
        for key, derived in (("intercept_milliseconds", intercept), ("per_layer_milliseconds", slope),
                             ("extrapolated", intercept + slope * full)):
            recorded = times[query] if key == "extrapolated" else fit.get(key)
            if not isinstance(recorded, (int, float)) or not math.isclose(recorded, derived, rel_tol=1e-6,
                                                                           abs_tol=1e-6):
                shown = f"per_query_milliseconds.{query}" if key == "extrapolated" else f"per_query_fit.{query}.{key}"
                raise Mismatch(f"{where}.{shown} is {_show(recorded)}, but its timed layers give {derived:.6g}")


def _sealed_by(data: Mapping[str, Any]) -> str:
    """The command that wrote a results file, as its seal names it."""
    manifest = data.get(MANIFEST.name) if isinstance(data.get(MANIFEST.name), Mapping) else {}
    seal = manifest.get("seal") if isinstance(manifest.get("seal"), Mapping) else {}
    return str(seal.get("writer", ""))


class _Derivation:
    def __init__(self, results: Results, outputs_dir: Path, read_other: Callable[[str], Results] | None,
                 read: dict[str, str | None]):
        self.read = read
        self.name = results.name
        self.model = results.model
        self.data = results.data
        self.outputs_dir = outputs_dir
        self.read_other = read_other
        self.manifest = self.data[MANIFEST.name]
        # The sandbox writes its table with labels and no baseline, and its diagnosis topic by topic.
        self.sandbox = _sealed_by(results.written).startswith("readout sandbox")
        roles = self.model.roles
        self.baseline, self.rerank_row, self.rerank_over = roles.baseline, roles.rerank, roles.rerank_over
        recorded = self.manifest.get("rows") if isinstance(self.manifest.get("rows"), list) else []
        # Each rerank row's recorded entry (its over row and depth); the first is the one decided on.
        self.rerank_entries = {name: next((entry for entry in recorded if isinstance(entry, dict)
                                           and entry.get("name") == name), {"name": name, "over": over})
                               for name, over in roles.rerank_pairs}
        self.per_query: dict[str, Any] = {}

    def check(self) -> None:
        if "run_files" not in self.manifest:
            raise Mismatch("records no run files: not a results file `readout evaluate` or `readout sandbox` "
                           "writes, so none of its figures can be re-derived")
        undeclared = sorted(set(self.data) - BLOCK_NAMES)
        if undeclared:
            raise Mismatch(f"holds {undeclared[0][:60]!r}, which is not a block of the results format "
                           "(docs/results.md): a value no rule knows what it is cannot be cited")
        query_ids = [str(q) for q in _field(self.manifest, "query_ids", MANIFEST.name)]
        metrics = [Metric.from_manifest(name, entry) for name, entry in
                   sorted(_field(self.manifest, "metrics", MANIFEST.name).items())]
        qrels_path = _read_hashed(self.outputs_dir, _field(self.manifest, "qrels_copy", MANIFEST.name),
                                  "manifest.qrels_copy", self.read)
        try:
            judgements = read_qrels(qrels_path)
        except ValueError as error:
            raise Mismatch(f"manifest.qrels_copy: {qrels_path.name}: {error}") from None
        if set(judgements) - set(query_ids):
            raise Mismatch(f"manifest.qrels_copy judges queries that were not evaluated: "
                           f"{sorted(set(judgements) - set(query_ids))[:5]}")
        copy = self.manifest["qrels_copy"]
        grades = positive_grades(judgements)
        # The tables say which nDCG gain they show from this list; it is the judgements'. Results
        # written before it existed may leave it out only where it would say nothing (one grade).
        if isinstance(copy, dict) and ("positive_grades" in copy or len(grades) > 1):
            _expect("manifest.qrels_copy.positive_grades", copy.get("positive_grades"), grades)
        if self.model.queries is not None:
            _expect(QUERIES.name, self.model.queries, len(query_ids))
        rankings = self._check_rows(query_ids, metrics, judgements)
        self._check_row_kinds(rankings)
        self._check_rerank(query_ids, rankings)
        if QUERIES_WITHOUT_CANDIDATES.name in self.data:
            _expect(QUERIES_WITHOUT_CANDIDATES.name, self.data[QUERIES_WITHOUT_CANDIDATES.name],
                    queries_without_candidates_block(rankings, query_ids))
        self._check_rerank_cost(query_ids, rankings)
        self._check_comparisons(query_ids, set(rankings))
        self._check_all_pairs(query_ids, set(rankings))
        if POWER.name in self.data:
            method = _uncertainty_method(self.manifest)
            if method is None:
                raise Mismatch("power holds figures, but manifest.uncertainty records no seed to simulate them with")
            _expect(POWER.name, self.data[POWER.name],
                    power_block(self.per_query, query_ids, self.model.comparisons, seed=int(method["seed"])))
        self._check_ceiling(query_ids, metrics, rankings, judgements)
        self._check_frontier(query_ids, rankings, judgements)
        self._check_diagnosis(query_ids, rankings, judgements)
        self._check_sample_comparison()

    def _check_rows(self, query_ids: list[str], metrics: list[Metric],
                    judgements: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, list[str]]]:
        """Each measured row's run file read; `per_query` and `table` rebuilt from the runs and the
        judgements (generator.results.builders) and compared with what the file records."""
        if not self.model.has_table:
            raise Mismatch("table is not a list of rows")
        rows = _field(self.data, TABLE.name, "")
        run_files = self.manifest["run_files"]
        rankings: dict[str, dict[str, list[str]]] = {}
        for row in rows:
            name = str(_field(row, "search", "table[]"))
            where = f"table[search={name}]"
            if row.get("measured", True) is False:
                for metric in metrics:
                    if row.get(metric.name) is not None:
                        raise Mismatch(f"{where}.{metric.name} gives a number for a row that was not measured")
                continue
            if name not in run_files:
                raise Mismatch(f"{where} is marked measured but no run file is recorded for it")
            run = read_ranked_run(_read_hashed(self.outputs_dir, run_files[name], f"manifest.run_files.{name}",
                                               self.read))
            if set(run) - set(query_ids):
                raise Mismatch(f"manifest.run_files.{name} ranks queries that were not evaluated")
            rankings[name] = {q: run.get(q, []) for q in query_ids}
        self.per_query = per_query_block(rankings, judgements, query_ids, metrics)
        if not self.model.has_per_query:
            raise Mismatch("per_query is missing: every measured row's value of every metric on every query")
        _expect(PER_QUERY.name, self.data[PER_QUERY.name], self.per_query)
        baseline = None if self.sandbox else self.baseline
        self._check_change_fields(rows, baseline)
        if baseline is not None and baseline not in rankings and rankings:
            raise Mismatch(f"the baseline row {baseline} was not measured, so no change over it can be given")
        describe = "label" if self.sandbox else "model"
        derived = table_block([RowRun(str(row["search"]), row.get(describe), rankings.get(str(row["search"])),
                                      row.get("not_measured_reason")) for row in rows],
                              self.per_query, query_ids, metrics, baseline, describe=describe)
        _expect(TABLE.name, rows, derived)
        return rankings

    def _check_change_fields(self, rows: list[Any], baseline: str | None) -> None:
        """Every change a row states is over the recorded baseline (the first row): a change over
        any other row is not a field of the table."""
        for row in rows:
            for field_name in sorted(row):
                match = _CHANGE_FIELD.match(field_name)
                if match and match["baseline"] != baseline:
                    raise Mismatch(f"table[search={row['search']}].{field_name} is a change over "
                                   f"{match['baseline']}, but the baseline is {baseline}")

    def _check_row_kinds(self, rankings: dict[str, dict[str, list[str]]]) -> None:
        """`manifest.rows` names exactly the table's rows, in order, and each RRF fusion row is
        the fusion of its recorded inputs' runs (the rerank row is checked by `_check_rerank`)."""
        recorded = self.manifest.get("rows")
        if recorded is None:
            return
        names = self.model.row_names
        if not isinstance(recorded, list) or [entry.get("name") if isinstance(entry, dict) else None
                                              for entry in recorded] != names:
            raise Mismatch(f"manifest.rows does not name the table's rows {names} in order"[:200])
        for entry in recorded:
            if problem := name_kind_problem(str(entry.get("name")), str(entry.get("kind"))):
                raise Mismatch(f"manifest.rows: {problem}")
        depth = self.model.candidate_depth
        for entry in recorded:
            if entry.get("kind") != "fusion" or entry.get("method") != "rrf" or entry["name"] not in rankings:
                continue
            inputs = entry.get("of")
            if not isinstance(inputs, list) or not all(name in rankings for name in inputs):
                raise Mismatch(f"manifest.rows: fusion row {entry['name']} names inputs that have no run file")
            k = entry.get("k")
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                raise Mismatch(f"manifest.rows: fusion row {entry['name']} records no RRF constant k")
            for query, ranked in rankings[entry["name"]].items():
                fused = [doc for doc, _ in reciprocal_rank_fusion([rankings[name][query] for name in inputs], k=k,
                                                                  depth=depth)]
                if fused != ranked:
                    raise Mismatch(f"runs of {entry['name']}, query {query}: not the RRF (k={k}) of "
                                   f"{' and '.join(inputs)} its manifest records")

    def _check_comparisons(self, query_ids: list[str], measured: set[str]) -> None:
        """Every comparison of the block: a measured pair is drawn again by its builder from both
        rows' per-query values; a pair with an unmeasured side gives no figure."""
        if not self.model.has_comparisons:
            return
        block = self.data[COMPARISONS.name]
        if not isinstance(block, dict):
            raise Mismatch("comparisons is not an object")
        method = _uncertainty_method(self.manifest)
        for name, entry in sorted(block.items()):
            where = f"comparisons.{name}"
            row, baseline = _field(entry, "row", where), _field(entry, "baseline", where)
            if name != comparison_name(row, baseline):
                raise Mismatch(f"{where} compares {row} with {baseline}: its name says otherwise")
            sides_measured = row in measured and baseline in measured
            _expect(f"{where}.measured", entry.get("measured"), sides_measured)
            if not sides_measured:
                if "metrics" in entry:
                    raise Mismatch(f"{where} gives figures although {row} or {baseline} was not measured")
                continue
            for metric, stats in sorted(_field(entry, "metrics", where).items()):
                if not isinstance(stats, dict):
                    raise Mismatch(f"{where}.metrics.{metric} is not an object")
                try:
                    scores = (scores_of(self.per_query, row, query_ids, metric),
                              scores_of(self.per_query, baseline, query_ids, metric))
                except (KeyError, TypeError):
                    raise Mismatch(f"{where}.metrics.{metric} names a metric the rows were not scored on") from None
                _check_paired(f"{where}.metrics.{metric}", stats, [a - b for a, b in zip(*scores)])
                if method is not None:
                    drawn = recompute_comparison(*scores, name, metric, method)
                    for field in sorted(set(drawn) | set(stats)):
                        _expect(f"{where}.metrics.{metric}.{field}", stats.get(field), drawn.get(field))

    def _check_all_pairs(self, query_ids: list[str], measured: set[str]) -> None:
        """Every pair of measured rows and its Holm adjustment, rebuilt by the builder: a pair the
        comparisons block holds (already re-derived) is read from it, the others are drawn again."""
        block = self.model.all_pairs
        if ALL_PAIRS.name not in self.data:
            return
        method = _uncertainty_method(self.manifest)
        rows = self.model.row_names
        metrics = sorted(self.model.metric_names)

        def draw(row: str, baseline: str, name: str, metric: str) -> Mapping[str, Any]:
            if method is None:
                raise Mismatch("all_pairs holds figures, but manifest.uncertainty records no method to draw them")
            try:
                scores = (scores_of(self.per_query, row, query_ids, metric),
                          scores_of(self.per_query, baseline, query_ids, metric))
            except (KeyError, TypeError):
                raise Mismatch(f"all_pairs.metrics.{metric} names a metric the rows were not scored on") from None
            return recompute_comparison(*scores, name, metric, method)

        derived = all_pairs_block(rows, {row: row in measured for row in rows}, metrics, self.model.comparisons, draw)
        written = block.get("metrics") if block is not None and isinstance(block.get("metrics"), dict) else {}
        for metric, family in derived["metrics"].items():
            pairs = written.get(metric, {}).get("pairs") if isinstance(written.get(metric), dict) else None
            for name, entry in family["pairs"].items():
                recorded = pairs.get(name) if isinstance(pairs, dict) else None
                for field in ("delta", "ci95_low", "ci95_high", "p_value", "p_holm", "distinguishable_holm"):
                    _expect(f"all_pairs.metrics.{metric}.pairs.{name}.{field}",
                            recorded.get(field) if isinstance(recorded, dict) else None, entry[field])
        _expect(ALL_PAIRS.name, self.data[ALL_PAIRS.name], derived)

    def _check_ceiling(self, query_ids: list[str], metrics: list[Metric], rankings: dict[str, dict[str, list[str]]],
                       judgements: Mapping[str, Mapping[str, int]]) -> None:
        if CEILING.name not in self.data:
            return
        recorded = self.model.ceiling
        if recorded is None:
            raise Mismatch("ceiling is not an object")
        derived = ceiling_block(rankings, judgements, query_ids, metrics)
        for part in ("rows", "per_query"):
            written = _field(recorded, part, CEILING.name)
            if not isinstance(written, dict) or sorted(written) != sorted(derived[part]):
                raise Mismatch(f"ceiling.{part} covers rows {sorted(written) if isinstance(written, dict) else written!r}"[:200]
                               + f", but the measured rows are {sorted(derived[part])}")
        _expect(CEILING.name, recorded, derived)

    def _check_frontier(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]],
                        judgements: Mapping[str, Mapping[str, int]]) -> None:
        """The frontier's ceilings and headroom follow from its over row's run and the judgements,
        each configuration's timing summary from its per-query times, which cover exactly the
        pairs of its depth; every figure in it is a cost by shape, never a quality."""
        if not self.model.has_frontier:
            return
        block = self.data[FRONTIER.name]
        where = FRONTIER.name
        over = _field(block, "over", where)
        if over not in rankings:
            raise Mismatch(f"frontier.over names {str(over)[:40]!r}, which has no run file")
        try:
            metric = metrics_from_names([str(_field(block, "metric", where))])[0]
        except ValueError as error:
            raise Mismatch(f"frontier.metric: {error}") from None
        configurations = _field(block, "configurations", where)
        if not isinstance(configurations, list):
            raise Mismatch("frontier.configurations is not a list")
        for index, entry in enumerate(configurations):
            at = f"frontier.configurations[{index}]"
            depth = _field(entry, "depth", at)
            if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
                raise Mismatch(f"{at}.depth is {_show(depth)}, not a positive integer")
            cost = str(_field(entry, "cost", at))
            if not cost.startswith(SHAPE_COST) or entry.get("quality") != "not measured":
                raise Mismatch(f"{at} says cost {cost[:60]!r} with quality {_show(entry.get('quality'))}: the "
                               "frontier is priced by shape and measures no quality")
            times, pairs = _field(entry, "per_query_milliseconds", at), _field(entry, "per_query_pairs", at)
            if not _per_evaluated_query(times, query_ids) or any(
                    isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
                    for v in times.values()):
                raise Mismatch(f"{at}.per_query_milliseconds does not hold one positive time per query of "
                               f"manifest.query_ids{_query_difference(times, query_ids)}")
            _expect(f"{at}.per_query_pairs", pairs, {q: len(rankings[over][q][:depth]) for q in query_ids})
            _check_extrapolation(at, entry, times)
        derived = frontier_block(configurations, over, {q: rankings[over][q] for q in query_ids}, judgements,
                                 query_ids, metric)
        for key in ("over_mean", "queries", "note"):
            _expect(f"frontier.{key}", block.get(key), derived[key])
        for index, (written, made) in enumerate(zip(configurations, derived["configurations"])):
            for key in ("p50_milliseconds", "p95_milliseconds", "ceiling", "headroom", "model", "depth"):
                _expect(f"frontier.configurations[{index}].{key}", written.get(key), made.get(key))
        _expect(FRONTIER.name, block, derived)

    def _check_rerank_cost(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]]) -> None:
        """Every rerank row's cost (`rerank_costs.<row>`) follows from its per-query times, and
        timed exactly the candidates its row scores for every evaluated query; a measured row's
        cost is its own times."""
        if not self.model.has_rerank_costs:
            return
        costs = self.data[RERANK_COSTS.name]
        expected = list(self.rerank_entries)
        if not isinstance(costs, dict) or sorted(costs) != sorted(expected):
            raise Mismatch(f"rerank_costs names rows {sorted(costs) if isinstance(costs, dict) else costs!r}"[:120]
                           + f", but the rerank rows are {sorted(expected)}")
        for name, cost in sorted(costs.items()):
            self._check_cost_block(f"rerank_costs.{name}", cost, name, query_ids, rankings)

    def _check_cost_block(self, where: str, cost: Any, row: str | None, query_ids: list[str],
                          rankings: dict[str, dict[str, list[str]]]) -> None:
        if not isinstance(cost, dict):
            raise Mismatch(f"{where} is not an object")
        kind = cost.get("cost")
        if cost.get("measured") is False:
            if kind != "not measured" or cost.get("quality") != "not measured" or "p95_milliseconds" in cost:
                raise Mismatch(f"{where} is not measured but states a cost or a quality")
            return
        by_shape = isinstance(kind, str) and (kind == SHAPE_COST or kind.startswith(SHAPE_COST + ", extrapolated"))
        if not (kind == "measured" and cost.get("quality") == "measured") and not (
                by_shape and cost.get("quality") == "not measured"):
            raise Mismatch(f"{where} says cost {kind!r} with quality {cost.get('quality')!r}: a cost measured "
                           "by shape never measures quality")
        if (kind == "measured") != (row in rankings):
            raise Mismatch(f"{where} says cost {kind!r}, but the {row or 'rerank'} row was "
                           f"{'measured' if row in rankings else 'not measured'}")
        times = _field(cost, "per_query_milliseconds", where)
        pairs = _field(cost, "per_query_pairs", where)
        for name, mapping in (("per_query_milliseconds", times), ("per_query_pairs", pairs)):
            if not _per_evaluated_query(mapping, query_ids):
                raise Mismatch(f"{where}.{name} does not hold one entry per query of manifest.query_ids"
                               f"{_query_difference(mapping, query_ids)}")
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
               for v in times.values()):
            raise Mismatch(f"{where}.per_query_milliseconds holds a time that is not a positive number")
        entry = self.rerank_entries.get(row) if row is not None else None
        if entry is None:
            raise Mismatch(f"{where} states a cost, but no rerank row is recorded (manifest.rows)")
        over, depth = entry.get("over"), entry.get("depth")
        if over in rankings:
            _expect(f"{where}.per_query_pairs", pairs, {q: len(rankings[over][q][:depth]) for q in query_ids})
        if kind == "measured" and row == self.rerank_row:
            _expect(f"{where}.per_query_milliseconds", times, self.model.rerank_milliseconds)
        _check_extrapolation(where, cost, times)
        for name, value in timing_summary(times, pairs).items():
            _expect(f"{where}.{name}", cost.get(name), value)

    def _check_reorderings(self, rankings: dict[str, dict[str, list[str]]]) -> None:
        """A measured rerank row is a reordering of its over row's top `depth` candidates (all of
        them without a depth) with the rest in their order below, by a model the manifest
        identifies; a row missing any of these was not made by the tool."""
        models = self.manifest.get("models") if isinstance(self.manifest.get("models"), dict) else {}
        for position, (name, entry) in enumerate(self.rerank_entries.items()):
            if name not in rankings:
                continue
            over, depth = entry.get("over"), entry.get("depth")
            where = f"table[search={name}]"
            if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
                raise Mismatch(f"manifest.rows: rerank row {name} records depth {depth!r}, not a positive integer")
            if over not in rankings or not same_candidate_sets(rankings[over], rankings[name]):
                raise Mismatch(f"{where} does not reorder exactly {over}'s candidates")
            for query, ranked in rankings[name].items():
                head, tail = rankings[over][query][:depth], rankings[over][query][len(rankings[over][query][:depth]):]
                if sorted(ranked[:len(head)]) != sorted(head) or ranked[len(head):] != tail:
                    raise Mismatch(f"{where}, query {query}: does not reorder only {over}'s top {len(head)} "
                                   "and keep the rest in their order below")
            if position == 0 and not isinstance(self.model.rerank_milliseconds, dict):
                raise Mismatch(f"{where} is measured but no rerank time is recorded per query")
            identity = models.get("rerank" if position == 0 else f"rerank:{name}", {})
            if not isinstance(identity, dict) or not identity.get("weights_sha256"):
                raise Mismatch(f"{where} is measured but manifest.models names no weights for it")

    def _check_rerank(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]]) -> None:
        self._check_reorderings(rankings)
        if self.model.has_rerank_summary:
            times = self.model.rerank_milliseconds
            recorded = self.model.p95_rerank_milliseconds
            if times is None:
                _expect(P95_RERANK.name, recorded, None)
            else:
                if not isinstance(times, dict) or sorted(times) != sorted(query_ids):
                    raise Mismatch("rerank_milliseconds does not hold one time per evaluated query")
                _expect(P95_RERANK.name, recorded, percentile([times[q] for q in query_ids], 95))
        if SAME_CANDIDATES.name in self.data:
            derived = (same_candidate_sets(rankings[self.rerank_over], rankings[self.rerank_row])
                       if self.rerank_over in rankings and self.rerank_row in rankings else None)
            _expect(SAME_CANDIDATES.name, self.data[SAME_CANDIDATES.name], derived)
        top = self.model.reranked_top
        if top:
            if self.rerank_row not in rankings:
                raise Mismatch("reranked_top_5 lists documents for a rerank row that has no run file")
            listed = reranked_top_ids(rankings[self.rerank_row], sorted(top))
            for query, entries in sorted(top.items()):
                _expect(f"reranked_top_5.{query}", [entry.get("corpus_id") for entry in entries], listed[query])

    def _check_diagnosis(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]],
                         judgements: Mapping[str, Mapping[str, int]]) -> None:
        """The diagnosis rebuilt by its builder: the evaluation stage's candidate misses and
        ordering problems with their summary, or the sandbox's topic by topic (whose scores are the
        rows' own, kept as recorded; the documents they list are the run's)."""
        if not self.model.has_diagnosis:
            return
        recorded = self.data[DIAGNOSIS.name]
        if self.sandbox:
            cutoff = int(_field(self.data, PARAMETERS.name, "").get("cutoff", 0))
            derived: dict[str, Any] = {}
            for row, by_query in sorted(rankings.items()):
                derived[row] = {}
                for query in query_ids:
                    written = self.model.diagnosis(row).get(query, {})
                    scores = [entry.get("score") if isinstance(entry, dict) else None
                              for entry in written.get("scores", [])] if isinstance(written.get("scores"), list) else []
                    ranked = list(zip(by_query[query], scores + [None] * (len(by_query[query]) - len(scores))))
                    derived[row][query] = topic_diagnosis_entry(ranked, judgements.get(query, {}), cutoff)
            _expect(DIAGNOSIS.name, recorded, derived)
            return
        derived = diagnosis_block(rankings, judgements, query_ids)
        _expect(DIAGNOSIS.name, recorded, derived)
        _expect(DIAGNOSIS_SUMMARY.name, self.model.diagnosis_summary, diagnosis_summary_block(derived))

    def _check_sample_comparison(self) -> None:
        compared = self.manifest.get("compared_with")
        blocks = self.model.sample_comparison_blocks
        if compared is None:
            if blocks:
                raise Mismatch(f"{sorted(blocks)[0]} is present but manifest.compared_with names no sample file")
            return
        if self.read_other is None:
            raise Mismatch("the sample results this file was compared with cannot be read here")
        sample = self.read_other(str(_field(compared, "path", "manifest.compared_with")))
        if sample.sha256 != compared.get("sha256"):
            raise Mismatch(f"manifest.compared_with: {sample.name} changed since this file was compared with it; "
                           "run `readout evaluate --queries all` again")
        problem = seal_problem(sample.written)
        if problem:
            raise Mismatch(f"manifest.compared_with: {sample.name} is {problem}")
        for name, derived in sample_comparison_blocks(sample.data, self.data).items():
            _expect(name, self.data.get(name), derived)


