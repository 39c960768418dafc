"""A quote must be about the claim (generator.claims.tracing.rules.subjects)."""

from __future__ import annotations

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.conftest import FUSION, claim, design, measured

LIMITS = design("The cross-encoder reorders the same 50 candidates; nothing enters or leaves.")
CASES = [
    ("a quote about the same subject", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."', FUSION, True),
    ("a quote about something else", "Dense reaches the best nDCG@5 of the rows.", FUSION, False),
    ("another subject, another spelling", "The bi-encoder ranks every document.", FUSION, False),
    ("a metric no source names", "Hybrid fuses both lists to lift Recall@5.", FUSION, False),
    ("what was done, with a design quote only", "The cross-encoder was loaded with its trained weights.", LIMITS,
     False),
    ("what was done, another spelling", "The cross-encoder reranked every release query.", LIMITS, False),
    ("what was done, a third spelling", "We measured the cross-encoder on each query.", LIMITS, False),
    ("what the design plans", 'The design: "The cross-encoder reorders the same 50 candidates; nothing enters or '
                              'leaves."', LIMITS, True),
]


@pytest.mark.parametrize("why, text, source, traces", CASES, ids=[case[0] for case in CASES])
def test_a_source_supports_only_what_it_speaks_of(make_project, tmp_path, why, text, source, traces):
    result = check_project(load_project(make_project(tmp_path / "p", extra_claims=claim("c", text, source)))).result("c")
    assert result.traceable is traces, (why, result.reasons)
    if not traces:
        assert any("none of its sources does" in reason or "with no measured source" in reason
                   for reason in result.reasons), result.reasons


def test_a_measured_value_speaks_of_its_row_and_metric(make_project, tmp_path):
    text = "Hybrid reaches nDCG@5 {h:.3f}, its change from dense {d:+.3f}."
    values = measured({"h": "table[search=hybrid].nDCG@5", "d": "table[search=hybrid].delta_nDCG@5_vs_dense"},
                      "d > 0")
    result = check_project(load_project(make_project(tmp_path / "p", extra_claims=claim(
        "c", text, values, kind="evaluative")))).result("c")
    assert result.traceable, result.reasons
