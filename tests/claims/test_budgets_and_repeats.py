"""One budget, one number (generator.claims.record.triggers) and a trace score that cannot be padded
(generator.claims.language.repeats)."""

from __future__ import annotations

import pytest

from generator.claims.tracing.checker import check_project
from generator.claims.language.repeats import find_repeats, sentence_key
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.project import load_project
from tests.conftest import FUSION, claim, refreeze

BLOCK = "\n```budget\nrerank_p95_milliseconds: 500\n```\n"


def _budget_project(make_project, tmp_path, prose: str):
    root = make_project(tmp_path / "p")
    (root / "design" / "requirements.md").write_text(f"# Budget\n\n{prose}\n{BLOCK}", encoding="utf-8")
    return root


@pytest.mark.parametrize("prose", [
    "A reranker may add at most 500 milliseconds per query at p95.",
    "A reranker may add at most 500 ms per query at p95.",
    "A reranker may add at most half a second per query at p95.",
    "A reranker may add at most five hundred milliseconds per query at p95.",
    "A reranker may add at most 0.5 seconds per query at p95.",
    "The search page must answer within one second at p95.",      # not about the reranker: not the budget
])
def test_prose_that_states_the_budget_agrees_with_its_block(make_project, tmp_path, prose):
    refreeze(_budget_project(make_project, tmp_path, prose))


@pytest.mark.parametrize("prose", [
    "A reranker may add at most 400 milliseconds per query at p95.",
    "A reranker may add at most 400 ms per query at p95.",
    "A reranker may add at most one second per query at p95.",
    "A reranker may add at most four hundred milliseconds per query at p95.",
    "Reranking may spend 5000 milliseconds per query at p95.",
])
def test_prose_that_states_another_budget_is_refused(make_project, tmp_path, capsys, prose):
    root = _budget_project(make_project, tmp_path, prose)
    with pytest.raises(InputError, match="one budget, one number"):
        refreeze(root)
    assert main(["check", "--no-record", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and "design/requirements.md:3:" in err and "budget block (requirements.md" in err


KEYS = [("Hybrid beats dense.", "hybrid beats dense!"),
        ("Hybrid beats dense on nDCG@5.", "On nDCG@5, hybrid beats dense."),
        ("Hybrid reaches {h:.3f}.", "Hybrid really reaches {h}."), ("The **reranker** was not measured.",
                                                                     "The reranker was not measured")]


@pytest.mark.parametrize("first, second", KEYS)
def test_the_same_words_are_one_sentence(first, second):
    assert sentence_key(first) == sentence_key(second)


@pytest.mark.parametrize("first, second", [("Hybrid beats dense.", "Dense beats hybrid sometimes."),
                                           ("Hybrid reaches {h:.3f}.", "Hybrid reaches {d:.3f}."),
                                           ("Recall@5 is 0.80.", "Recall@5 is 0.81.")])
def test_other_words_are_another_sentence(first, second):
    assert sentence_key(first) != sentence_key(second)


def test_repeats_are_found_within_an_output_only():
    claims = [("a", "readout", "Hybrid beats dense."), ("b", "readout", "hybrid beats dense!"),
              ("c", "aar", "Hybrid beats dense."), ("d", "readout", "HYBRID beats dense")]
    assert find_repeats(claims) == {"b": "a", "d": "a"}


def test_padding_with_copies_of_a_traced_claim_does_not_lower_the_score(make_project, tmp_path, capsys):
    text = 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."'
    spellings = [text, text, text.upper(),
                 '"Hybrid uses RRF with constant 60 over both top-50 lists," the decision records say.', f"*{text}*"]
    padding = "".join(claim(f"pad-{number}", spelling, FUSION) for number, spelling in enumerate(spellings))
    padding += claim("guess", "Nothing supports this.", output="aar", section="why")
    root = make_project(tmp_path / "p", extra_claims=padding)
    report = check_project(load_project(root))
    plain = check_project(load_project(make_project(tmp_path / "q", extra_claims=claim(
        "guess", "Nothing supports this.", output="aar", section="why"))))
    # rrf-constant already says it: all five copies repeat it and count for nothing.
    assert [result.claim.id for result in report.repeated()] == [f"pad-{n}" for n in range(5)]
    assert (report.untraceable, report.total) == (plain.untraceable, plain.total)
    assert report.by_output == plain.by_output
    assert main(["check", "--no-record", str(root)]) == 1
    out = capsys.readouterr().out
    assert "claim pad-0 (factual): repeats claim rrf-constant of the same output word for word: counted once" in out


def test_a_repeat_that_does_not_trace_still_fails(make_project, tmp_path):
    extra = claim("one", "Nothing supports this.", output="aar", section="why") + claim(
        "two", "nothing supports THIS", output="aar", section="why")
    report = check_project(load_project(make_project(tmp_path / "p", extra_claims=extra)))
    assert [result.claim.id for result in report.failing()] == ["one", "two"]
    assert report.untraceable == 1 and not report.ok
