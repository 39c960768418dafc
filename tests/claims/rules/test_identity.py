"""Which model ran and what a count counts (rules/identity.py).

The fixture's rows: dense ran sentence-transformers/all-MiniLM-L6-v2 (manifest.models.dense); the
rerank row asked for BAAI/bge-reranker-v2-m3 and was not measured."""

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.conftest import claim, edit_results, measured

DENSE, HYBRID = "table[search=dense].nDCG@5", "table[search=hybrid].nDCG@5"
TRAINING = "manifest.models.rerank.training"


def check(root, text, values, kind="factual"):
    from generator.claims.language.ledger_loader import load_ledger  # noqa: F401  (the ledger is read by check)
    ledger = root / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8") + "".join(
        "  " + line + "\n" for line in claim("c", text, measured(values), kind=kind).splitlines()), encoding="utf-8")
    return check_project(load_project(root)).result("c")


def codes(result) -> set[str]:
    return {finding.code for finding in result.findings}


@pytest.mark.parametrize("text", [
    "Hybrid, built on BAAI/bge-reranker-v2-m3, reaches nDCG@5 {h:.3f}.",
    "Dense, which ran bge-reranker-v2-m3, reaches nDCG@5 {d:.3f}.",
    "The dense row's bge model reaches nDCG@5 {d:.3f}.",
    "Dense (intfloat/e5-base-v2) reaches nDCG@5 {d:.3f}.",
])
def test_a_model_that_did_not_run_the_row_is_refused(make_project, tmp_path, text):
    result = check(make_project(tmp_path / "p"), text, {"h": HYBRID} if "{h" in text else {"d": DENSE})
    assert "model-named" in codes(result), result.reasons


@pytest.mark.parametrize("text, values", [
    ("Dense ran sentence-transformers/all-MiniLM-L6-v2 and reaches nDCG@5 {d:.3f}.", {"d": DENSE}),
    ("Dense, a MiniLM bi-encoder, reaches nDCG@5 {d:.3f}.", {"d": DENSE}),
    ("The rerank row's model BAAI/bge-reranker-v2-m3 was not measured: {why}.",
     {"why": "table[search=hybrid+rerank].not_measured_reason"}),
])
def test_the_model_that_ran_the_row_may_be_named(make_project, tmp_path, text, values):
    result = check(make_project(tmp_path / "p"), text, values)
    assert "model-named" not in codes(result), result.reasons


def _trained(root):
    def change(data):
        data["manifest"]["models"]["rerank"]["training"] = {
            "recipe": {"steps": 400, "training_pairs": 20732}, "queries_read": 0, "relevance_judgements_read": 0}
    edit_results(root, change, reseal=True)
    return root


@pytest.mark.parametrize("text", [
    "The reranker was trained on {steps} queries.",
    "The reranker was trained on {steps} training queries.",
    "The reranker was trained on {steps} relevance judgements.",
    "The reranker was trained on {steps} pairs.",
])
def test_a_count_named_by_another_unit_is_refused(make_project, tmp_path, text):
    result = check(_trained(make_project(tmp_path / "p")), text, {"steps": f"{TRAINING}.recipe.steps"})
    assert "count-noun" in codes(result), result.reasons


@pytest.mark.parametrize("text, path", [
    ("The reranker was trained for {n} steps.", f"{TRAINING}.recipe.steps"),
    ("The reranker was trained on {n} pairs.", f"{TRAINING}.recipe.training_pairs"),
    ("The reranker's training read {n} queries.", f"{TRAINING}.queries_read"),
    ("The reranker's training read {n} relevance judgements.", f"{TRAINING}.relevance_judgements_read"),
])
def test_a_count_named_by_its_unit_traces(make_project, tmp_path, text, path):
    result = check(_trained(make_project(tmp_path / "p")), text, {"n": path})
    assert "count-noun" not in codes(result), result.reasons
