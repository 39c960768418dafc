"""Claim frames: the sentences that carry a result, written by the package from the computed
result rather than by the author, so a sentence cannot say more than was computed.

Modules: `spec` (what a frame is in the ledger: its kind, rows, metric, statistic and thresholds),
`thresholds` (the design's typed thresholds, and when the freeze fixed each), `readings` (a frame
computed on the results and the design: the facts that choose its words, and its figures),
`present` (how the tool shows a figure: its unit, its sign, the decimals that decide) and
`phrasing` (the sentence in a language, from the templates in phrasings/LANG.yaml).
"""
