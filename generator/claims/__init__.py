"""The claim stage, by job: what a claim says, what the design fixed before the results, and how
a claim is traced to both.

Modules: `frames` (the sentences that carry a result, written by the package from typed frames),
`language` (the ledger language: claims, sources, predicates, formats, what a reader sees of a
sentence, the closed rule's words for free prose, repeats, the draft importer, the upgrade of an
old ledger), `record` (the design record:
design documents as evidence, budgets and reversal triggers, the design freeze, the first-draft
history, the regression block evaluated since a baseline, and what git proves of their order),
`tracing` (claim tracing: one view of each claim,
the rule registry, the results files and their re-derivation, the report) and `evidence` (what one
source showed, which all of them speak of). The signed memos that keep the gate instant are
generator.storage.memo, shared with the renderer and the lexicon.
"""
