"""Claim frames: the sentences that carry a result, written by the package from the computed
result rather than by the author, so a sentence cannot say more than was computed.

Modules: `spec` (what a frame is in the ledger: its kind, rows, metric, statistic and thresholds),
`thresholds` (the design's typed thresholds, and when the freeze fixed each), `readings` (a frame
computed on the results and the design: the facts that choose its words, and its figures),
`figures` (what a computed frame holds: its figures, facts, evidence or problem),
`paired_readings` (the kinds read from a paired comparison: a change, equivalence,
non-inferiority, power), `row_readings` (the kinds read from what a file records of its rows:
a value, a recorded field, the ceiling, the diagnosis, a cost, a budget, the frontier),
`present` (how the tool shows a figure: its unit, its sign, the decimals that decide) and
`phrasing` (the sentence in a language, from the templates in phrasings/LANG.yaml).
"""
