"""`readout import-draft`: a Markdown draft becomes one unsourced claim per sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.commands.cli import main
from generator.claims.language.draft import draft_sentences, guess_kind
from generator.claims.language.ledger_loader import load_ledger

DRAFT = """\
# After-action review

## What we expected

We expected the reranker to lift nDCG@5, e.g. by a visible margin. Hybrid fusion should help too.

## What happened

- The rerank row was not measured because no cross-encoder could load.
- Hybrid reached 0.603 on {20} queries.

```
code is skipped. Really.
```

| table | skipped |
| --- | --- |

## Next

We should run the 300-query check next.
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "draft.md").write_text(DRAFT)
    return tmp_path


def test_sentences_split_with_headings_and_skip_code_and_tables():
    assert draft_sentences(DRAFT) == [
        ("What we expected", "We expected the reranker to lift nDCG@5, e.g. by a visible margin."),
        ("What we expected", "Hybrid fusion should help too."),
        ("What happened", "The rerank row was not measured because no cross-encoder could load."),
        ("What happened", "Hybrid reached 0.603 on {20} queries."),
        ("Next", "We should run the 300-query check next."),
    ]


@pytest.mark.parametrize("sentence, kind", [
    ("We should run the 300-query check next.", "recommendation"),
    ("It failed because no model loaded.", "causal"),
    ("Rerank p95 is 120 ms.", "performance"),
    ("Hybrid beats dense.", "evaluative"),
    ("The corpus has 5,183 documents.", "factual"),
])
def test_kind_guess(sentence, kind):
    assert guess_kind(sentence) == kind


def test_import_creates_ledger_with_unsourced_claims(workdir, capsys):
    assert main(["import-draft", "draft.md", "--output", "aar", "--ledger", "claims/ledger.yaml"]) == 0
    out = capsys.readouterr().out
    ledger = load_ledger(workdir / "claims" / "ledger.yaml")
    assert [c.id for c in ledger.claims] == [
        "aar-we-expected-the-reranker-to-lift",
        "aar-hybrid-fusion-should-help-too",
        "aar-the-rerank-row-was-not-measured",
        "aar-hybrid-reached-0-603-on-20",
        "aar-we-should-run-the-300-query",
    ]
    assert [c.section for c in ledger.claims] == ["what-we-expected", "what-we-expected", "what-happened",
                                                   "what-happened", "next"]
    assert all(c.status == "active" and not c.sources and c.output == "aar" for c in ledger.claims)
    assert ledger.claims[3].text == "Hybrid reached 0.603 on {{20}} queries."
    assert ledger.claims[3].placeholders == ()
    assert out.splitlines()[-1].startswith("Imported 5 claims into claims/ledger.yaml.")
    assert out.splitlines()[0] == ("claims/ledger.yaml:3: claim aar-we-expected-the-reranker-to-lift (evaluative, "
                                   "section what-we-expected): added with no source")


def test_import_twice_is_stable_and_appends_only_new_sentences(workdir, capsys):
    main(["import-draft", "draft.md", "--output", "aar", "--ledger", "claims/ledger.yaml"])
    first = (workdir / "claims" / "ledger.yaml").read_text()
    assert main(["import-draft", "draft.md", "--output", "aar", "--ledger", "claims/ledger.yaml"]) == 0
    assert (workdir / "claims" / "ledger.yaml").read_text() == first
    assert "Imported 0 claims" in capsys.readouterr().out
    (workdir / "draft.md").write_text(DRAFT + "\nHybrid fusion should help too, again.\n")
    main(["import-draft", "draft.md", "--output", "aar", "--ledger", "claims/ledger.yaml"])
    second = (workdir / "claims" / "ledger.yaml").read_text()
    assert second.startswith(first)
    assert [c.id for c in load_ledger(workdir / "claims" / "ledger.yaml").claims][-1] == \
        "aar-hybrid-fusion-should-help-too-again"


def test_import_keeps_existing_claims_and_comments_and_makes_ids_unique(workdir):
    ledger = workdir / "claims" / "ledger.yaml"
    ledger.parent.mkdir()
    ledger.write_text("# my ledger\nversion: 1\nclaims:\n  - id: aar-hybrid-fusion-should-help-too\n"
                      "    output: aar\n    section: why\n    kind: factual\n    text: Other words.\n")
    assert main(["import-draft", "draft.md", "--output", "aar", "--ledger", str(ledger)]) == 0
    text = ledger.read_text()
    assert text.startswith("# my ledger\nversion: 1\nclaims:\n  - id: aar-hybrid-fusion-should-help-too\n")
    ids = [c.id for c in load_ledger(ledger).claims]
    assert "aar-hybrid-fusion-should-help-too-2" in ids
    assert len(ids) == len(set(ids)) == 6


def test_import_into_empty_claims_list(workdir):
    ledger = workdir / "ledger.yaml"
    ledger.write_text("version: 1\nclaims: []\n")
    assert main(["import-draft", "draft.md", "--output", "teachback", "--ledger", str(ledger)]) == 0
    assert len(load_ledger(ledger).claims) == 5


def test_import_missing_draft_exits_2(workdir, capsys):
    assert main(["import-draft", "nope.md", "--output", "aar", "--ledger", "l.yaml"]) == 2
    assert capsys.readouterr().err == "Error: nope.md: draft not found\n"
    assert not Path("l.yaml").exists()


def test_import_into_broken_ledger_exits_2_and_leaves_it(workdir, capsys):
    ledger = workdir / "ledger.yaml"
    ledger.write_text("version: 1\nclaims:\n  - id: [\n")
    assert main(["import-draft", "draft.md", "--output", "aar", "--ledger", str(ledger)]) == 2
    assert ledger.read_text() == "version: 1\nclaims:\n  - id: [\n"
    assert "not valid YAML" in capsys.readouterr().err
