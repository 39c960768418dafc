"""The canonical text every word rule reads (view.said: NFKC, hidden characters removed,
look-alike letters folded): a verdict in look-alike letters is a verdict, a character nobody sees
is refused wherever a reader would see it, and a sentence said twice counts once however its
source spells it."""

import pytest

from generator.claims.tracing.checker import check_project
from generator.storage.errors import InputError
from generator.project import load_project
from tests.conftest import claim, design, edit_config, measured

QUOTE = design("The cross-encoder reorders the same 50 candidates; nothing enters or leaves.")


@pytest.mark.parametrize("text", [
    "\u0405h\u0456\u0440 the reranker.",                     # Cyrillic S, i, p
    "\uff33\uff48\uff49\uff50 the reranker.",                 # fullwidth
    "\U0001d412\U0001d421\U0001d422\U0001d429 the reranker.",  # mathematical bold
    "D\u0435pl\u03bfy the reranker.",                         # Cyrillic e, Greek omicron
])
def test_a_verdict_in_look_alike_letters_needs_its_decision(make_project, tmp_path, text):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, QUOTE, kind="recommendation"))
    result = check_project(load_project(root)).result("c")
    assert "verdict-licensed" in {finding.code for finding in result.findings}, result.reasons


@pytest.mark.parametrize("char", ["\u00ad", "\u200d", "\u2060", "\ufe0f", "\U000e0041"])
def test_a_character_nobody_sees_is_refused_in_a_claim(make_project, tmp_path, char):
    root = make_project(tmp_path / "p", extra_claims=claim("c", f"Ship{char} the reranker.", QUOTE))
    with pytest.raises(InputError) as raised:
        check_project(load_project(root))
    assert f"U+{ord(char):04X}" in str(raised.value)


@pytest.mark.parametrize("title", ["\u0405h\u0456\u0440 the reranker", "Ship\u00adthe reranker",
                                   "Significant gains", "Hybrid on par with dense"])
def test_a_section_title_that_asserts_is_refused(make_project, tmp_path, title):
    root = make_project(tmp_path / "p")
    edit_config(root, lambda data: data["outputs"]["readout"]["sections"][0].update(title=title))
    with pytest.raises(InputError):
        load_project(root)


HYBRID = {"h": "table[search=hybrid].nDCG@5"}


@pytest.mark.parametrize("spelling", [
    "Hybrid's nDCG@5 is {other:.3f}.",                         # a placeholder renamed
    "H\u0443brid's nDCG@5 is {h:.3f}.",                         # a Cyrillic y
    "\uff28ybrid's nDCG@5 is {h:.3f}.",                         # a fullwidth H
])
def test_a_sentence_said_twice_counts_once(make_project, tmp_path, spelling):
    values = {"other": HYBRID["h"]} if "{other" in spelling else HYBRID
    root = make_project(tmp_path / "p", extra_claims=claim("twice", spelling, measured(values), output="aar",
                                                           section="happened", kind="performance"))
    report = check_project(load_project(root))
    assert report.result("twice").repeats == "happened-hybrid"
    assert report.total == len(report.results) - 1


def test_a_different_sentence_counts(make_project, tmp_path):
    root = make_project(tmp_path / "p", extra_claims=claim("other", "Dense reached nDCG@5 {d:.3f}.",
                                                           measured({"d": "table[search=dense].nDCG@5"}),
                                                           output="aar", section="happened", kind="performance"))
    report = check_project(load_project(root))
    assert report.result("other").repeats is None and report.total == len(report.results)
