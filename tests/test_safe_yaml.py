"""Bounded YAML: no aliases, bounded depth, no key written twice, and the line of every key for error
messages."""

from __future__ import annotations

import pytest

from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.storage.memo import VALUES_SUFFIX
from generator.storage.safe_yaml import load_config, load_config_with_lines, parse_yaml


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


# --- duplicate keys ------------------------------------------------------------------------------


@pytest.mark.parametrize("text, line, key, first", [
    ("evaluate:\n  skip_rerank: true\n  skip_rerank: false\n", 3, "skip_rerank", 2),
    ("title: a\nkind: beir\ntitle: b\n", 3, "title", 1),
    ("evaluate:\n  rows:\n    - {name: dense, kind: dense, name: sparse}\n", 3, "name", 3),
    ("evaluate:\n  rows:\n    - name: dense\n      kind: dense\n      kind: sparse\n", 5, "kind", 4),
    ("outputs:\n  readout:\n    sections:\n      - {id: a, title: A}\n    sections: []\n", 5, "sections", 3),
    ("outputs:\n  readout:\n    file: a.html\n  readout:\n    file: b.html\n", 4, "readout", 2),
    ("a: 1\n'a': 2\n", 2, "a", 1),                   # quoted or not, one key
    ("x:\n  true: 1\n  yes: 2\n", 3, "yes", 2),       # YAML 1.1 reads both as true
    ("x: {1: a, 1.0: b}\n", 1, "1.0", 1),             # one number
])
def test_a_key_written_twice_in_readout_yaml_is_refused_at_any_depth(text, line, key, first):
    with pytest.raises(InputError) as raised:
        load_config_with_lines(text, "readout.yaml")
    assert str(raised.value) == f"readout.yaml:{line}: {key}: duplicate key (first at line {first})"


@pytest.mark.parametrize("reader", [load_config, parse_yaml], ids=["readout.yaml", "ledger"])
def test_readout_yaml_and_the_ledger_say_a_duplicate_key_the_same_way(reader):
    with pytest.raises(InputError) as raised:
        reader("claims:\n  - id: a\n    kind: factual\n    kind: design\n", "f.yaml")
    assert str(raised.value) == "f.yaml:4: kind: duplicate key (first at line 3)"


def test_a_long_duplicate_key_is_cut_in_the_message():
    key = "k" * 500
    with pytest.raises(InputError) as raised:
        load_config(f"{key}: 1\n{key}: 2\n", "readout.yaml")
    assert len(str(raised.value)) < 160 and str(raised.value).endswith("...: duplicate key (first at line 1)")


def test_a_merged_key_may_still_be_overridden_by_the_mappings_own():
    assert load_config("a:\n  <<: {b: 1, c: 2}\n  b: 3\n", "f.yaml") == {"a": {"b": 3, "c": 2}}


def test_distinct_keys_that_look_alike_are_kept():
    assert load_config("a: 1\nA: 2\n'1': 3\n1: 4\n", "f.yaml") == {"a": 1, "A": 2, "1": 3, 1: 4}


def test_readout_check_refuses_a_readout_yaml_with_a_key_written_twice(make_project, tmp_path, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    config = root / "readout.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text + "evaluate:\n  skip_rerank: true\n  skip_rerank: false\n", encoding="utf-8")
    lines = text.count("\n")
    monkeypatch.chdir(root)
    capsys.readouterr()
    assert main(["check", str(root), "--no-record"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("Error: ")
    assert err[0].endswith(f"readout.yaml:{lines + 3}: skip_rerank: duplicate key (first at line {lines + 2})")


# --- remembered parses (generator.storage.safe_yaml, through generator.storage.memo) ----------------

LEDGER_TEXT = """\
claims:
  - id: c2
    text: "second, written first"
    empty:
    nothing: ~
    list: [b, a, '3']
  - id: c1
    text: first
zeta: 1
alpha: {y: 2, x: [null, 'null', yes]}
"""
CONFIG_TEXT = """\
zeta: 1
alpha: {y: 2.5, x: [null, 'null', yes, -0.0]}
flag: {true: shown, false: hidden}
3: three
name: readout
"""


def _tree(node):
    """A node tree as nested tuples with every line, and mappings as ordered pairs."""
    if node is None:
        return None
    if isinstance(node.value, list):
        return (node.line, [_tree(child) for child in node.value])
    if isinstance(node.value, dict):
        return (node.line, [(key, line, _tree(child)) for key, (line, child) in node.value.items()])
    return (node.line, node.value)


def _typed(value):
    """A value with every type and order written out (True and 1, 2.0 and 2 compare equal)."""
    if isinstance(value, dict):
        return ("dict", [(_typed(key), _typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(item) for item in value])
    return (type(value).__name__, repr(value))


# A parse is remembered with marshal (generator.storage.memo.Memo.store_values), not as JSON text;
# `memos` (conftest) is this test's own memo directory.

def test_a_remembered_ledger_tree_is_the_parsed_one_in_order_with_its_lines(memos, monkeypatch):
    parsed = parse_yaml(LEDGER_TEXT, "claims.yaml")
    assert len(list(memos.glob(f"*{VALUES_SUFFIX}"))) == 1, "the parse was not remembered"
    remembered = parse_yaml(LEDGER_TEXT, "claims.yaml")
    assert remembered is not parsed and _tree(remembered) == _tree(parsed)
    assert [key for key in remembered.value] == ["claims", "zeta", "alpha"]
    monkeypatch.setenv("READOUT_NO_MEMO", "1")
    assert _tree(parse_yaml(LEDGER_TEXT, "claims.yaml")) == _tree(remembered)


def test_remembered_config_values_keep_their_types_keys_order_and_lines(memos):
    values, lines = load_config_with_lines(CONFIG_TEXT, "readout.yaml")
    assert list(values) == ["zeta", "alpha", "flag", 3, "name"] and values["flag"] == {True: "shown", False: "hidden"}
    again, again_lines = load_config_with_lines(CONFIG_TEXT, "readout.yaml")
    assert len(list(memos.glob(f"*{VALUES_SUFFIX}"))) == 1
    assert _typed(again) == _typed(values) and again_lines.lines == lines.lines
    assert again_lines.line("alpha.x") == 2


def test_a_value_json_cannot_give_back_is_parsed_every_time(memos):
    import datetime

    text = "when: 2026-12-06\nname: x\n"
    for _ in range(2):
        assert load_config(text, "readout.yaml") == {"when": datetime.date(2026, 12, 6), "name": "x"}
    assert list(memos.glob(f"*{VALUES_SUFFIX}")) == []


def test_a_refused_text_is_not_remembered_and_is_refused_again_with_its_line(memos):
    text = "a: 1\nb: 2\na: 3\n"
    for _ in range(2):
        with pytest.raises(InputError) as refused:
            load_config(text, "readout.yaml")
        assert refused.value.line == 3 and "duplicate key" in str(refused.value)
    assert list(memos.glob(f"*{VALUES_SUFFIX}")) == []


def test_a_remembered_parse_answers_only_for_its_own_text(memos):
    parse_yaml("a: one\n", "claims.yaml")
    assert parse_yaml("a: two\n", "claims.yaml").value["a"][1].value == "two"
    assert len(list(memos.glob(f"*{VALUES_SUFFIX}"))) == 2


def test_the_package_data_files_read_back_as_parsed(memos):
    import yaml

    from generator.claims.frames.phrasing import PHRASINGS_DIR
    from generator.core.text.lexicon import LEXICON_DIR
    from generator.storage.safe_yaml import load_package_data

    paths = [*sorted(LEXICON_DIR.glob("*.yaml")), *sorted(PHRASINGS_DIR.glob("*.yaml"))]
    for path in paths:
        parsed = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        for _ in range(2):   # computed and remembered, then read from the memo
            load_package_data.cache_clear()
            assert _typed(load_package_data(path)) == _typed(parsed), path.name
    assert len(list(memos.glob(f"*{VALUES_SUFFIX}"))) == len(paths), "a data file was not remembered"
