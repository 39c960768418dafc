"""The ledger language: what a claim can say and how it is written down.

Modules: `ledger` (the claim model and its loader), `assertions` (what a claim asserts, in a form
the checker computes), `predicates` (the safe expression language), `formats` (the allowed value
formats), `visible` (a claim's text as the reader sees it), `repeats` (a sentence said twice
counts once) and `draft` (import-draft: a Markdown draft turned into unsourced claims).
"""
