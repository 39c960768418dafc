"""Sealed results are re-derived, not believed: the checker recomputes every figure a results file
states from the run files and the judgements it names, and refuses the file at the first value
that differs.

What a sealed results file must hold (both `readout evaluate` and `readout sandbox` write it):
`manifest.query_ids`, `manifest.per_query_key` (`per_query` or `per_topic`), `manifest.metrics`
(each metric's definition, generator.evaluate.metrics.Metric), `manifest.run_files` (row -> path
and sha256) and `manifest.qrels_copy` (the judgements of exactly those queries, with sha256).
From these the checker derives, for every measured row: each query's value of every metric, the
row's mean, its change over dense and the inputs of every paired interval (the per-query
differences, their mean, wins, ties and losses, and the exact sign-flip p-value); the p95 of the
per-query rerank times; whether reranking kept every candidate set; the candidate-miss diagnosis;
and the sample-versus-full comparison, which it recomputes from the sealed sample file it was
made against. Bootstrap interval endpoints depend on random draws and are not recomputed; their
inputs are.

Side files a project cites (the sandbox's run_manifest.json, stage_boundary.json, ...) are
citable when a sealed results.json of the same outputs/ lists them with their sha256
(`manifest.files`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from generator.evaluate.diagnosis import count_verdicts, diagnose, ndcg_verdict, recall_verdict
from generator.evaluate.metrics import Metric, macro_mean, percentile, same_candidate_sets, signed_delta
from generator.evaluate.runfiles import read_qrels
from generator.evaluate.sample_check import sample_comparisons
from generator.evaluate.signflip import exact_p_value, wins_ties_losses
from generator.fileio import sha256_file
from generator.sandbox.pipeline import stage_boundary
from generator.results import Results, seal_problem

BASELINE = "dense"
RERANK_ROW = "hybrid+rerank"
HYBRID_ROW = "hybrid"
DIAGNOSIS_CUTOFF = 5


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
    if not _same(recorded, derived):
        raise Mismatch(f"{where} is {_show(recorded)}, but its run files and judgements give {_show(derived)}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _field(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise Mismatch(f"{where}.{key} is missing")
    return mapping[key]


def _read_hashed(outputs_dir: Path, entry: Any, where: str) -> Path:
    path_text = _field(entry, "path", where)
    recorded = _field(entry, "sha256", where)
    path = outputs_dir / str(path_text)
    if not path.is_file():
        raise Mismatch(f"{where}: {path_text} is missing")
    if sha256_file(path) != recorded:
        raise Mismatch(f"{where}: {path_text} changed after the results were sealed (sha256 differs)")
    return path


_BLANK_LINE = re.compile(r"^[ \t\r]*$\n", re.M)
_RUN_LINE = re.compile(r"^(\S+)[ \t]+\S+[ \t]+(\S+)[ \t]+(\d+)[ \t]+\S+[ \t]+\S+[ \t]*$", re.M)


def read_ranked_run(path: Path) -> dict[str, list[str]]:
    """A TREC run as query -> documents in rank order (the rank column, as written)."""
    text = path.read_text(encoding="utf-8")
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
    problem = seal_problem(results.data)
    if problem:
        return problem
    try:
        _Derivation(results, outputs_dir, read_other).check()
    except Mismatch as mismatch:
        return str(mismatch)
    return None


def _run_manifest_view(primary: dict[str, Any]) -> dict[str, Any]:
    manifest = primary["manifest"]
    return {"status": "valid", "inputs": manifest.get("inputs"), "parameters": manifest.get("parameters")}


# The side files a sealed results.json vouches for, and how each is derived from it.
SIDE_FILES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "acquisition_funnel.json": lambda primary: primary.get("funnel"),
    "stage_boundary.json": lambda primary: stage_boundary({k: v for k, v in primary.items() if k != "manifest"}),
    "run_manifest.json": _run_manifest_view,
}
_SIDE_KEYS = {"run_manifest.json": ("status", "inputs", "parameters")}


def side_file_problem(results: Results, primary: Results | None) -> str | None:
    """Whether a side file (not itself a results file) is exactly what the sealed results.json of
    the same outputs/ derives and lists."""
    if results.name not in SIDE_FILES:
        return ("not sealed: only files written by `readout evaluate` or `readout sandbox` can be cited "
                "(no manifest.seal)")
    if primary is None:
        return "not sealed, and no sealed, re-derivable results.json in outputs/ vouches for it"
    files = primary.data["manifest"].get("files", {})
    if files.get(results.name) != results.sha256:
        return f"changed after {primary.name} was sealed (its sha256 is not the one {primary.name} records)"
    derived = SIDE_FILES[results.name](primary.data)
    keys = _SIDE_KEYS.get(results.name)
    recorded = {key: results.data.get(key) for key in keys} if keys else results.data
    if not _same(recorded, derived):
        return f"does not match what {primary.name} derives for it"
    return None


class _Derivation:
    def __init__(self, results: Results, outputs_dir: Path, read_other: Callable[[str], Results] | None):
        self.name = results.name
        self.data = results.data
        self.outputs_dir = outputs_dir
        self.read_other = read_other
        self.manifest = self.data["manifest"]

    def check(self) -> None:
        if "run_files" not in self.manifest:
            raise Mismatch("records no run files: not a results file `readout evaluate` or `readout sandbox` "
                           "writes, so none of its figures can be re-derived")
        query_ids = [str(q) for q in _field(self.manifest, "query_ids", "manifest")]
        key = str(_field(self.manifest, "per_query_key", "manifest"))
        metrics = [Metric.from_manifest(name, entry) for name, entry in
                   sorted(_field(self.manifest, "metrics", "manifest").items())]
        qrels_path = _read_hashed(self.outputs_dir, _field(self.manifest, "qrels_copy", "manifest"),
                                  "manifest.qrels_copy")
        try:
            judgements = read_qrels(qrels_path)
        except ValueError as error:
            raise Mismatch(f"manifest.qrels_copy: {qrels_path.name}: {error}") from None
        if set(judgements) - set(query_ids):
            raise Mismatch(f"manifest.qrels_copy judges queries that were not evaluated: "
                           f"{sorted(set(judgements) - set(query_ids))[:5]}")
        if "queries" in self.data and isinstance(self.data["queries"], int):
            _expect("queries", self.data["queries"], len(query_ids))
        rankings = self._check_rows(query_ids, key, metrics, judgements)
        self._check_rerank(query_ids, rankings)
        self._check_diagnosis(query_ids, rankings, judgements, key)
        self._check_sample_comparison()

    def _check_rows(self, query_ids: list[str], key: str, metrics: list[Metric],
                    judgements: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, list[str]]]:
        rows = _field(self.data, "table", "")
        if not isinstance(rows, list):
            raise Mismatch("table is not a list of rows")
        run_files = self.manifest["run_files"]
        per_query = _field(self.data, key, "")
        rankings: dict[str, dict[str, list[str]]] = {}
        means: dict[str, dict[str, float]] = {}
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
            run = read_ranked_run(_read_hashed(self.outputs_dir, run_files[name], f"manifest.run_files.{name}"))
            if set(run) - set(query_ids):
                raise Mismatch(f"manifest.run_files.{name} ranks queries that were not evaluated")
            rankings[name] = {q: run.get(q, []) for q in query_ids}
            means[name] = {}
            for metric in metrics:
                values = []
                for query in query_ids:
                    value = metric.per_query(rankings[name][query], judgements.get(query, {}))
                    _expect(f"{key}.{name}.{query}.{metric.name}",
                            _field(_field(per_query, name, key), query, f"{key}.{name}").get(metric.name), value)
                    values.append(value)
                means[name][metric.name] = macro_mean(values)
                _expect(f"{where}.{metric.name}", row.get(metric.name), means[name][metric.name])
        self._check_changes(rows, query_ids, key, means)
        return rankings

    def _check_changes(self, rows: list[Any], query_ids: list[str], key: str,
                       means: dict[str, dict[str, float]]) -> None:
        if BASELINE not in means:
            return
        per_query = self.data[key]
        for row in rows:
            name = row["search"]
            if name not in means:
                continue
            for field_name, recorded in sorted(row.items()):
                metric = field_name[len("delta_"):-len(f"_vs_{BASELINE}")] if field_name.startswith("delta_") else None
                if metric and field_name.endswith(f"_vs_{BASELINE}") and metric in means[name]:
                    _expect(f"table[search={name}].{field_name}", recorded,
                            signed_delta(means[name][metric], means[BASELINE][metric]))
            paired = row.get(f"paired_vs_{BASELINE}")
            if not isinstance(paired, dict):
                continue
            for metric, stats in sorted(paired.items()):
                if not isinstance(stats, dict) or metric not in means[name]:
                    raise Mismatch(f"table[search={name}].paired_vs_{BASELINE}.{metric} names no reported metric")
                differences = [per_query[name][q][metric] - per_query[BASELINE][q][metric] for q in query_ids]
                where = f"table[search={name}].paired_vs_{BASELINE}.{metric}"
                _expect(f"{where}.delta", stats.get("delta"), math.fsum(differences) / len(differences))
                wins, ties, losses = wins_ties_losses(differences)
                _expect(f"{where}.wins", stats.get("wins"), wins)
                _expect(f"{where}.ties", stats.get("ties"), ties)
                _expect(f"{where}.losses", stats.get("losses"), losses)
                _expect(f"{where}.queries", stats.get("queries", len(query_ids)), len(query_ids))
                if stats.get("p_value_method") == "exact":
                    _expect(f"{where}.p_value", stats.get("p_value"), exact_p_value(differences))
                low, high = stats.get("ci95_low"), stats.get("ci95_high")
                if not (isinstance(low, (int, float)) and isinstance(high, (int, float)) and low <= high):
                    raise Mismatch(f"{where} has no interval with ci95_low <= ci95_high")

    def _check_rerank(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]]) -> None:
        if RERANK_ROW in rankings:
            # A measured rerank row is a reordering of hybrid's candidates, timed per query, by a
            # model the manifest identifies; a row missing any of these was not made by the tool.
            if HYBRID_ROW not in rankings or not same_candidate_sets(rankings[HYBRID_ROW], rankings[RERANK_ROW]):
                raise Mismatch(f"table[search={RERANK_ROW}] does not reorder exactly hybrid's candidates")
            if not isinstance(self.data.get("rerank_milliseconds"), dict):
                raise Mismatch(f"table[search={RERANK_ROW}] is measured but no rerank time is recorded per query")
            identity = self.manifest.get("models", {}).get("rerank", {})
            if not isinstance(identity, dict) or not identity.get("weights_sha256"):
                raise Mismatch(f"table[search={RERANK_ROW}] is measured but manifest.models.rerank names no weights")
        if "p95_rerank_milliseconds" in self.data:
            times = self.data.get("rerank_milliseconds")
            recorded = self.data["p95_rerank_milliseconds"]
            if times is None:
                _expect("p95_rerank_milliseconds", recorded, None)
            else:
                if not isinstance(times, dict) or sorted(times) != sorted(query_ids):
                    raise Mismatch("rerank_milliseconds does not hold one time per evaluated query")
                _expect("p95_rerank_milliseconds", recorded, percentile([times[q] for q in query_ids], 95))
        if "same_50_rows_after_rerank" in self.data:
            derived = (same_candidate_sets(rankings[HYBRID_ROW], rankings[RERANK_ROW])
                       if HYBRID_ROW in rankings and RERANK_ROW in rankings else None)
            _expect("same_50_rows_after_rerank", self.data["same_50_rows_after_rerank"], derived)
        top = self.data.get("reranked_top_5")
        if isinstance(top, dict) and top:
            if RERANK_ROW not in rankings:
                raise Mismatch("reranked_top_5 lists documents for a rerank row that has no run file")
            for query, entries in sorted(top.items()):
                _expect(f"reranked_top_5.{query}", [entry.get("corpus_id") for entry in entries],
                        rankings[RERANK_ROW].get(query, [])[:5])

    def _check_diagnosis(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]],
                         judgements: Mapping[str, Mapping[str, int]], key: str) -> None:
        recorded = self.data.get("diagnosis")
        if isinstance(recorded, dict):
            verdicts: dict[str, dict[str, str]] = {}
            for row, by_query in sorted(rankings.items()):
                verdicts[row] = {}
                for query in query_ids:
                    found = diagnose(by_query[query], judgements.get(query, {}), DIAGNOSIS_CUTOFF)
                    verdicts[row][query] = recall_verdict(found)
                    _expect(f"diagnosis.{row}.{query}", _field(recorded, row, "diagnosis").get(query),
                            {"missed_by_candidates": found.not_in_candidates,
                             f"ranked_below_{DIAGNOSIS_CUTOFF}": found.ranked_below, "diagnosis": verdicts[row][query]})
            _expect("diagnosis_summary", self.data.get("diagnosis_summary"),
                    {row: count_verdicts(by_query) for row, by_query in verdicts.items()})
        if key == "per_topic":
            cutoff = int(_field(self.data, "parameters", "").get("cutoff", 0))
            for row, by_query in sorted(rankings.items()):
                for query in query_ids:
                    found = diagnose(by_query[query], judgements.get(query, {}), cutoff)
                    entry = self.data[key][row][query]
                    where = f"{key}.{row}.{query}"
                    _expect(f"{where}.top_{cutoff}", entry.get(f"top_{cutoff}"), found.top)
                    _expect(f"{where}.candidates", entry.get("candidates"), by_query[query])
                    _expect(f"{where}.misses", entry.get("misses"), found.misses)
                    _expect(f"{where}.diagnosis", entry.get("diagnosis"), ndcg_verdict(found))

    def _check_sample_comparison(self) -> None:
        compared = self.manifest.get("compared_with")
        if compared is None:
            for key in ("comparison_300", "comparison_300_by_row"):
                if key in self.data:
                    raise Mismatch(f"{key} is present but manifest.compared_with names no sample file")
            return
        if self.read_other is None:
            raise Mismatch("the sample results this file was compared with cannot be read here")
        sample = self.read_other(str(_field(compared, "path", "manifest.compared_with")))
        if sample.sha256 != compared.get("sha256"):
            raise Mismatch(f"manifest.compared_with: {sample.name} changed since this file was compared with it; "
                           "run `readout evaluate --queries all` again")
        problem = seal_problem(sample.data)
        if problem:
            raise Mismatch(f"manifest.compared_with: {sample.name} is {problem}")
        unsealed = {k: v for k, v in self.data.items() if not k.startswith("comparison_300")}
        for key, derived in sample_comparisons(sample.data, unsealed).items():
            _expect(key, self.data.get(key), derived)
