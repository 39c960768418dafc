"""Claim tracing: each claim proved against the design record and the results.

Modules: `checker` (one claim, the whole project), `context` (what every claim of one check
shares), `view` (one view of a claim, built once, that every rule reads), `rules` (the rule
registry, one module per family), `naming` (how a sentence names rows, queries and values),
`measured` (values in results files), `rederive` (every recorded figure recomputed from run files
and judgements), `rederive_comparisons` (the paired comparisons drawn again), `rederive_timings`
(what follows from timings: costs, the frontier, the rerank rows), `mismatch` (a recorded value
against the derived one, refused at the first that differs), `shown` (every results file an output, a decision or export shows, re-derived or
refused), `dataset` (what a
results file records that the project's data and settings can still say),
`identifiers` (which digit-bearing tokens are ids of the project) and `report` (what a check
found, as text, JSON and GitHub annotations).
"""
