"""The render stage: readout.html, TEACHBACK.md and AAR.md from the checked ledger and results.

Modules: `values` (formatting a results value), `doors` (escaping and marking every emitted
value), `labels` (the label registry), `sources` (each claim's evidence as a reader sees it),
`views` (what templates receive), `tables` (the results tables they receive: rows, costs, the frontier,
all pairs, per query), `baseline` (the since_baseline block: the change since the
committed baseline file, read without git), `twins` (an int8 reranker beside its fp32 twin),
`shell` (the page the package owns: the order of every output, the content slots a team fills, a
page of the project's own marked as not verified), `theme` (a team's declared colours, font and
sizes, validated), `disclosure` (the blocks the tool owns, rendered by the package), `bytecode`
(compiled templates kept as signed memos),
`amendments` (one line per post hoc decision and the diff of each amended rule), `charts` (inline SVG), `svg` (the styles,
layout and axes every chart is drawn with), `orphans` (the scan that proves every
visible word was emitted on purpose), `stamps` (build stamps, `render --check` and the files under
outputs/ the tool did not write), `context` (what one output's page receives), `renderer`
(the orchestration), `export` (`readout export`: the rows table as CSV or LaTeX) and `summary`
(the README's verdict summary, rendered from the results).
"""
