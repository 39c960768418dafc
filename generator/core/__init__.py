"""The shared kernel: the retrieval arithmetic and the specifications every stage reads and no
stage owns. Pure functions and plain data, no torch, sentence-transformers or bm25s (NumPy and
SciPy only inside `uncertainty`, `comparisons` and `power`, which the light commands do not import).

Modules: `metrics` (ranking metrics by name, per query and macro), `fusion` (RRF and min-max),
`signflip` (the exact sign-flip count and wins, ties and losses, in pure Python), `uncertainty`
(paired differences and the sign-flip test), `comparisons` (BCa intervals and the comparisons
block), `power` (the minimum detectable effect, queries needed, equivalence and non-inferiority),
`sample_size` (the fewest queries any paired interval, test or decision is drawn from),
`all_pairs` (every pair of measured rows with Holm's correction), `diagnosis` (candidate
miss or ordering problem), `headroom` (the oracle order of a row's own candidates), `frontier`
(the frontier's specification and the ceiling of a depth's candidates), `runfiles` (TREC run and
qrels files), `textlines` (a dataset file's lines: plain or gzip, any line ends), `ids` (what a query or document id may hold), `rows` (the row specification and the
roles rows play), `options` (what an evaluation is asked to do, every default), `data_source` (how
readout.yaml names a dataset), `selftest` (the scorer against the spec's fixtures), `dataclass` (the
package's dataclass: the standard library's, with comparison, hash and repr shared, not compiled
per class, and what it still compiles remembered), `text` (text as
a reader reads it: characters, numerals, lexicons, verdicts and wording; a subpackage) and
`results` (the results file every stage writes or reads: its schema, paths, seal and model; a
subpackage). The rest of the kernel computes and never reads the results file; the file's blocks
are assembled from it by generator.core.results.builders.
"""
