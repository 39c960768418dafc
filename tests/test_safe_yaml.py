"""Bounded YAML: no aliases, bounded depth, and the line of every key for error messages."""

from __future__ import annotations

import pytest

from generator.errors import InputError
from generator.safe_yaml import load_config, load_config_with_lines, parse_yaml


@pytest.mark.parametrize("text", [
    "a: &x [1, 2]\nb: *x\n",                                          # a plain alias
    "a: &a [*a]\n",                                                   # a recursive alias
    'a: &a ["x","x","x","x"]\nb: &b [*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b]\n',  # an alias bomb
])
@pytest.mark.parametrize("reader", [load_config, parse_yaml])
def test_aliases_are_refused_in_every_yaml_the_tool_reads(text, reader):
    with pytest.raises(InputError, match="anchors and aliases are not allowed"):
        reader(text, "f.yaml")


def test_nesting_beyond_the_bound_is_an_input_error():
    with pytest.raises(InputError, match="nest"):
        load_config("x: " + "[" * 200 + "]" * 200, "f.yaml")


def test_every_key_has_its_line_and_a_missing_key_falls_back_to_its_parent():
    data, lines = load_config_with_lines("title: T\noutputs:\n  readout:\n    sections:\n      - {id: a, title: A}\n",
                                         "f.yaml")
    assert data["outputs"]["readout"]["sections"][0]["id"] == "a"
    assert lines.line("title") == 1
    assert lines.line("outputs.readout.sections[0].title") == 5
    assert lines.line("outputs.readout.charts.deltas") == 3


def test_config_keeps_yaml_types_and_the_ledger_keeps_text():
    assert load_config("n: 3\nflag: true\n", "f.yaml") == {"n": 3, "flag": True}
    node = parse_yaml("n: 3\nflag: yes\n", "f.yaml")
    assert node.value["n"][1].value == "3" and node.value["flag"][1].value == "yes"
