"""A render parses each results file once (generator.core.results.seal.parsed_once): the check, the
pages, their tables and the files the render wrote share the values parsed from the same bytes.
Sharing is safe only while every reader in the block only reads, so the committed projects are
rendered with every parse recorded, and each parsed value is compared with a fresh parse of its
bytes afterwards."""

from __future__ import annotations

import json
import sys

import pytest

from generator.project import load_project
from generator.render.renderer import render_project
from generator.core.results import read_results

seal = sys.modules["generator.core.results.seal"]   # the package exports a function of the same name


@pytest.fixture
def parses(monkeypatch):
    """Every parse of results bytes: (bytes, the values handed out)."""
    seen: list[tuple[bytes, object]] = []
    parse = seal._parse_accepted

    def recorded(raw, digest):
        data = parse(raw, digest)
        seen.append((raw, data))
        return data
    monkeypatch.setattr(seal, "_parse_accepted", recorded)
    return seen


@pytest.mark.parametrize("project", [".", "examples/l03"])
def test_a_render_parses_each_file_once_and_no_reader_changes_what_it_shares(repository, parses, project):
    outcome = render_project(load_project(repository / project), check_only=True)
    assert outcome.ok, outcome.refused or outcome.stale
    files = [raw for raw, _ in parses]
    assert files and len(files) == len(set(files)), "a file's bytes were parsed twice in one render"
    for raw, data in parses:
        assert json.dumps(data, sort_keys=True) == json.dumps(json.loads(raw), sort_keys=True)


def test_outside_a_render_each_read_parses_again(repository, parses):
    path = repository / "outputs" / "results.json"
    first, second = read_results(path), read_results(path)
    assert len(parses) == 2 and first.data is not second.data


def test_a_file_that_changed_inside_the_block_is_parsed_anew(tmp_path, repository, parses):
    path = tmp_path / "results.json"
    original = (repository / "outputs" / "results.json").read_bytes()
    path.write_bytes(original)
    with seal.parsed_once():
        before = read_results(path)
        again = read_results(path)
        path.write_bytes(original.replace(b'"documents": 5183', b'"documents": 5184', 1))
        after = read_results(path)
    assert again.data is before.data and after.data is not before.data
    assert len(parses) == 2 and after.sha256 != before.sha256
