"""Sealed results are re-derived, not believed: the checker recomputes every figure a results file
states from the run files and the judgements it names, and refuses the file at the first value
that differs.

What a sealed results file must hold (both `readout evaluate` and `readout sandbox` write it):
`manifest.query_ids`, `manifest.metrics` (each metric's definition, generator.core.metrics.Metric),
`manifest.run_files` (row -> path and sha256) and `manifest.qrels_copy` (the judgements of exactly
those queries, with sha256). From these the checker rebuilds each block with the builder that
wrote it (generator.core.results.builders) and compares: for every measured row, each query's value
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

This module reads the evidence and walks the blocks; the paired comparisons are drawn again by
generator.claims.tracing.rederive_comparisons, what follows from timings is checked by
generator.claims.tracing.rederive_timings, and a value that differs is refused by
generator.claims.tracing.mismatch.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Mapping

from generator.claims.tracing.mismatch import Mismatch, _expect, _field, _same
from generator.claims.tracing.rederive_comparisons import ComparisonChecks, _uncertainty_method
from generator.claims.tracing.rederive_timings import TimingChecks
from generator.core.fusion import reciprocal_rank_fusion
from generator.core.metrics import Metric
from generator.core.rows import name_kind_problem
from generator.core.runfiles import positive_grades, read_qrels
from generator.storage.bounded_reads import input_problem, read_input
from generator.storage.fileio import sha256_file
from generator.core.results import Results, seal_problem
from generator.core.results.builders import (RowRun, ceiling_block, diagnosis_block, diagnosis_summary_block,
                                             per_query_block, queries_without_candidates_block, run_manifest_view,
                                             power_block, sample_comparison_blocks, table_block, topic_diagnosis_entry)
from generator.core.results.model import ResultsModel, sandbox_figures
from generator.core.results.schema import (BLOCK_NAMES, CEILING, POWER, DIAGNOSIS, DIAGNOSIS_SUMMARY, MANIFEST,
                                           PARAMETERS, PER_QUERY, QUERIES, QUERIES_WITHOUT_CANDIDATES, TABLE)
from generator.sandbox.pipeline import stage_boundary

_CHANGE_FIELD = re.compile(r"^delta_(?P<metric>.+)_vs_(?P<baseline>.+)$")


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


def _sealed_by(data: Mapping[str, Any]) -> str:
    """The command that wrote a results file, as its seal names it."""
    manifest = data.get(MANIFEST.name) if isinstance(data.get(MANIFEST.name), Mapping) else {}
    seal = manifest.get("seal") if isinstance(manifest.get("seal"), Mapping) else {}
    return str(seal.get("writer", ""))


class _Derivation(ComparisonChecks, TimingChecks):
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
        judgements (generator.core.results.builders) and compared with what the file records."""
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


