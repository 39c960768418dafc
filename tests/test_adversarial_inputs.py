"""Adversarial inputs for every reader: hostile ledgers, readout.yaml files, label registries,
results files and histories that once crashed or hung a command. Each must be a one-line input
error (exit 2) within seconds, run in a child process with a timeout.

Family 11 of the adversarial suites (tests/claims/test_adversarial_claims.py holds 1 to 10).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import (DENSE, FUSION, HISTORY, HYBRID, HYBRID_VS_DENSE, claim, ledger_text, measured,
                            one_line_error, run_subprocess)


# --- 11. crashes --------------------------------------------------------------------------------


ALIAS_BOMB = "".join(
    f"{name}: &{name} [{', '.join([previous] * 9)}]\n"
    for name, previous in zip("abcdefghi", ['"lol"'] + [f"*{c}" for c in "abcdefgh"]))


def _ledger(text: str):
    return lambda root: (root / "claims" / "ledger.yaml").write_text(text, encoding="utf-8")


def _config(text: str):
    return lambda root: (root / "readout.yaml").write_text(text, encoding="utf-8")


def _predicate_ledger(predicate: str):
    return _ledger(ledger_text(claim("deep", HYBRID_VS_DENSE, measured({"h": HYBRID, "d": DENSE}, predicate),
                                     kind="evaluative")))


def _labels(text: str):
    return lambda root: (root / "templates" / "labels.yaml").write_text(text, encoding="utf-8")


def _results(text: str):
    return lambda root: (root / "outputs" / "results.json").write_text(text, encoding="utf-8")


def _huge_integer_in_results(root: Path) -> None:
    path = root / "outputs" / "results.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"documents": 40', '"documents": 1' + "0" * 5000),
                    encoding="utf-8")


CRASHES = [
    pytest.param(_predicate_ledger("not " * 120 + "h > d"), "check", "claims/ledger.yaml:",
                 "predicate nested more than", id="deeply-nested-not"),
    pytest.param(_predicate_ledger("abs(" * 40 + "h" + ")" * 40 + " > d"), "check", "claims/ledger.yaml:",
                 "predicate nested more than", id="deeply-nested-calls"),
    pytest.param(_predicate_ledger("h > " + "-" * 240 + "d"), "check", "claims/ledger.yaml:",
                 "predicate nested more than", id="deeply-nested-unary"),
    pytest.param(_ledger("version: 1\nclaims: &a [*a]\n"), "check", "claims/ledger.yaml:2:",
                 "anchors and aliases are not allowed", id="recursive-alias-ledger"),
    pytest.param(_ledger("version: 1\n" + ALIAS_BOMB + "claims: []\n"), "check", "claims/ledger.yaml:",
                 "anchors and aliases are not allowed", id="alias-bomb-ledger"),
    pytest.param(_config(ALIAS_BOMB + "title: Fixture\nkind: beir\n"), "check", "readout.yaml:",
                 "anchors and aliases are not allowed", id="alias-bomb-readout-yaml"),
    pytest.param(_config("title: Fixture\nkind: beir\noutputs: &o {readout: *o}\n"), "render", "readout.yaml:",
                 "anchors and aliases are not allowed", id="recursive-alias-readout-yaml"),
    pytest.param(_labels(ALIAS_BOMB), "render", "templates/labels.yaml:", "anchors and aliases are not allowed",
                 id="alias-bomb-labels"),
    pytest.param(_ledger(ledger_text(claim("wide", "Hybrid reaches nDCG@5 {h:999999999.3f}.",
                                           measured({"h": HYBRID}), kind="performance"))),
                 "check", "claims/ledger.yaml:", "format spec '999999999.3f' is not allowed", id="huge-format-width"),
    pytest.param(_ledger(ledger_text(claim("precise", "Hybrid reaches nDCG@5 {h:.999999999f}.",
                                           measured({"h": HYBRID}), kind="performance"))),
                 "check", "claims/ledger.yaml:", "format spec '.999999999f' is not allowed",
                 id="huge-format-precision"),
    pytest.param(_results("[" * 200_000 + "]" * 200_000), "check", "outputs/results.json",
                 "nested too deeply", id="deeply-nested-results-json"),
    pytest.param(_results('{"manifest": ' + "{\"a\": " * 5000 + "1" + "}" * 5000 + "}"), "render",
                 "outputs/results.json", "nested too deeply", id="deeply-nested-results-object"),
    pytest.param(_huge_integer_in_results, "check", "outputs/results.json", "digits", id="huge-integer-in-results"),
    pytest.param(_ledger(ledger_text(claim("long", "Hybrid " + "x" * 3_000_000 + ".", FUSION))), "check",
                 "claims/ledger.yaml:", "text longer than", id="three-megabyte-claim"),
    pytest.param(_ledger("version: 1\nclaims: " + "[" * 100_000 + "]" * 100_000 + "\n"), "check",
                 "claims/ledger.yaml:", "nest", id="deeply-nested-ledger"),
    pytest.param(_ledger("version: 1\nclaims:\n" + "".join("  " * i + "- \n" for i in range(3000))), "check",
                 "claims/ledger.yaml:", "nest", id="deeply-indented-ledger"),
    pytest.param(lambda root: (root / HISTORY).write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8"),
                 "check", "claims/trace-history.jsonl:1:", "nested too deeply", id="deeply-nested-history"),
]


@pytest.mark.parametrize("attack, command, where, reason", CRASHES)
def test_hostile_inputs_are_one_line_input_errors(tmp_path, make_project, attack, command, where, reason):
    root = make_project(tmp_path / "p", own_templates=True)
    attack(root)
    for args in ((command,), ("render", "--check")) if command == "render" else ((command,),):
        outcome, elapsed = run_subprocess(root, *args)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert line.startswith("Error: ") and where in line and reason in line, line
        assert elapsed < 5, f"{args} took {elapsed:.1f} s"
