"""The README's summary of the committed verdict, rendered from the results, never typed.

The project sells one rule (a sentence without evidence cannot pass), so its own README keeps it:
the paragraph between the `readme-summary` markers is `templates/readme-summary.md.j2` rendered
with the release sample's results, the every-query results (`evaluate.all_results`) and the
design's computed decisions. `python -m generator.render.summary` rewrites the block in place;
`--check` exits 1 when the README differs (as `cog --check`), and the test suite runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from generator.claims.record.design_rules import read_design_rules
from generator.claims.record.triggers import evaluate_trigger
from generator.core.options import RESULTS_FILE
from generator.storage.errors import InputError
from generator.storage.fileio import atomic_write_text
from generator.storage.paths import display_path
from generator.project import Project, load_project
from generator.core.results import RESULTS_NAME, Results, read_results
from generator.core.results.model import cheapest_within, within_budget

TEMPLATE = "readme-summary.md.j2"
BEGIN = "<!-- readme-summary: generated from the results by `python -m generator.render.summary`; do not edit -->\n"
END = "<!-- /readme-summary -->\n"
# The decision the summary leads with, the row it is about and the budget it is held to.
DECISION, RERANK_ROW, INT8_ROW, BUDGET = "D5", "hybrid+rerank", "hybrid+rerank-int8", "rerank_p95_milliseconds"
SMALL_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def signed(value: float) -> str:
    """Three decimals with a sign, the ASCII minus the README uses elsewhere."""
    return f"{value:+.3f}"


def magnitude(value: float) -> str:
    return f"{abs(value):.3f}"


def milliseconds(value: float) -> str:
    return f"{value:,.0f}"


def count_words(value: int) -> str:
    return SMALL_NUMBERS[value] if 0 <= value < len(SMALL_NUMBERS) else f"{value:,}"


def short_model(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _metric(results: Results, row: str, baseline: str, where: str) -> dict[str, Any]:
    block = results.model.paired(row, baseline).get("nDCG@5")
    if block is None:
        raise InputError(f"no measured nDCG@5 comparison of {row} with {baseline}", path=where)
    return block


def _p95(results: Results, row: str, where: str) -> float:
    cost = results.model.cost(row)
    if cost is None or not isinstance(cost.get("p95_milliseconds"), (int, float)):
        raise InputError(f"no p95 time of {row}", path=where)
    return float(cost["p95_milliseconds"])


def _power(decision: Any, where: str) -> dict[str, Any]:
    """What the release sample can detect for the effect the decision states."""
    if not decision.power or decision.power.get("minimum_detectable_effect") is None:
        raise InputError(f"decision {DECISION} states no effect, or its sample cannot weigh it", path=where)
    return decision.power


def _everything_mde(results: Results, where: str) -> float:
    """The minimum detectable effect of every test query, from the file's power block."""
    value = (results.model.power(RERANK_ROW, "hybrid", "nDCG@5") or {}).get("minimum_detectable_effect")
    if not isinstance(value, (int, float)):
        raise InputError(f"no power block for {RERANK_ROW} against hybrid on nDCG@5", path=where)
    return float(value)


def summary_context(project: Project) -> dict[str, Any]:
    outputs = project.outputs_dir
    sample = read_results(outputs / RESULTS_NAME)
    all_name = project.evaluate.get("all_results", RESULTS_FILE["all"])
    everything = read_results(outputs / all_name)
    rules = read_design_rules(project.design_dir)
    trigger = next((t for t in rules.triggers if t.decision == DECISION), None)
    if trigger is None:
        raise InputError(f"no decision {DECISION} with a trigger", path=display_path(project.design_dir))
    decision = evaluate_trigger(trigger, rules.budgets, sample, None, display_path(project.design_dir))
    budget = rules.budgets[BUDGET].value
    frontier = sample.model.frontier or {"configurations": []}
    sample_where, all_where = display_path(sample.path), display_path(everything.path)
    return {
        "decision": decision, "budget": budget,
        "sample_queries": sample.model.queries, "everything_queries": everything.model.queries,
        "rerank": _metric(sample, RERANK_ROW, "hybrid", sample_where),
        "int8": _metric(sample, INT8_ROW, "hybrid", sample_where),
        "rerank_p95": _p95(sample, RERANK_ROW, sample_where),
        "int8_p95": _p95(sample, INT8_ROW, sample_where),
        "configurations": len(frontier["configurations"]),
        "fitting": len(within_budget(frontier, budget)),
        "cheapest": cheapest_within(frontier, budget),
        "detectable": _power(decision, sample_where),
        "everything_mde": _everything_mde(everything, all_where),
        "everything_rerank": _metric(everything, RERANK_ROW, "hybrid", all_where),
        "everything_hybrid": _metric(everything, "hybrid", "dense", all_where),
    }


def render_summary(project: Project) -> str:
    env = Environment(loader=FileSystemLoader(str(project.templates_dir)), undefined=StrictUndefined,
                      keep_trailing_newline=True, autoescape=False)
    env.filters.update(signed=signed, magnitude=magnitude, milliseconds=milliseconds, count_words=count_words,
                       short_model=short_model)
    return env.get_template(TEMPLATE).render(summary_context(project))


def replace_block(readme: str, summary: str, where: str) -> str:
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise InputError("no readme-summary block (its begin and end markers)", path=where)
    return readme[:start + len(BEGIN)] + summary + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator.render.summary", description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", default=Path("."), type=Path)
    parser.add_argument("--readme", type=Path, default=None, help="default: PROJECT/README.md")
    parser.add_argument("--check", action="store_true", help="exit 1 when the README's block is not the rendering")
    args = parser.parse_args(argv)
    try:
        project = load_project(args.project)
        readme_path = args.readme or project.root / "README.md"
        readme = readme_path.read_text(encoding="utf-8")
        updated = replace_block(readme, render_summary(project), display_path(readme_path))
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"error: {error.filename or args.project}: {error.strerror}", file=sys.stderr)
        return 2
    if updated == readme:
        return 0
    if args.check:
        print(f"{display_path(readme_path)}: the readme-summary block is not what the results say; run "
              "python -m generator.render.summary", file=sys.stderr)
        return 1
    atomic_write_text(readme_path, updated)
    print(f"wrote {display_path(readme_path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
