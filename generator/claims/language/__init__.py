"""The ledger language: what a claim can say and how it is written down.

Modules: `ledger` (the claim model), `ledger_loader` (a ledger file read and refused at its first
violation), `ledger_sources` (a claim's sources and the value names they declare), `ledger_fields`
(a field read strictly: known keys, visible text, a name inside its folder), `predicates` (the safe expression language),
`formats` (the allowed value formats), `visible` (a claim's text as the reader sees it), `prose`
(the closed rule's words: what free prose may say beside a result entity), `repeats` (a sentence
said twice counts once), `draft` (import-draft: a Markdown draft turned into unsourced claims)
and `upgrade` (a ledger of the form before frames, converted where it can be).
"""
