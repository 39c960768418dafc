"""The render stage: readout.html, TEACHBACK.md and AAR.md from the checked ledger and results.

Modules: `values` (formatting a results value), `doors` (escaping and marking every emitted
value), `labels` (the label registry), `sources` (each claim's evidence as a reader sees it),
`views` (what templates receive), `baseline` (the since_baseline block: the change since the
committed baseline file, read without git), `twins` (an int8 reranker beside its fp32 twin),
`disclosure` (the blocks the tool owns: rendered by the package,
verified on the page), `charts` (inline SVG), `orphans` (the scan that proves every
visible word was emitted on purpose), `stamps` (build stamps and `render --check`), `renderer`
(the orchestration), `export` (`readout export`: the rows table as CSV or LaTeX) and `summary`
(the README's verdict summary, rendered from the results).
"""
