"""The claim stage: the ledger, and the checker that proves each claim against its evidence.

Modules: `ledger` (the claim model and its loader), `draft` (import-draft), `predicates` (the safe
expression language), `formats` (the allowed value formats), `evidence` (what one source showed),
`visible` (a claim's text as the reader sees it), `design` (quotes in frozen design documents),
`measured` (values in results files), `rederive` (every recorded figure recomputed from run files
and judgements), `attribution` (a value shown only beside the row, query and query set it belongs
to), `statistic` (a value named as the statistic its path says it is), `subjects` (a source
supports only what it speaks of), `triggers` (budgets and reversal triggers, evaluated with three-
valued logic), `checker` (one claim, the whole project), `freeze` (the design freeze log: what
results existed at each freeze, what each amendment moved), `history` (the first-draft trace
history), `anchoring` (what git proves of the order of design, first draft and results), `repeats`
(a sentence said twice counts once), `identifiers` (which digit-bearing tokens are ids of the
results, the dataset or the ledger), `memo` (signed memos of the gate's costliest pure
computations) and `report` (what a check found, as text, JSON and GitHub annotations).
"""
