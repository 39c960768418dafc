"""The rule registry (generator/claims/tracing/rules/): stable codes, a generated reference that
stays current, every rule tested in this folder, and findings that carry their codes in every
output format."""

import json
import re
import subprocess
import sys
from pathlib import Path

from generator.claims.tracing.rules import FAMILIES, registry
from tests.conftest import REPOSITORY_ROOT, claim, run_cli

RULES_FOLDER = Path(__file__).resolve().parent


def test_codes_are_unique_stable_words_with_a_title_and_a_description():
    codes = [rule.code for rule in registry()]
    assert len(codes) == len(set(codes))
    for rule in registry():
        assert re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", rule.code), rule.code
        assert rule.title and rule.description, rule.code
        assert rule.family in FAMILIES


def test_every_family_is_a_module_of_its_own():
    modules = {path.stem for path in (REPOSITORY_ROOT / "generator" / "claims" / "tracing" / "rules").glob("*.py")}
    assert set(FAMILIES) == modules - {"__init__"}


def test_the_rules_reference_is_current():
    sys.path.insert(0, str(REPOSITORY_ROOT / "docs"))
    try:
        from generate_rules_reference import render_rules_reference
    finally:
        sys.path.pop(0)
    assert (REPOSITORY_ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == render_rules_reference(), \
        "docs/rules.md is stale: run `python docs/generate_rules_reference.py`"


def test_every_rule_is_named_by_a_test_of_this_folder_or_of_the_claims_tests():
    """A rule nobody tests by its code can change without a test noticing: each code appears in a
    test file of tests/claims (its rule-level tests sit in this folder)."""
    texts = " ".join(path.read_text(encoding="utf-8") for path in (REPOSITORY_ROOT / "tests" / "claims").rglob("*.py"))
    untested = [rule.code for rule in registry() if f'"{rule.code}"' not in texts and f"[{rule.code}]" not in texts]
    assert untested == [], untested


EXTRA = claim("typed", "Hybrid is better than dense by 0.05.",
              "- design: {document: decisions.md, quote: \"Hybrid uses RRF with constant 60 over both top-50 lists.\"}")


def test_findings_carry_their_codes_in_text_json_and_github(make_project, tmp_path, monkeypatch, capsys):
    root = make_project(tmp_path / "p", extra_claims=EXTRA)
    text = run_cli(root, monkeypatch, capsys, "check", "--no-record")
    assert text.code == 1
    assert re.search(r"claim typed \(factual\): \[number-placed\] number '0\.05'", text.out), text.out
    listed = run_cli(root, monkeypatch, capsys, "check", "--no-record", "--format", "json")
    found = next(item for item in json.loads(listed.out)["claims"] if item["id"] == "typed")
    assert {"code": "number-placed"} .items() <= {"code": found["findings"][-1]["code"]}.items()
    assert [finding["message"] for finding in found["findings"]] == found["reasons"]
    github = run_cli(root, monkeypatch, capsys, "check", "--no-record", "--format", "github")
    assert re.search(r"::error file=claims/ledger\.yaml,line=\d+,title=number-placed%3A claim typed", github.out), \
        github.out
