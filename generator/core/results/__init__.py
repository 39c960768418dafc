"""The results file every stage shares: its schema, its paths, its seal, its reading and the
model every reader gets it through. Part of the kernel, since every stage reads it and none owns
it; it reads the rest of the kernel (generator.core), which never reads it, and no stage.

Modules: `schema` (each block declared once: what it holds, how it is keyed, the query set it
belongs to, each field's meaning, kind and unit), `location` (what a path names, read from its
block's declared layout),
`paths` (the path grammar, as in table[search=hybrid].nDCG@5, and the walk that resolves a path),
`upgrade` (a format-1 file, and a path in format 1's spelling, read as the current format),
`rows` (the roles a file's rows play: the baseline, the reranker under decision), `model`
(`ResultsModel`: typed accessors over the declared blocks, which readers use instead of a block's
name), `seal` (the file's name, its seal, and reading it strictly), `builders` (one builder per
block, called by the evaluation stage, the sandbox and the checker's re-derivation alike),
`sample_check` (the release sample against the full query set) and `reference` (the JSON Schema
`results.schema.json` and the page `docs/results.md`, generated from `schema`).
"""

from generator.core.results.model import ResultsModel, comparison_name
from generator.core.results.paths import (MAX_ECHO_CHARS, MAX_LISTED, MISSING, ROW_IDENTITY_KEYS, PathSyntaxError,
                                          Resolution, Step, clip, cost_block, excerpt, lookup, parse_path, path_text,
                                          resolve)
from generator.core.results.seal import (MAX_NUMBER_CHARS, MAX_RESULTS_BYTES, MAX_RESULTS_DEPTH, RESULTS_NAME, SEAL_KEY,
                                         JSONValueError, Results, UnsealableError, canonical_bytes, parse_results_json,
                                         read_results, seal, seal_problem, strict_json)

__all__ = ["MAX_ECHO_CHARS", "MAX_LISTED", "MAX_NUMBER_CHARS", "MAX_RESULTS_BYTES", "MAX_RESULTS_DEPTH", "MISSING",
           "RESULTS_NAME", "ROW_IDENTITY_KEYS", "SEAL_KEY", "JSONValueError", "PathSyntaxError", "Resolution",
           "Results", "ResultsModel", "Step", "UnsealableError", "canonical_bytes", "clip", "comparison_name",
           "cost_block", "excerpt", "lookup", "parse_path", "parse_results_json", "path_text", "read_results",
           "resolve", "seal", "seal_problem", "strict_json"]
