"""The commands: the only code that prints or picks an exit code, over every stage.

Modules: `cli` (the argument parser, the registry of commands, and the one table that maps
exceptions to exit codes: it parses and dispatches), `evaluation` (selftest, evaluate, cost and
train-reranker), `ledger` (check, freeze, import-draft and upgrade-ledger), `reports` (render,
build, sandbox and ceiling), `build` (evaluate or sandbox, then check, then render), `gate` (`readout gate`,
what CI runs: a shallow clone's history fetched, then check and render --check), `regression`
(`readout regress`: the gate's exit code and its text, JSON, GitHub annotations and step summary),
`regression_baseline` (the baseline regress compares with, from git or a committed file,
re-derived), `scaffold` (`readout init`), `starter_files` (the files init writes: readout.yaml,
the README) and `starter_design` (the starter design documents and ledger).
"""
