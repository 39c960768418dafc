"""Loading the claim ledger: what makes a ledger unusable (exit 2, `file:line: field: message`)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from generator.claims.language import ledger as ledger_module
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.claims.language.ledger_loader import load_ledger, parse_ledger

REPOSITORY = Path(__file__).resolve().parents[2]

CLAIM = """\
version: 1
claims:
  - id: a
    output: readout
    section: results
    kind: factual
    text: "Hybrid reaches {h:.3f}."
    sources:
      - measured:
          values: {h: "table[search=hybrid].nDCG@5"}
"""


def load(text: str):
    return parse_ledger(textwrap.dedent(text).encode(), "claims/ledger.yaml")


def error_of(text: str) -> str:
    with pytest.raises(InputError) as caught:
        load(text)
    return str(caught.value)


def test_valid_ledger_loads_with_lines_and_placeholders():
    ledger = load(CLAIM)
    claim = ledger.claims[0]
    assert (claim.id, claim.line, claim.output, claim.section, claim.kind, claim.status) == (
        "a", 3, "readout", "results", "factual", "active")
    assert [(p.name, p.spec) for p in claim.placeholders] == [("h", ".3f")]
    assert claim.measured_sources[0].file == "results.json"
    assert len(ledger.sha256) == 64


def test_scalars_stay_text():
    ledger = load(CLAIM.replace('text: "Hybrid reaches {h:.3f}."', "text: 2030"))
    assert ledger.claims[0].text == "2030"


def test_malformed_yaml_names_line():
    assert error_of("version: 1\nclaims:\n  - id: a\n    text: \"open\n") .startswith(
        "claims/ledger.yaml:5: not valid YAML")


def test_unknown_field_refused():
    assert error_of(CLAIM.replace("    kind: factual\n", "    kind: factual\n    colour: red\n")) == (
        "claims/ledger.yaml:7: colour: unknown field in a claim; allowed: id, output, section, kind, text, frame, "
        "language, status, strike_reason, strike_display, sources")


def test_bad_kind_refused():
    assert error_of(CLAIM.replace("kind: factual", "kind: opinion")) == (
        "claims/ledger.yaml:6: kind: claim a: unknown kind 'opinion'; choose one of factual, causal, evaluative, "
        "performance, recommendation")


def test_bad_output_refused():
    assert "unknown output 'slides'" in error_of(CLAIM.replace("output: readout", "output: slides"))


def test_duplicate_id_refused():
    text = CLAIM + "".join(CLAIM.splitlines(keepends=True)[2:])
    assert error_of(text) == "claims/ledger.yaml:11: id: duplicate claim id 'a' (first at line 3)"


def test_duplicate_key_refused():
    assert error_of(CLAIM.replace("    kind: factual\n", "    kind: factual\n    kind: causal\n")) == (
        "claims/ledger.yaml:7: kind: duplicate key (first at line 6)")


def test_struck_claim_needs_reason():
    assert error_of(CLAIM.replace("    kind: factual\n", "    kind: factual\n    status: struck\n")) == (
        "claims/ledger.yaml:7: strike_reason: claim a: a struck claim needs a strike_reason")


def test_strike_reason_only_for_struck_claims():
    assert "strike_reason is only for struck claims" in error_of(
        CLAIM.replace("    kind: factual\n", "    kind: factual\n    strike_reason: x\n"))


def test_yes_is_not_a_status():
    assert "unknown status 'yes'" in error_of(CLAIM.replace("    kind: factual\n", "    kind: factual\n    status: yes\n"))


@pytest.mark.parametrize("placeholder", ["{h.real}", "{h[0]}", "{0}", "{h!r}", "{}"])
def test_placeholder_must_be_plain_name(placeholder):
    message = error_of(CLAIM.replace("{h:.3f}", placeholder))
    assert message.startswith("claims/ledger.yaml:7: text: claim a: placeholder")


def test_placeholder_must_be_declared():
    assert error_of(CLAIM.replace("{h:.3f}", "{x:.3f}")) == (
        "claims/ledger.yaml:7: text: claim a: placeholder {x} has no value; declare it under a measured source's "
        "values")


def test_literal_braces_are_escaped():
    ledger = load(CLAIM.replace("Hybrid reaches {h:.3f}.", "Set {{a}} at {h:.3f}."))
    assert [p.name for p in ledger.claims[0].placeholders] == ["h"]


@pytest.mark.parametrize("predicate, fragment", [
    ("__import__('os')", "only abs, max, min may be called"),
    ("h.real > 0", "Attribute is not allowed"),
    ("h ** 2 > 0", "Pow is not allowed"),
    ("[h][0] > 0", "is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("h >", "cannot parse predicate"),
    ("x > 1", "predicate uses undeclared name(s) x; declared: h"),
])
def test_unsafe_or_unknown_predicate_refused(predicate, fragment):
    text = CLAIM + '          predicate: "' + predicate.replace('"', '\\"') + '"\n'
    assert fragment in error_of(text)


def test_bad_path_syntax_refused():
    assert "values.h: claim a: path 'table..x' " in error_of(CLAIM.replace("table[search=hybrid].nDCG@5", "table..x")) \
        or "empty key in path" in error_of(CLAIM.replace("table[search=hybrid].nDCG@5", "table..x"))


def test_source_with_two_kinds_refused():
    text = CLAIM.replace("      - measured:\n", "      - design: {document: a.md, quote: q}\n        measured:\n")
    assert "each source has exactly one of design, measured or decision" in error_of(text)


def test_missing_ledger_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "readout.yaml").write_text("title: T\nkind: beir\n")
    assert main(["check"]) == 2
    assert capsys.readouterr().err.startswith("Error: claims/ledger.yaml: ledger not found")


def test_load_ledger_reads_file(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text(CLAIM)
    assert load_ledger(path).claims[0].id == "a"


def test_schema_lists_the_same_choices_as_the_loader():
    schema = json.loads((REPOSITORY / "claims" / "ledger.schema.json").read_text())
    claim = schema["$defs"]["claim"]
    assert claim["properties"]["kind"]["enum"] == list(ledger_module.KINDS)
    assert claim["properties"]["output"]["enum"] == list(ledger_module.OUTPUTS)
    assert claim["properties"]["status"]["enum"] == list(ledger_module.STATUSES)
    assert claim["properties"]["strike_display"]["enum"] == list(ledger_module.STRIKE_DISPLAYS)
    assert sorted(claim["properties"]) == sorted(ledger_module.CLAIM_FIELDS)
    assert sorted(schema["$defs"]["design"]["properties"]) == sorted(ledger_module.DESIGN_FIELDS)
    assert sorted(schema["$defs"]["measured"]["properties"]) == sorted(ledger_module.MEASURED_FIELDS)


def test_shipped_ledger_loads():
    ledger = load_ledger(REPOSITORY / "claims" / "ledger.yaml")
    assert {claim.output for claim in ledger.claims} == {"teachback", "aar", "readout"}
