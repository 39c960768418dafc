"""A design quote must be whole units of its document: whole sentences, list items or table cells of
one section, never a part of one, never code or a diagram, never across a heading."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.claims.record.design import DesignDocument, DesignLibrary, check_design_source, design_files
from generator.claims.record.quotable_units import sentence_spans
from generator.claims.language.ledger import DesignSource
from generator.storage.errors import InputError

PLAN = """\
# Retrieval plan

Hybrid search fuses two lists, e.g. dense and sparse, at a constant of 60. The reranker ships only when its lift is above zero. Recall reached 0.81 with v6.0.0 of the library, i.e. the 2.7 MB build.
It costs approx. 12 seconds per query. Dr. Smith signed it off.

## Models

- **Dense**: `BAAI/bge-small-en-v1.5` by default, see [the model card](https://huggingface.co/BAAI/bge-small-en-v1.5). It is not fine-tuned.
- Sparse: bm25s with English stopwords.
  - The stopword list is the library's own.
- No reranker is loaded offline.

| Row | Depth | Note |
| --- | --- | --- |
| dense | 50 | embeddings *normalised* |
| hybrid | 50 | RRF &amp; keep 50 |

## Topology

```mermaid
flowchart LR
    dense["dense: bi-encoder, top 50"] --> hybrid
```

```python
def fuse(a, b):
    return rrf(a, b, k=60)
```

The checker reads only the frozen design.
"""


@pytest.fixture
def design_dir(tmp_path, monkeypatch):
    directory = tmp_path / "design"
    directory.mkdir()
    (directory / "plan.md").write_text(PLAN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return directory


@pytest.fixture
def plan(design_dir):
    return DesignDocument("plan.md", design_dir / "plan.md")


def reason(design_dir, quote):
    return check_design_source(DesignSource("plan.md", quote, 1), DesignLibrary(design_dir), "c", "ledger").reason


ACCEPTED = [
    # whole sentence, with an abbreviation inside
    ("Hybrid search fuses two lists, e.g. dense and sparse, at a constant of 60.", 3, "Retrieval plan"),
    ("The reranker ships only when its lift is above zero.", 3, "Retrieval plan"),
    # the final full stop may be left out
    ("The reranker ships only when its lift is above zero", 3, "Retrieval plan"),
    # decimals, a version and "i.e." stay inside their sentence
    ("Recall reached 0.81 with v6.0.0 of the library, i.e. the 2.7 MB build.", 3, "Retrieval plan"),
    # two consecutive sentences, and across a line break (the line is the first sentence's)
    ("Hybrid search fuses two lists, e.g. dense and sparse, at a constant of 60. The reranker ships only when "
     "its lift is above zero.", 3, "Retrieval plan"),
    ("Recall reached 0.81 with v6.0.0 of the library, i.e. the 2.7 MB build. It costs approx. 12 seconds per "
     "query.", 3, "Retrieval plan"),
    ("It costs approx. 12 seconds per query.", 4, "Retrieval plan"),
    ("Dr. Smith signed it off.", 4, "Retrieval plan"),
    # a heading, on its own
    ("Models", 6, "Models"),
    # a whole list item, written as the reader sees it or with its Markdown
    ("Dense: BAAI/bge-small-en-v1.5 by default, see the model card. It is not fine-tuned.", 8, "Models"),
    ("**Dense**: `BAAI/bge-small-en-v1.5` by default, see [the model card](https://huggingface.co/BAAI/"
     "bge-small-en-v1.5). It is not fine-tuned.", 8, "Models"),
    # one sentence of a list item
    ("It is not fine-tuned.", 8, "Models"),
    ("Dense: BAAI/bge-small-en-v1.5 by default, see the model card.", 8, "Models"),
    # a nested item
    ("The stopword list is the library's own.", 10, "Models"),
    # consecutive items
    ("Sparse: bm25s with English stopwords. The stopword list is the library's own.", 9, "Models"),
    # table cells: header and body, emphasis dropped, entity decoded
    ("Depth", 13, "Models"),
    ("embeddings normalised", 15, "Models"),
    ("embeddings *normalised*", 15, "Models"),
    ("RRF & keep 50", 16, "Models"),
    ("RRF &amp; keep 50", 16, "Models"),
    # prose after code blocks
    ("The checker reads only the frozen design.", 30, "Topology"),
]


@pytest.mark.parametrize(("quote", "line", "heading"), ACCEPTED)
def test_whole_units_are_found_with_line_and_heading(plan, quote, line, heading):
    assert plan.find(quote) == (line, heading)


def test_markdown_and_plain_quotes_reduce_to_the_same_text(plan):
    assert plan.find("**Dense**: `BAAI/bge-small-en-v1.5` by default, see the model card.") \
        == plan.find("Dense: BAAI/bge-small-en-v1.5 by default, see the model card.") == (8, "Models")


PART = 'quote is part of a unit: quote whole sentences, list items or table cells; the whole unit (line {}): "{}"'
NOT_FOUND = 'quote not found in design/plan.md; closest (line {}): "{}"'
IN_CODE = "quote is inside a code or diagram block (line {}); quote prose"

REFUSED = [
    ("the", PART.format(10, "The stopword list is the library's own.")),
    (".", PART.format(8, "It is not fine-tuned.")),
    # leading words missing
    ("only when its lift is above zero.", PART.format(3, "The reranker ships only when its lift is above zero.")),
    # more than the final full stop left out
    ("The reranker ships only when its lift is above zer",
     PART.format(3, "The reranker ships only when its lift is above zero.")),
    # part of a list item, part of a table cell
    ("by default, see the model card.",
     PART.format(8, "Dense: BAAI/bge-small-en-v1.5 by default, see the model card.")),
    ("keep 50", PART.format(16, "RRF & keep 50")),
    # the meaning flipped: "only" or "not" dropped
    ("The reranker ships when its lift is above zero.",
     NOT_FOUND.format(3, "The reranker ships only when its lift is above zero.")),
    ("It is fine-tuned.", NOT_FOUND.format(8, "It is not fine-tuned.")),
    # one word differs
    ("The reranker ships only when its gain is above zero.",
     NOT_FOUND.format(3, "The reranker ships only when its lift is above zero.")),
    # across a heading, and joining two sections
    ("Dr. Smith signed it off. Models", NOT_FOUND.format(4, "Dr. Smith signed it off.")),
    ("Models Dense: BAAI/bge-small-en-v1.5 by default, see the model card.",
     NOT_FOUND.format(8, "Dense: BAAI/bge-small-en-v1.5 by default, see the model card. It is not fine-tuned.")),
    ("RRF & keep 50 The checker reads only the frozen design.",
     NOT_FOUND.format(30, "The checker reads only the frozen design.")),
    # diagrams and code
    ('dense: bi-encoder, top 50', IN_CODE.format(22)),
    ('dense["dense: bi-encoder, top 50"] --> hybrid', IN_CODE.format(22)),
    ("return rrf(a, b, k=60)", IN_CODE.format(27)),
    ("x" * 2001, "quote is 2,001 characters, longer than 2,000; quote whole sentences, list items or table cells"),
    (" \n ", "quote is empty once its Markdown is reduced to text; quote whole sentences, list items or table cells"),
]


@pytest.mark.parametrize(("quote", "expected"), REFUSED)
def test_refused_quotes_say_why_and_what_to_quote(design_dir, plan, quote, expected):
    assert plan.find(quote) is None
    assert reason(design_dir, quote) == expected


def test_accepted_quote_gives_evidence_with_line_and_heading(design_dir):
    check = check_design_source(DesignSource("plan.md", "It is not\n  fine-tuned.", 1), DesignLibrary(design_dir),
                                "c", "ledger")
    assert check.reason is None
    evidence = check.evidence
    assert (evidence.ok, evidence.document, evidence.line, evidence.heading, evidence.quote) == (
        True, "plan.md", 8, "Models", "It is not fine-tuned.")


def test_closest_gives_the_whole_unit_or_the_most_similar_run(plan):
    assert plan.closest("ships only when") == (3, "The reranker ships only when its lift is above zero.")
    assert plan.closest("The checker reads the frozen design.") == (30, "The checker reads only the frozen design.")


def test_closest_passage_is_cut_at_160_characters(tmp_path):
    sentence = "Word " * 60 + "end."
    (tmp_path / "long.md").write_text(f"# Long\n\n{sentence}\n")
    line, passage = DesignDocument("long.md", tmp_path / "long.md").closest("Word Word")
    assert line == 3 and len(passage) == 160 and passage.endswith("...")


SENTENCES = [
    ("One. Two! Three? Four.", ["One.", "Two!", "Three?", "Four."]),
    ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
    ("It holds (as shown.) Next one.", ["It holds (as shown.)", "Next one."]),
    ("Use e.g. BM25, i.e. sparse, etc. and vs. dense, cf. the paper by Lin et al. Fig. 2 shows it.",
     ["Use e.g. BM25, i.e. sparse, etc. and vs. dense, cf. the paper by Lin et al. Fig. 2 shows it."]),
    ("See No. 5 for approx. 3 runs. Dr. Who agrees.", ["See No. 5 for approx. 3 runs.", "Dr. Who agrees."]),
    ("The answer is no. Then we stop.", ["The answer is no.", "Then we stop."]),
    ("Recall 0.81 at v6.0.0 for 2.7 MB. 20 queries ran.", ["Recall 0.81 at v6.0.0 for 2.7 MB.", "20 queries ran."]),
    ("Lower case follows. then it goes on.", ["Lower case follows. then it goes on."]),
    ("No terminal punctuation", ["No terminal punctuation"]),
]


@pytest.mark.parametrize(("text", "sentences"), SENTENCES)
def test_sentence_splitting(text, sentences):
    assert [text[start:end] for start, end in sentence_spans(text)] == sentences


def test_units_of_the_fixture(plan):
    assert [(unit.kind, unit.line, plan.text[unit.start:unit.end]) for unit in plan.units
            if unit.heading == "Models"] == [
        ("heading", 6, "Models"),
        ("item", 8, "Dense: BAAI/bge-small-en-v1.5 by default, see the model card. It is not fine-tuned."),
        ("sentence", 8, "Dense: BAAI/bge-small-en-v1.5 by default, see the model card."),
        ("sentence", 8, "It is not fine-tuned."),
        ("item", 9, "Sparse: bm25s with English stopwords."),
        ("sentence", 9, "Sparse: bm25s with English stopwords."),
        ("item", 10, "The stopword list is the library's own."),
        ("sentence", 10, "The stopword list is the library's own."),
        ("item", 11, "No reranker is loaded offline."),
        ("sentence", 11, "No reranker is loaded offline."),
        ("cell", 13, "Row"), ("cell", 13, "Depth"), ("cell", 13, "Note"),
        ("cell", 15, "dense"), ("cell", 15, "50"), ("cell", 15, "embeddings normalised"),
        ("cell", 16, "hybrid"), ("cell", 16, "50"), ("cell", 16, "RRF & keep 50"),
    ]


@pytest.mark.parametrize("hidden", [".notes.md", ".drafts/plan.md"])
def test_hidden_file_in_design_is_refused(design_dir, hidden):
    path = design_dir / hidden
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Hidden\n\nNever frozen.\n")
    shown = "design/" + hidden.split("/")[0]
    with pytest.raises(InputError) as raised:
        design_files(design_dir)
    assert str(raised.value) == (f"{shown}: hidden file in design/: every design document is frozen and citable; "
                                 "remove or rename it")


def test_nested_design_documents_are_listed(design_dir):
    (design_dir / "adr").mkdir()
    (design_dir / "adr" / "one.md").write_text("# One\n")
    assert sorted(design_files(design_dir)) == ["adr/one.md", "plan.md"]


def test_document_larger_than_1_mb_is_refused(design_dir):
    big = design_dir / "big.md"
    big.write_text("Word. " * 200_000)
    with pytest.raises(InputError) as raised:
        DesignLibrary(design_dir)
    assert str(raised.value) == ("design/big.md: design document is 1,200,000 bytes, larger than 1 MB "
                                 "(1,000,000 bytes); split it")


def test_code_block_indented_and_html_block_hold_no_units(tmp_path):
    (tmp_path / "d.md").write_text("# D\n\nProse here.\n\n    indented code line\n\n<div>\nhtml text\n</div>\n\n"
                                   "> Quoted prose. Second one.\n")
    document = DesignDocument("d.md", tmp_path / "d.md")
    assert document.find("indented code line") is None
    assert document.code_line("indented code line") == 5
    assert document.code_line("html text") == 8
    assert document.find("Quoted prose.") == (11, "D")
    assert document.find("Quoted prose. Second one.") == (11, "D")
    # a code block breaks the run: prose before and after it do not join
    assert document.find("Prose here. Quoted prose.") is None


def test_real_design_documents_parse(tmp_path):
    repository = Path(__file__).resolve().parents[2]
    for directory in (repository / "design", repository / "examples" / "l03" / "design"):
        for name, path in design_files(directory).items():
            document = DesignDocument(name, path)
            assert document.units, name
            heading = next(unit for unit in document.units if unit.kind == "heading")
            assert document.find(document.text[heading.start:heading.end]) == (heading.line, heading.heading)
