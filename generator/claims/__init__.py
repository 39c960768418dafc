"""The claim stage, by job: what a claim says, what the design fixed before the results, and how
a claim is traced to both.

Modules: `language` (the ledger language: claims, sources, predicates, formats, assertions,
what a reader sees of a sentence, repeats, and the draft importer), `record` (the design record:
design documents as evidence, budgets and reversal triggers, the design freeze, the first-draft
history and what git proves of their order), `tracing` (claim tracing: one view of each claim,
the rule registry, the results files and their re-derivation, the report) and `evidence` (what one
source showed, which all three speak of). The signed memos that keep the gate instant are
generator.memo, shared with the renderer and the lexicon.
"""
