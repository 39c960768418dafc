"""Recorded versus re-derived (generator.claims.tracing.rederive): what a results file records and `check`
can recompute is recomputed, bit for bit, and a forger who re-seals the file gains nothing; what
cannot be recomputed is labelled so where the reader opens the source."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from generator.render.sources import measured_sentence
from generator.claims.evidence import Evidence
from tests.conftest import claim, edit_config, edit_results, measured

CITE = claim("cite", "Hybrid reaches nDCG@5 {h:.3f}.", measured({"h": "table[search=hybrid].nDCG@5"}),
             kind="performance")
LIFT = "comparisons.hybrid_vs_dense.metrics.nDCG@5"


def _reason(root) -> str:
    result = check_project(load_project(root)).result("cite")
    assert not result.traceable
    return "; ".join(result.reasons)


FORGERIES = [
    pytest.param(lambda c: c.update(ci95_low=0.001, excludes_zero=True, distinguishable=True, agreement="agree"),
                 # its own p-value still says otherwise, so the first figure to fail is the verdict of the two
                 "distinguishable", id="interval-made-to-exclude-zero"),
    pytest.param(lambda c: c.update(ci95_high=c["ci95_high"] + 1e-9), "ci95_high", id="one-endpoint-nudged"),
    pytest.param(lambda c: c.update(p_value=0.001, p_below_0_05=True), "p_value", id="p-value-lowered"),
    pytest.param(lambda c: c.update(ci95_low=0.001, ci95_high=0.3, p_value=0.001, p_below_0_05=True, excludes_zero=True,
                                    distinguishable=True, agreement="agree"), "p_value", id="everything-made-to-agree"),
    pytest.param(lambda c: c.update(seed=c["seed"] + 1), "seed", id="another-seed"),
    pytest.param(lambda c: c.update(interval_method="percentile bootstrap"), "interval_method", id="method-renamed"),
]


@pytest.mark.parametrize("forge, field", FORGERIES)
def test_a_resealed_interval_or_p_value_is_drawn_again_and_refused(make_project, tmp_path, forge, field):
    root = make_project(tmp_path / "p", extra_claims=CITE)
    assert check_project(load_project(root)).result("cite").traceable

    def change(data):
        forge(data["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"])

    edit_results(root, change, reseal=True)
    reason = _reason(root)
    assert "cannot be cited" in reason and LIFT in reason, reason
    assert f"nDCG@5.{field} is " in reason, reason


def test_recorded_resamples_are_the_ones_drawn_with(make_project, tmp_path):
    root = make_project(tmp_path / "p", extra_claims=CITE)
    edit_results(root, lambda data: data["manifest"]["uncertainty"]["interval"].update(resamples=501), reseal=True)
    assert "comparisons." in _reason(root)


def _corpus_lines(documents: int) -> list[str]:
    return [json.dumps({"_id": f"d{n:02d}", "title": "", "text": "x"}) for n in range(documents)]


# Every form the loader reads (generator.evaluate.data): the count is the loader's, not a count of
# LF bytes, so a form the loader reads is never a false "holds N documents".
CORPUS_FORMS = {
    "plain": ("corpus.jsonl", lambda lines: ("\n".join(lines) + "\n").encode()),
    "gzip": ("corpus.jsonl.gz", lambda lines: gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)),
    "cr-only": ("corpus.jsonl", lambda lines: ("\r".join(lines) + "\r").encode()),
    "crlf-no-final-newline": ("corpus.jsonl", lambda lines: "\r\n".join(lines).encode()),
    "bom-and-blank-lines": ("corpus.jsonl",
                            lambda lines: ("\ufeff" + "\n\u00a0\n".join(lines) + "\n \n").encode()),
}


def _with_reachable_data(root, documents: int = 40, form: str = "plain") -> None:
    name, encode = CORPUS_FORMS[form]
    corpus = encode(_corpus_lines(documents))
    (root / "data").mkdir()
    (root / "data" / name).write_bytes(corpus)
    digest = hashlib.sha256(corpus).hexdigest()

    def point(data):
        data["manifest"]["data_directory"] = "data"
        data["manifest"]["inputs"].pop("corpus.jsonl", None)
        data["manifest"]["inputs"][name] = {"sha256": digest, "bytes": len(corpus)}
    edit_results(root, point, reseal=True)


@pytest.mark.parametrize("form", sorted(CORPUS_FORMS))
def test_the_corpus_size_is_counted_in_the_dataset_when_it_is_there(make_project, tmp_path, form):
    from generator.evaluate.data import load_corpus

    root = make_project(tmp_path / "p", extra_claims=CITE)
    _with_reachable_data(root, form=form)
    name = CORPUS_FORMS[form][0]
    assert len(load_corpus(root / "data" / name)) == 40, "the fixture is a corpus the loader reads"
    edit_results(root, lambda data: data.update(documents=40), reseal=True)
    assert check_project(load_project(root)).result("cite").traceable
    edit_results(root, lambda data: data.update(documents=5183), reseal=True)
    assert f"documents says 5,183, but the dataset's {name} holds 40 documents" in _reason(root)


def test_a_skipped_row_gives_the_reason_readout_yaml_gives(make_project, tmp_path):
    root = make_project(tmp_path / "p", extra_claims=CITE)
    edit_config(root, lambda data: data.update(evaluate={"skip_rerank": True,
                                                         "skip_rerank_reason": "no cross-encoder offline"}))
    assert check_project(load_project(root)).result("cite").traceable
    edit_results(root, lambda data: data["table"][3].update(not_measured_reason="it made things worse"),
                 reseal=True)
    assert "not_measured_reason is not the reason readout.yaml gives" in _reason(root)


@pytest.mark.parametrize("path, recorded", [("rerank_cost.p95_milliseconds", True), ("p95_rerank_milliseconds", True),
                                            ("manifest.finished_at", True), ("table[search=hybrid].nDCG@5", False),
                                            ("comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low", False)])
def test_a_source_says_when_its_value_cannot_be_re_derived(path, recorded):
    sentence = measured_sentence(Evidence("measured", path=path, value=1.5), 20)
    assert sentence.endswith("(recorded, not re-derivable)") is recorded
