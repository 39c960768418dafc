"""The claim stage: the ledger, and the checker that proves each claim against its evidence.

Modules: ledger (the claim model and its loader), draft
(import-draft), predicates (the safe expression language), numbers (the number rule), design
(quotes in frozen design documents), measured (values in results files), checker (one claim,
the whole project), freeze (design freeze and first-draft history), report (what a check
found, as text, JSON and GitHub annotations).
"""
