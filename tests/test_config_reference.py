"""readout.yaml is documented and validated: the packaged JSON Schema agrees with the code that loads
a project, and docs/config.md is exactly what the schema renders to (like sqlite-utils' check of its
CLI reference)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
import yaml

from generator.storage.errors import InputError
from generator.core import options
from generator.project import TOP_KEYS, PROJECT_KINDS, load_project
from generator.project import outputs as project_outputs
from generator.project.reference import REGENERATE, load_config_schema, render_reference
from generator.sandbox import config as sandbox_config

jsonschema = pytest.importorskip("jsonschema")

REPOSITORY = Path(__file__).resolve().parents[1]
PAGE = REPOSITORY / "docs" / "config.md"
SCHEMA = load_config_schema()
PROJECTS = [REPOSITORY, REPOSITORY / "examples" / "l03"]
JSON_TYPES = {str: "string", bool: "boolean", int: "integer", list: "array", float: "number", dict: "object"}


def _validator():
    return jsonschema.Draft202012Validator(SCHEMA)


def _config(project: Path) -> dict:
    return yaml.safe_load((project / "readout.yaml").read_text(encoding="utf-8"))


def _output_definition() -> dict:
    return SCHEMA["$defs"]["output"]


def test_the_committed_reference_page_is_a_fresh_render_of_the_schema():
    fresh = render_reference(SCHEMA)
    assert PAGE.read_text(encoding="utf-8") == fresh, f"docs/config.md is stale: run `{REGENERATE}`"


def test_the_page_has_one_section_per_key_with_its_type():
    page = PAGE.read_text(encoding="utf-8")
    for key in ("title", "kind", "data", "evaluate", "sandbox", "outputs"):
        assert f"\n## `{key}`\n" in page
    for key in options.CONFIGURABLE:
        assert f"\n### `evaluate.{key}`\n" in page
    assert "\n### `outputs.<output>.sections[].show`\n" in page
    assert "- Default: `minilm-offline`" not in page   # an alias, never the default
    assert "- Default: `BAAI/bge-small-en-v1.5`" in page


def test_the_schema_is_valid_draft_2020_12():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("project", PROJECTS, ids=["root", "l03"])
def test_every_committed_readout_yaml_is_valid_against_the_schema(project):
    _validator().validate(_config(project))
    load_project(project)


def test_the_top_level_keys_and_kinds_are_the_codes():
    assert tuple(SCHEMA["properties"]) == TOP_KEYS
    assert tuple(SCHEMA["properties"]["kind"]["enum"]) == PROJECT_KINDS
    assert SCHEMA["additionalProperties"] is False


def test_the_evaluate_block_is_the_codes_options_with_their_types_choices_ranges_and_defaults():
    block = SCHEMA["properties"]["evaluate"]
    assert tuple(block["properties"]) == options.CONFIGURABLE
    defaults = {field.name: field.default for field in dataclasses.fields(options.EvaluationOptions)}
    for key, spec in block["properties"].items():
        expected_type = JSON_TYPES[options._TYPES[key]]
        assert spec.get("type", expected_type) == expected_type, key
        if key in options._CHOICES:
            assert tuple(spec["enum"]) == options._CHOICES[key], key
        if key in options.INTEGER_RANGES:
            assert (spec["minimum"], spec["maximum"]) == options.INTEGER_RANGES[key], key
        if key == "sample":   # sets sample_size, sample_order and sample_seed
            assert {spec["properties"]["size"]["default"], spec["properties"]["order"]["default"]} == {
                defaults["sample_size"], defaults["sample_order"]}
        elif defaults[key] is None:
            assert "default" not in spec, key
        else:
            assert spec["default"] == defaults[key], key


def test_the_sandbox_block_is_the_codes_parameters_and_defaults():
    block = SCHEMA["properties"]["sandbox"]
    assert tuple(block["properties"]) == sandbox_config.SANDBOX_KEYS
    parameters = block["properties"]["parameters"]["properties"]
    assert {name: spec["default"] for name, spec in parameters.items()} == sandbox_config.DEFAULT_PARAMETERS
    for name, default in sandbox_config.DEFAULT_PARAMETERS.items():
        assert parameters[name]["type"] == JSON_TYPES[type(default)], name


def test_the_outputs_block_is_the_codes_names_keys_blocks_and_defaults():
    block = SCHEMA["properties"]["outputs"]
    assert tuple(block["properties"]) == project_outputs.OUTPUT_NAMES
    for name, defaults in project_outputs.OUTPUT_DEFAULTS.items():
        overrides = block["properties"][name]["properties"]
        assert {key: overrides[key]["default"] for key in ("file", "template")} == defaults
    output = _output_definition()
    assert tuple(output["properties"]) == project_outputs.OUTPUT_KEYS
    section = output["properties"]["sections"]["items"]
    assert tuple(section["properties"]) == project_outputs.SECTION_KEYS
    assert tuple(section["properties"]["show"]["items"]["enum"]) == project_outputs.SECTION_BLOCKS
    table = output["properties"]["table"]
    assert tuple(table["properties"]) == project_outputs.TABLE_KEYS
    assert tuple(table["properties"]["columns"]["items"]["properties"]) == project_outputs.COLUMN_KEYS
    assert tuple(output["properties"]["charts"]["properties"]) == project_outputs.CHART_KINDS
    assert tuple(output["properties"]["provenance"]["default"]) == project_outputs.DEFAULT_PROVENANCE


def _root_with(change) -> dict:
    config = copy.deepcopy(_config(REPOSITORY))
    change(config)
    return config


def _set(path: str, value):
    def change(config):
        *parents, last = path.split(".")
        node = config
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return change


def _drop(path: str):
    def change(config):
        *parents, last = path.split(".")
        node = config
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]
    return change


INVALID = [
    ("an unknown top-level key", _set("colour", "blue"), "colour"),
    ("no title", _drop("title"), "title"),
    ("an unknown kind", _set("kind", "trec"), "kind"),
    ("an empty data path", _set("data", ""), "data"),
    ("an unknown evaluate option", _set("evaluate.dense", "x"), "evaluate.dense"),
    ("a depth out of range", _set("evaluate.depth", 0), "evaluate.depth"),
    ("a boolean where a number goes", _set("evaluate.seed", True), "evaluate.seed"),
    ("a text where a boolean goes", _set("evaluate.skip_rerank", "yes"), "evaluate.skip_rerank"),
    ("an unknown device", _set("evaluate.device", "tpu"), "evaluate.device"),
    ("an unknown metric", _set("evaluate.metrics", ["ndcg"]), "evaluate.metrics"),
    ("no metric", _set("evaluate.metrics", []), "evaluate.metrics"),
    ("a comparison without a baseline", _set("evaluate.comparisons", [{"row": "hybrid"}]), "evaluate.comparisons[0]"),
    ("an unknown sandbox parameter", _set("sandbox.parameters.gamma", 1), "sandbox.parameters.gamma"),
    ("a negative sandbox k1", _set("sandbox.parameters.k1", -1), "sandbox.parameters.k1"),
    ("a fractional sandbox cutoff", _set("sandbox.parameters.cutoff", 2.5), "sandbox.parameters.cutoff"),
    ("a branch without a reason", _set("sandbox.branches", [{"id": "BR-1"}]), "sandbox.branches[0]"),
    ("a misspelt branch key", _set("sandbox.branches", [{"id": "BR-1", "reason": "r", "paramters": {"k1": 1.0}}]),
     "sandbox.branches[0].paramters"),
    ("a row of an unknown kind", _set("evaluate.rows", [{"name": "x", "kind": "colbert"}]), "evaluate.rows[0].kind"),
    ("a row key of another kind", _set("evaluate.rows", [{"name": "d", "kind": "dense", "over": "d"}]),
     "evaluate.rows[0].over"),
    ("a run row without a file", _set("evaluate.rows", [{"name": "d", "kind": "dense"}, {"name": "t", "kind": "run"}]),
     "evaluate.rows[1].file"),
    ("an unknown output", _set("outputs.summary", {"sections": []}), "outputs.summary"),
    ("an output without sections", _drop("outputs.aar.sections"), "outputs.aar.sections"),
    ("an output file that is a path", _set("outputs.aar.file", "../AAR.md"), "outputs.aar.file"),
    ("an output file that is not a report", _set("outputs.aar.file", "results.json"), "outputs.aar.file"),
    ("a hidden output file", _set("outputs.aar.file", ".AAR.md"), "outputs.aar.file"),
    ("an unknown block", _set("outputs.teachback.sections.0.show", ["graph"]), "outputs.teachback.sections[0].show"),
    ("a section without a title", _drop("outputs.teachback.sections.0.title"), "outputs.teachback.sections[0].title"),
    ("a column with both key and path",
     _set("outputs.aar.table.columns.0", {"key": "recall@5", "path": "documents", "label": "Recall@5"}),
     "outputs.aar.table.columns[0]"),
    ("a column with neither key nor path", _set("outputs.aar.table.columns.0", {"label": "Recall@5"}),
     "outputs.aar.table.columns[0]"),
    # A chart's metrics may be left out (every metric the results hold); its baseline may not.
    ("a chart without its baseline", _drop("outputs.readout.charts.deltas.baseline"),
     "outputs.readout.charts.deltas.baseline"),
    ("no output at all", _set("outputs", {}), "outputs"),
]


@pytest.mark.parametrize("change,field", [(change, field) for _, change, field in INVALID],
                         ids=[name for name, _, _ in INVALID])
def test_an_invalid_config_is_refused_by_the_schema_and_by_the_code_naming_the_key(tmp_path, monkeypatch, change,
                                                                                   field):
    monkeypatch.chdir(tmp_path)
    config = _root_with(change)
    assert list(_validator().iter_errors(config)), "the schema accepts it"
    (tmp_path / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        load_project(tmp_path)
    message = str(refused.value)
    assert message.startswith("readout.yaml:") and "\n" not in message
    assert refused.value.field == field, message


VALID = [
    ("the minimal beir project", {"title": "A review", "kind": "beir"}),
    ("empty blocks", {"title": "A review", "kind": "sandbox", "evaluate": None, "sandbox": None, "outputs": None}),
    ("every evaluate option", {"title": "A review", "kind": "beir", "evaluate": {
        "query_set": "all", "dense_model": "minilm-offline", "rerank_model": "x", "skip_rerank": True,
        "skip_rerank_reason": "not today", "cache_dir": "/tmp/cache", "depth": 10, "rrf_k": 60,
        "rerank_max_length": 256, "bootstrap_resamples": 100, "seed": 0, "progress": False, "device": "cpu",
        "encode_batch_size": 8, "rerank_batch_size": 4, "rerank_cost": "shape",
        "comparisons": [{"row": "hybrid", "baseline": "sparse"}], "metrics": ["nDCG@10:linear", "R@100", "P_5"]}}),
    ("a sandbox branch", {"title": "A review", "kind": "sandbox", "sandbox": {
        "parameters": {"alpha": 1, "k1": 0}, "branches": [{"id": "BR-1", "reason": "why", "parameters": {"alpha": 1}}]}}),
    ("an output with defaults only", {"title": "A review", "kind": "beir", "outputs": {
        "aar": {"sections": [{"id": "why", "title": "Why it happened"}]}}}),
]


@pytest.mark.parametrize("config", [config for _, config in VALID], ids=[name for name, _ in VALID])
def test_a_valid_config_is_accepted_by_both(tmp_path, config):
    _validator().validate(config)
    (tmp_path / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    load_project(tmp_path)
