"""The claim stage: the ledger, and the checker that proves each claim against its evidence.

Modules: `ledger` (the claim model and its loader), `draft` (import-draft), `predicates` (the
safe expression language), `formats` (the allowed value formats), `evidence` (what one source showed), `visible` (a claim's text as
the reader sees it), `design` (quotes in frozen design documents), `measured` (values in results
files), `rederive` (every recorded figure recomputed from run files and judgements),
`attribution` (a value shown only beside the row, query and query set it belongs to), `triggers`
(budgets and reversal triggers, evaluated with three-valued logic), `checker` (one claim, the
whole project), `freeze` (design freeze and first-draft history) and `report` (what a check
found, as text, JSON and GitHub annotations).
"""
