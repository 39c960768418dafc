"""One results document as every reader sees it: typed accessors over the declared blocks
(generator.core.results.schema), so no reader spells a block's name or defends against its shape.

A document read from disk is in the current format already (`Results.data`); an accessor returns
the block's value when it has the declared shape, and an empty value (or None) when the file does
not hold it: the shape is checked once, here. Paths are resolved here too, in either spelling
(format 1's is upgraded, generator.core.results.upgrade), and located in the schema with the file's
own rows and decided reranker.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Callable, Mapping

from generator.core.dataclass import dataclass
from generator.core.rows import RowRoles
from generator.core.results.paths import MISSING, PathSyntaxError, Resolution, Step, parse_path, path_text, resolve
from generator.core.results.rows import row_roles
from generator.core.results.schema import (ALL_PAIRS, CANDIDATE_DEPTH, CEILING, COMPARISON_WITH_SAMPLE,
                                           COMPARISON_WITH_SAMPLE_BY_ROW, COMPARISONS, DIAGNOSIS, DIAGNOSIS_SUMMARY, POWER,
                                           DOCUMENTS, FRONTIER, FUNNEL, MANIFEST, MEAN_TOKEN_LENGTH, OPAQUE_RUN,
                                           P95_RERANK, PARAMETERS, PER_QUERY, POSITIVE_JUDGEMENTS, QUERIES, QUERY_SET,
                                           QUERY_TEXTS, RERANK_COSTS, RERANK_MILLISECONDS, RERANKED_TOP_5, RERANKER, RUNS,
                                           SAME_CANDIDATES, STATUS, TABLE)
from generator.core.results.location import Location, locate
from generator.core.results.upgrade import upgrade_steps


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# The manifest names the corpus as the file that was read (generator.evaluate.data.input_files).
CORPUS_INPUT_NAMES = ("corpus.jsonl", "corpus.jsonl.gz")


def corpus_input(inputs: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The manifest's `inputs` entry of the corpus and the name it was read under, or None."""
    for name in CORPUS_INPUT_NAMES:
        entry = inputs.get(name)
        if isinstance(entry, dict):
            return name, entry
    return None


def comparison_name(row: str, baseline: str) -> str:
    """The key of one comparison: `<row>_vs_<baseline>`."""
    return f"{row}_vs_{baseline}"


class ResultsModel:
    """A results document (format 2)."""

    def __init__(self, data: Mapping[str, Any]):
        self.data = data if isinstance(data, Mapping) else {}
        # What each path is, by its steps (see `_once`).
        self._answers: dict[tuple, Any] = {}

    # --- what the file measured ---------------------------------------------------------------

    @property
    def queries(self) -> int | None:
        """How many queries its figures are over."""
        return _count(self.data.get(QUERIES.name))

    @property
    def documents(self) -> int | None:
        return _count(self.data.get(DOCUMENTS.name))

    @property
    def query_set(self) -> str | None:
        value = self.data.get(QUERY_SET.name)
        return value if isinstance(value, str) else None

    @property
    def candidate_depth(self) -> int | None:
        return _count(self.data.get(CANDIDATE_DEPTH.name))

    @property
    def measures_queries(self) -> bool:
        """Whether the file was measured on a query set (it holds an integer query count)."""
        return self.queries is not None

    @cached_property
    def manifest(self) -> dict[str, Any]:
        return _mapping(self.data.get(MANIFEST.name))

    def manifest_block(self, key: str) -> dict[str, Any]:
        """A mapping of the manifest (`models`, `inputs`, `metrics`, `uncertainty`, ...), or {}."""
        return _mapping(self.manifest.get(key))

    @property
    def query_ids(self) -> list[str]:
        ids = self.manifest.get("query_ids")
        return [str(query) for query in ids] if isinstance(ids, list) else []

    @property
    def metric_names(self) -> list[str]:
        return list(self.manifest_block("metrics"))

    @property
    def positive_grades(self) -> list[Any] | None:
        grades = self.manifest_block("qrels_copy").get("positive_grades")
        return grades if isinstance(grades, list) else None

    @cached_property
    def roles(self) -> RowRoles:
        return row_roles(self.data)

    # --- rows ---------------------------------------------------------------------------------

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """The table's rows, in order (entries that are not objects left out)."""
        table = self.data.get(TABLE.name)
        return [row for row in table if isinstance(row, dict)] if isinstance(table, list) else []

    @property
    def has_table(self) -> bool:
        return isinstance(self.data.get(TABLE.name), list)

    @cached_property
    def row_names(self) -> list[str]:
        return [str(row.get("search")) for row in self.rows if "search" in row]

    def row(self, name: str) -> dict[str, Any] | None:
        return next((row for row in self.rows if row.get("search") == name), None)

    def measured(self, name: str) -> bool:
        row = self.row(name)
        return row is not None and row.get("measured", True) is not False

    @property
    def measured_rows(self) -> list[str]:
        return [name for name in self.row_names if self.measured(name)]

    def per_query(self, row: str) -> dict[str, dict[str, Any]]:
        """{query: {metric: value}} of a measured row, or {}."""
        by_query = _mapping(_mapping(self.data.get(PER_QUERY.name)).get(row))
        return {query: values for query, values in by_query.items() if isinstance(values, dict)}

    def paired_differences(self, row: str, baseline: str, metric: str) -> list[float]:
        """`row` minus `baseline` on `metric`, query by query over the file's evaluated queries (in
        manifest order); a query missing on either side is left out."""
        mine, theirs = self.per_query(row), self.per_query(baseline)
        differences = []
        for query in self.query_ids or sorted(mine):
            a, b = mine.get(query, {}).get(metric), theirs.get(query, {}).get(metric)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
                    and not isinstance(b, bool):
                differences.append(float(a) - float(b))
        return differences

    def power(self, row: str, baseline: str, metric: str) -> dict[str, Any] | None:
        """What the file's queries can detect of `row` against `baseline` on `metric` (the `power`
        block), or None."""
        entry = _mapping(_mapping(_mapping(self.data.get(POWER.name)).get("comparisons")).get(
            comparison_name(row, baseline)))
        figures = _mapping(entry.get("metrics")).get(metric)
        return figures if isinstance(figures, dict) else None

    @property
    def power_levels(self) -> tuple[Any, Any]:
        """(power, alpha) the `power` block's detectable effects are computed at, or Nones."""
        block = _mapping(self.data.get(POWER.name))
        return block.get("power"), block.get("alpha")

    def quantized_twins(self) -> list[tuple[str, str]]:
        """(int8 row, its fp32 twin) for every measured rerank row of `manifest.rows` run in int8
        whose twin (the same model, over the same row, at the same max_length, in fp32) was measured
        too: the same candidates reordered by the same weights at two precisions."""
        recorded = self.manifest.get("rows")
        specs = [entry for entry in recorded if isinstance(entry, dict) and entry.get("kind") == "rerank"] \
            if isinstance(recorded, list) else []

        def same_model(entry: dict[str, Any]) -> tuple:
            return entry.get("model"), entry.get("over"), entry.get("max_length")

        twins = []
        for entry in specs:
            if entry.get("precision") != "int8" or not self.measured(str(entry.get("name"))):
                continue
            twin = next((other for other in specs if other.get("precision", "fp32") == "fp32"
                         and same_model(other) == same_model(entry) and self.measured(str(other.get("name")))), None)
            if twin is not None:
                twins.append((str(entry["name"]), str(twin["name"])))
        return twins

    @property
    def has_per_query(self) -> bool:
        return isinstance(self.data.get(PER_QUERY.name), dict)

    def diagnosis(self, row: str) -> dict[str, dict[str, Any]]:
        by_query = _mapping(_mapping(self.data.get(DIAGNOSIS.name)).get(row))
        return {query: entry for query, entry in by_query.items() if isinstance(entry, dict)}

    @property
    def has_diagnosis(self) -> bool:
        return isinstance(self.data.get(DIAGNOSIS.name), dict)

    @property
    def diagnosis_summary(self) -> Any:
        return self.data.get(DIAGNOSIS_SUMMARY.name)

    @property
    def query_texts(self) -> dict[str, str]:
        return {query: text for query, text in _mapping(self.data.get(QUERY_TEXTS.name)).items()
                if isinstance(text, str)}

    @property
    def runs(self) -> dict[str, str]:
        return {row: path for row, path in _mapping(self.data.get(RUNS.name)).items() if isinstance(path, str)}

    # --- comparisons --------------------------------------------------------------------------

    @property
    def comparisons(self) -> dict[str, dict[str, Any]]:
        return {name: entry for name, entry in _mapping(self.data.get(COMPARISONS.name)).items()
                if isinstance(entry, dict)}

    @property
    def has_comparisons(self) -> bool:
        return COMPARISONS.name in self.data

    def comparison(self, row: str, baseline: str) -> dict[str, Any] | None:
        """The comparison entry of `row` against `baseline`, measured or not."""
        return self.comparisons.get(comparison_name(row, baseline))

    def paired(self, row: str, baseline: str) -> dict[str, dict[str, Any]]:
        """{metric: statistics} of a measured comparison, or {}."""
        entry = self.comparison(row, baseline)
        if not entry or not entry.get("measured"):
            return {}
        return {metric: stats for metric, stats in _mapping(entry.get("metrics")).items() if isinstance(stats, dict)}

    @property
    def all_pairs(self) -> dict[str, Any] | None:
        block = self.data.get(ALL_PAIRS.name)
        return block if isinstance(block, dict) else None

    @property
    def ceiling(self) -> dict[str, Any] | None:
        block = self.data.get(CEILING.name)
        return block if isinstance(block, dict) else None

    # --- the reranker -------------------------------------------------------------------------

    @property
    def rerank_costs(self) -> dict[str, dict[str, Any]]:
        """Each rerank row's cost, the decided reranker's first, then the others by name."""
        costs = {row: cost for row, cost in _mapping(self.data.get(RERANK_COSTS.name)).items()
                 if isinstance(cost, dict)}
        decided = self.roles.rerank
        first = {decided: costs[decided]} if decided in costs else {}
        return {**first, **{row: costs[row] for row in sorted(costs) if row != decided}}

    def cost(self, row: str) -> dict[str, Any] | None:
        return self.rerank_costs.get(row)

    @property
    def has_rerank_costs(self) -> bool:
        return RERANK_COSTS.name in self.data

    @property
    def rerank_milliseconds(self) -> Any:
        return self.data.get(RERANK_MILLISECONDS.name)

    @property
    def has_rerank_summary(self) -> bool:
        return P95_RERANK.name in self.data

    @property
    def p95_rerank_milliseconds(self) -> Any:
        return self.data.get(P95_RERANK.name)

    @property
    def same_candidates(self) -> Any:
        return self.data.get(SAME_CANDIDATES.name, MISSING)

    @property
    def reranked_top(self) -> dict[str, Any]:
        return _mapping(self.data.get(RERANKED_TOP_5.name))

    @property
    def frontier(self) -> dict[str, Any] | None:
        block = self.data.get(FRONTIER.name)
        return block if isinstance(block, dict) else None

    @property
    def has_frontier(self) -> bool:
        return FRONTIER.name in self.data

    @property
    def sample_comparison_blocks(self) -> dict[str, Any]:
        """The comparison with the release sample, when this file holds it."""
        return {name: self.data[name] for name in (COMPARISON_WITH_SAMPLE.name, COMPARISON_WITH_SAMPLE_BY_ROW.name)
                if name in self.data}

    # --- paths --------------------------------------------------------------------------------

    def canonical(self, steps: tuple[Step, ...]) -> tuple[tuple[Step, ...], str | None]:
        """A path's format-2 steps (generator.core.results.upgrade), or why it has none."""
        return self._once(("canonical", steps), lambda: upgrade_steps(steps, self.data))

    def resolve(self, steps: tuple[Step, ...], *, measured_only: bool = True) -> Resolution:
        """Walk a path in either spelling (generator.core.results.paths.resolve)."""
        def walk() -> Resolution:
            canonical, problem = self.canonical(steps)
            if problem is not None:
                return Resolution(False, reason=f"{path_text(steps)}: {problem}", unmeasured=True)
            return resolve(self.data, canonical, measured_only=measured_only)
        return self._once(("resolve", steps, measured_only), walk)

    def lookup(self, path: str) -> Any:
        """The value at a path, null included (a row that was not measured is walked into too);
        MISSING when the path does not parse or leads nowhere."""
        try:
            resolution = self.resolve(parse_path(path), measured_only=False)
        except PathSyntaxError:
            return MISSING
        return resolution.value if resolution.ok else MISSING

    def locate(self, steps: tuple[Step, ...]) -> Location | None:
        """What a path names (generator.core.results.location.locate), with this file's rows."""
        def place() -> Location | None:
            canonical, problem = self.canonical(steps)
            if problem is not None:
                return None
            return locate(canonical, rows=self._known_rows, decided_rerank=self.roles.rerank)
        return self._once(("locate", steps), place)

    def _once(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """`compute()` the first time `key` is asked, the same answer after: a ledger cites the same
        paths again and again, and the model's data is read, never changed (its other derived
        values are kept the same way)."""
        if key not in self._answers:
            self._answers[key] = compute()
        return self._answers[key]

    @cached_property
    def _known_rows(self) -> frozenset[str]:
        return frozenset(self.row_names) | frozenset(self.roles.names)


def frontier_order(entry: Mapping[str, Any]) -> tuple:
    """A frontier's order: cheapest p95 first; ties the deeper, then by model, max_length and precision."""
    return (entry["p95_milliseconds"], -int(entry["depth"]), str(entry["model"]), int(entry["max_length"] or 0),
            str(entry["precision"]))


def within_budget(frontier: Mapping[str, Any], budget: float) -> list[Mapping[str, Any]]:
    """Every configuration of a frontier block whose p95 fits `budget`, cheapest first."""
    return sorted((entry for entry in frontier.get("configurations", []) if entry["p95_milliseconds"] <= budget),
                  key=frontier_order)


def cheapest_within(frontier: Mapping[str, Any], budget: float) -> Mapping[str, Any] | None:
    """The configuration with the lowest p95 that fits `budget` (p95 <= budget), or None."""
    fitting = within_budget(frontier, budget)
    return fitting[0] if fitting else None


@dataclass(frozen=True)
class SandboxFigures:
    """What the sandbox's side files are made from (generator.sandbox.pipeline.stage_boundary)."""

    status: Any
    documents: Any
    queries: Any
    positive_judgements: Any
    parameters: dict[str, Any]
    funnel: Any
    mean_token_length: Any
    opaque_model_identity: Any
    rerank_feature: Any
    inputs: Any


def sandbox_figures(model: ResultsModel) -> SandboxFigures:
    data = model.data
    return SandboxFigures(
        status=data.get(STATUS.name), documents=data.get(DOCUMENTS.name), queries=data.get(QUERIES.name),
        positive_judgements=data.get(POSITIVE_JUDGEMENTS.name), parameters=_mapping(data.get(PARAMETERS.name)),
        funnel=data.get(FUNNEL.name), mean_token_length=data.get(MEAN_TOKEN_LENGTH.name),
        opaque_model_identity=_mapping(data.get(OPAQUE_RUN.name)).get("model_identity"),
        rerank_feature=_mapping(data.get(RERANKER.name)).get("feature"), inputs=model.manifest.get("inputs"))
