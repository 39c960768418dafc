"""The starter design `readout init` writes: the five design documents of design/ and the claim
ledger, each a short template with the headings the checker reads, and what a project without the
rerank row says in their place.

The ledger's claims have no source, each with a commented source that traces against these
documents; a test keeps every passage the no-rerank variant replaces present in the text it edits.
"""

from __future__ import annotations

DESIGN_DOCUMENTS = ("requirements.md", "decisions.md", "topology.md", "source-map.md", "build-plan.md")


_REQUIREMENTS = """\
# Requirements brief

Replace every paragraph below with your own; keep the headings. Quote whole sentences, list items
or table cells of these documents as the sources of your claims.

## Problem

A search team needs to know whether a cross-encoder reranker earns its CPU time on its own
queries, with evidence anyone can audit.

## What we build

Four rows on the same queries and labels: dense, sparse, hybrid and hybrid+rerank.

## Acceptance

- Every sentence of the reports traces to a frozen design document or a measured value.
- The readout renders only when every claim traces.

## Expectations written before any result

Hybrid fusion should help over dense alone, because exact term matches recover documents the
bi-encoder ranks low. The cross-encoder can only reorder the hybrid candidates.

## Latency budget

A reranker may add at most 500 milliseconds per query at p95 on the release CPU.

```budget
rerank_p95_milliseconds: 500
```

## Limits

- The sample is small: enough to see a direction, not to prove a general win.
"""

_DECISIONS = """\
# Decision records

Each record gives the choice, the alternative it beat, its cost and what would reverse it. A
record's heading starts with its id; a reversal trigger that `readout check` computes sits under
its record in a fenced `trigger` block (format: generator/claims/record/triggers.py).

## D1. Fuse dense and sparse with Reciprocal Rank Fusion

- **Choice:** Reciprocal Rank Fusion with constant 60 over both top-50 lists.
- **Alternative beaten:** a weighted sum of scores, which needs the two score scales calibrated.
- **Cost:** the fused order ignores how far apart the scores are.
- **Reversal trigger:** a score fusion that beats RRF on the same queries.

## D2. A reranker ships only when it pays for itself

- **Choice:** recommend the reranker only when its nDCG@5 lift over hybrid has a paired interval
  above zero and its p95 time per query fits the latency budget.
- **Alternative beaten:** shipping the reranker because cross-encoders usually help.
- **Cost:** the decision waits for a measured rerank row.
- **Reversal trigger:** a measured rerank row whose lift interval clears zero at an affordable
  p95 time.

```trigger
decision: D2
when: lift_low > 0 and lift_p < 0.05 and p95 <= budget
fires: ship the reranker
otherwise: do not ship the reranker
values:
  lift_low: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.ci95_low
  lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.p_value
  p95: rerank_costs.hybrid+rerank.p95_milliseconds
  budget: budget.rerank_p95_milliseconds
```
"""

_TOPOLOGY = """\
# Topology

The same corpus, queries and labels feed all four rows.

```mermaid
flowchart LR
    corpus[("corpus.jsonl")] --> dense["dense: bi-encoder, top 50"]
    corpus --> sparse["sparse: BM25, top 50"]
    dense --> hybrid["hybrid: RRF, keep 50"]
    sparse --> hybrid
    hybrid --> rerank["hybrid+rerank: cross-encoder reorders the same 50"]
    qrels[("qrels/test.tsv")] --> scorer["scorer"]
    rerank --> scorer
    scorer --> results[("outputs/results.json")]
```

## Boundaries

- The reranker sits after fusion: it sees the hybrid candidates and nothing else.
- The checker reads only the results and the frozen design.
"""

_SOURCE_MAP = """\
# Source map

Where every dataset, model and outside fact comes from, and what each may support.

## Data

- The BEIR folder named by `data` in readout.yaml: corpus, queries and relevance labels. Name
  its origin and license here.

## Models

- Dense: the packaged all-MiniLM-L6-v2 offline, or BAAI/bge-small-en-v1.5 where the hub is
  reachable.
- Reranker: BAAI/bge-reranker-v2-m3 where it can be loaded; otherwise the rerank row is not
  measured.

## Context only

- Outside facts that frame the review but support no claim about the results.
"""

_BUILD_PLAN = """\
# Build plan

| Phase | What it produces |
| --- | --- |
| Setup | the dataset in place and the models located |
| Design | these five documents, frozen with `readout freeze` |
| Build | the results, from `readout build` |
| Close-out | every claim traced and the readout rendered |

## Order and gates

- The design is frozen before any result exists, so results cannot reshape it silently.
- The ledger is drafted first, checked once to record the first-draft trace score, and only then
  sourced.
"""

_LEDGER = """\
# The claim ledger: every sentence the reports say, with the evidence that must support it.
# Format: docs/claims.md (frames, free prose, sources). A claim with no source never traces: `readout
# check` exits 1 and `readout build` renders only with --draft, every such claim flagged.
#
# Two kinds of claim. A sentence that carries a result (a value, a comparison, a budget fit, a
# decision, a quote of the design) is a `frame:` the package writes from the computed result, so
# it cannot say more than was computed. Anything else is your own `text:`, shown to readers as the
# author's words; beside a row, a metric or a model it may use only function words and the words
# of the design quotes it cites. Each claim below has no source yet: replace it with the frame in
# its comment (or write your own) and run `readout check`.
version: 1
claims:
  - id: rows-hybrid
    output: teachback
    section: rows
    kind: factual
    text: "Fusion joins the ranked lists."
    # frame: {quote: decisions.md, text: "**Choice:** Reciprocal Rank Fusion with constant 60 over both top-50 lists.", phrasing: choice}
  - id: candidates-fixed
    output: teachback
    section: candidates
    kind: causal
    text: "The last stage reorders the candidates and adds none."
    # frame: {quote: topology.md, text: "The reranker sits after fusion: it sees the hybrid candidates and nothing else.", phrasing: reason}
  - id: expected-hybrid
    output: aar
    section: expected
    kind: causal
    text: "We expected fusion to help over the first list alone."
    # frame: {quote: requirements.md, text: "Hybrid fusion should help over dense alone, because exact term matches recover documents the bi-encoder ranks low.", phrasing: expected}
  - id: next-measure
    output: aar
    section: next
    kind: recommendation
    text: "Measure the last stage where its model loads."
    # frame: {quote: decisions.md, text: "**Cost:** the decision waits for a measured rerank row.", phrasing: reason}
  - id: results-hybrid
    output: readout
    section: results
    kind: evaluative
    text: "Say here how fusion compares with the first list."
    # The package writes the comparison from the results (the direction, the interval, the test,
    # the query set: whether it holds is for your data to say):
    # frame: {comparison: hybrid, against: dense, metric: nDCG@5}
  - id: limits-sample
    output: readout
    section: limits
    kind: factual
    text: "A few queries are enough to see a direction, not to prove a general win."
    # frame: {quote: requirements.md, text: "The sample is small: enough to see a direction, not to prove a general win."}
"""

# A project without a rerank row (`init --no-rerank`) gets no reranker section, chart, decision or
# claim: each passage that speaks of the reranker, and what replaces it.
_WITHOUT_RERANK = {
    "design/requirements.md": [
        ("""A search team needs to know whether a cross-encoder reranker earns its CPU time on its own
queries, with evidence anyone can audit.""", """A search team needs to know whether hybrid search earns its extra index on its own queries,
with evidence anyone can audit."""),
        ("Four rows on the same queries and labels: dense, sparse, hybrid and hybrid+rerank.",
         "Three rows on the same queries and labels: dense, sparse and hybrid."),
        ("bi-encoder ranks low. The cross-encoder can only reorder the hybrid candidates.",
         "bi-encoder ranks low."),
        ("""## Latency budget

A reranker may add at most 500 milliseconds per query at p95 on the release CPU.

```budget
rerank_p95_milliseconds: 500
```

""", ""),
    ],
    "design/decisions.md": [(_DECISIONS[_DECISIONS.index("## D2."):], """\
## D2. Hybrid replaces dense only when it pays for itself

- **Choice:** hybrid replaces dense only when its nDCG@5 lift over dense has a paired interval above zero.
- **Alternative beaten:** switching to hybrid because fusion usually helps.
- **Cost:** a BM25 index is built and searched for every query.
- **Reversal trigger:** a lift interval over dense that clears zero.

```trigger
decision: D2
when: lift_low > 0 and lift_p < 0.05
fires: use hybrid
otherwise: keep dense
values:
  lift_low: comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low
  lift_p: comparisons.hybrid_vs_dense.metrics.nDCG@5.p_value
```
""")],
    "design/topology.md": [
        ("The same corpus, queries and labels feed all four rows.", "The same corpus, queries and labels feed all three rows."),
        ("""    hybrid --> rerank["hybrid+rerank: cross-encoder reorders the same 50"]
    qrels[("qrels/test.tsv")] --> scorer["scorer"]
    rerank --> scorer""", """    qrels[("qrels/test.tsv")] --> scorer["scorer"]
    hybrid --> scorer"""),
        ("- The reranker sits after fusion: it sees the hybrid candidates and nothing else.",
         "- Fusion sees only the documents the two lists found."),
    ],
    "design/source-map.md": [
        ("""- Reranker: BAAI/bge-reranker-v2-m3 where it can be loaded; otherwise the rerank row is not
  measured.
""", "")],
    "claims/ledger.yaml": [
        ("""    text: "The last stage reorders the candidates and adds none."
    # frame: {quote: topology.md, text: "The reranker sits after fusion: it sees the hybrid candidates and nothing else.", phrasing: reason}""",
         """    text: "Fusion adds no document the first lists did not find."
    # frame: {quote: topology.md, text: "Fusion sees only the documents the two lists found.", phrasing: reason}"""),
        ("""    text: "Measure the last stage where its model loads."
    # frame: {quote: decisions.md, text: "**Cost:** the decision waits for a measured rerank row.", phrasing: reason}""",
         """    text: "Say here when fusion takes over from the first list."
    # frame: {quote: decisions.md, text: "**Choice:** hybrid replaces dense only when its nDCG@5 lift over dense has a paired interval above zero.", phrasing: rule}"""),
    ],
}


def _without_rerank(files: dict[str, str]) -> dict[str, str]:
    for name, replacements in _WITHOUT_RERANK.items():
        for old, new in replacements:
            if old not in files[name]:
                raise AssertionError(f"the scaffold's {name} no longer holds {old[:40]!r}")   # a test keeps these
            files[name] = files[name].replace(old, new)
    return files
