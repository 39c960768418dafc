"""No module outside generator/core/results/ spells a results block's name: readers get blocks through
the model (generator.core.results.model) and writers through the builders, so a block is named in one
place, its declaration (generator.core.results.schema), and a renamed or new block cannot be missed by a
reader that spelled the old name.

Some of those names are ordinary words that other formats use too (the ledger's `status`, the
design freeze's `documents`, readout.yaml's `table:`). Each such use is listed below with what the
word means there; an entry no longer needed fails too, so the list cannot go stale."""

from __future__ import annotations

import ast
from pathlib import Path

from generator.core.results.schema import BLOCK_NAMES, FORMER_NAMES

PACKAGE = Path(__file__).resolve().parents[3] / "generator"
NAMES = BLOCK_NAMES | set(FORMER_NAMES)

# What a block's name means where a module outside the results package writes it: module -> words.
OTHER_MEANINGS: dict[str, dict[str, set[str]]] = {
    "a field inside a record, declared in the schema's FIELDS (a statistic's or a cost's `queries`, a "
    "configuration's `ceiling`, the ceiling block's `per_query`, a cost shape's `parameters`), or a field of "
    "the manifest (`parameters`)": {
        "generator.claims.tracing.rederive": {"per_query"},
        "generator.claims.tracing.rederive_comparisons": {"queries"},
        "generator.claims.tracing.rederive_timings": {"ceiling", "queries"},
        "generator.claims.frames.readings": {"queries"},
        "generator.claims.frames.paired_readings": {"queries"},
        "generator.claims.record.triggers": {"ceiling"},
        "generator.core.comparisons": {"queries"},
        "generator.core.frontier": {"ceiling"},
        "generator.core.runfiles": {"queries"},
        "generator.core.uncertainty": {"queries"},
        "generator.evaluate.cost": {"parameters", "queries"},
        "generator.evaluate.cost_report": {"parameters", "queries"},
        "generator.evaluate.pipeline": {"parameters"},
        "generator.evaluate.currency": {"parameters"},
        "generator.evaluate.sweep": {"queries"},
        "generator.render.charts": {"ceiling"},
        "generator.render.tables": {"ceiling", "diagnosis"},
    },
    "readout.yaml's own keys and words: the `evaluate:` options, the `sandbox:` block, an output's `table:` and "
    "the blocks a section may `show:` (which the template context names alike)": {
        "generator.core.options": {"candidate_depth", "comparisons", "frontier", "query_set", "rerank_cost"},
        "generator.evaluate.currency": {"frontier", "rerank_cost"},
        "generator.project.outputs": {"all_pairs", "frontier", "per_query", "rerank_cost", "table"},
        "generator.render.context": {"all_pairs", "frontier", "per_query", "rerank_cost", "table"},
        "generator.render.shell": {"all_pairs", "frontier", "per_query", "rerank_cost", "table"},
        "generator.sandbox.config": {"parameters"},
    },
    "the ledger's own words: a claim frame's kind (`ceiling`, `diagnosis`, `frontier`, `power`) or a figure it "
    "places (`documents`), a schema kind (`power`), a ledger key (`status`)": {
        "generator.claims.frames.phrasing": {"documents"},
        "generator.claims.frames.readings": {"frontier"},
        "generator.claims.frames.paired_readings": {"power"},
        "generator.claims.frames.row_readings": {"ceiling", "diagnosis", "documents"},
        "generator.claims.frames.spec": {"ceiling", "diagnosis", "frontier", "power"},
        "generator.claims.language.upgrade": {"status"},
        "generator.claims.tracing.rules.presentation": {"power"},
    },
    "another file's format: the ledger's and the check report's `status`, the design freeze's `documents`, "
    "run_manifest.json and topic_error_analysis.csv, the L03 input files, the ceiling calculator's case, the "
    "training record, ir_datasets' entities, a cost view's CSS status": {
        "generator.claims.record.freeze": {"documents"},
        "generator.claims.record.history": {"status"},
        "generator.claims.language.ledger": {"status"},
        "generator.claims.language.ledger_loader": {"status"},
        "generator.claims.tracing.rederive": {"parameters", "status"},
        "generator.claims.tracing.report": {"status"},
        "generator.commands.evaluation": {"documents"},
        "generator.evaluate.irds": {"documents", "queries"},
        "generator.evaluate.training": {"documents"},
        "generator.render.tables": {"status"},
        "generator.sandbox.ceiling": {"documents", "parameters"},
        "generator.sandbox.inputs": {"opaque_run", "topics"},
        "generator.sandbox.pipeline": {"diagnosis"},
        "generator.sandbox.runner": {"diagnosis", "parameters", "reranker"},
    },
    "what a sample can detect, as the kernel returns it and the decision table and the regression gate show "
    "it: a rule's `effect` (its `power`) and the figures drawn from it (`power`, `queries`), a change since the "
    "baseline (`queries`), and the gate's JSON `status`": {
        "generator.core.power": {"power", "queries"},
        "generator.claims.record.triggers": {"power", "queries"},
        "generator.claims.record.design_rules": {"power"},
        "generator.claims.tracing.report": {"power", "queries"},
        "generator.render.views": {"power", "queries"},
        "generator.claims.record.noninferiority": {"queries"},
        "generator.commands.regression": {"queries"},
    },
    "a word, not a key: a row kind's alias, a progress bar's unit, a subcommand, the runs folder, a Markdown "
    "extension, an HTML attribute": {
        "generator.claims.tracing.naming": {"reranker"},
        "generator.claims.tracing.rules.identity": {"documents", "reranker", "runs"},
        "generator.claims.tracing.rules.statistic": {"ceiling"},
        "generator.core.text.lexicon": {"reranker"},
        "generator.claims.record.quotable_units": {"table"},
        "generator.commands.cli": {"ceiling"},
        "generator.core.options": {"runs"},
        "generator.core.rows": {"reranker"},
        "generator.evaluate.retrieval": {"documents", "queries"},
        "generator.render.orphans": {"manifest", "table"},
        "generator.sandbox.runner": {"runs"},
        "generator.commands.scaffold": {"runs"},
        "generator.commands.regression_baseline": {"status"},
    },
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def block_name_literals(source: str) -> set[str]:
    """Every string constant of a module's source that is a block's name (or a format-1 one)."""
    return {node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES}


def _found() -> dict[str, set[str]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[:2] == ("core", "results"):
            continue
        words = block_name_literals(path.read_text(encoding="utf-8"))
        if words:
            found[_module(path)] = words
    return found


def _allowed() -> dict[str, set[str]]:
    allowed: dict[str, set[str]] = {}
    for modules in OTHER_MEANINGS.values():
        for module, words in modules.items():
            allowed.setdefault(module, set()).update(words)
    return allowed


def test_no_module_outside_the_results_package_spells_a_block_name():
    allowed = _allowed()
    spelled = {module: sorted(words - allowed.get(module, set())) for module, words in _found().items()}
    assert {module: words for module, words in spelled.items() if words} == {}, (
        "read the block through generator.core.results.model (or build it in generator.core.results.builders); if the "
        "word means something else there, list it in OTHER_MEANINGS with what it means")


def test_every_listed_other_meaning_is_still_used():
    found = _found()
    stale = {module: sorted(words - found.get(module, set())) for module, words in _allowed().items()}
    assert {module: words for module, words in stale.items() if words} == {}


def test_the_rule_sees_a_block_name_however_it_is_written():
    # A subscript, a .get(), a dict key, a comparison and a tuple of names are all spellings.
    source = ('x = data["table"]\ny = data.get("rerank_costs")\nz = {"per_query": 1}\n'
              'w = key == "frontier"\nv = ("all_pairs", "ceiling")\nu = data["rerank_cost"]\n')
    assert block_name_literals(source) == {"table", "rerank_costs", "per_query", "frontier", "all_pairs",
                                           "ceiling", "rerank_cost"}
    assert block_name_literals('label = f"{row} table"\nname = "tables"\n') == set()
