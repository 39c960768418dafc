"""The design record: what was fixed before the results, and what git proves of the order.

Modules: `design` (quotes in frozen design documents), `quotable_units` (a design document's
Markdown as a reader sees it, cut into sentences, list items, table cells and headings), `fences`
(the fenced blocks of the design documents, found and read as YAML), `design_rules` (the budget
and trigger blocks read and validated, the prose held to the budgets), `triggers` (budgets and
reversal triggers, evaluated with three-valued logic), `regression_block` (the design's regression
block read and validated), `freeze` (the design freeze log: what results existed at each freeze,
what each amendment moved), `freeze_check` (what check holds the freeze to: the design against
it, the log against itself), `frozen_rules` (what the freeze says of one rule: when a decision's
rule or the regression block was set or moved, before or after the results), `noninferiority`
(the regression block evaluated: each row and metric's paired change since a baseline, with its
verdict against the margin), `history` (the first-draft trace history), `git_questions` (each git
question asked once per check, and git that cannot answer told from no history) and `anchoring`
(what git proves of the order of design, first draft and results).
"""
