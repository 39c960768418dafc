"""Storage and failure: how the package reads and writes files, takes locks, remembers work and
names what went wrong. Every other subpackage reads it; it reads none of them (only the package's
version, for the memo's fingerprint).

Modules: `errors` (the exceptions library code raises and the CLI maps to exit codes, and the
clipping of an echoed value), `fileio` (hashes and atomic writes), `bounded_reads` (the one bounded
reader every input goes through), `paths` (a path as a reader sees it, and naming the file behind
an unexpected error), `locks` (one writer per outputs directory, the records lock of claims/, and
the lock of a cache entry made of two files),
`safe_yaml` (the bounded YAML composer with line numbers) and `memo` (the signed memos that keep
the gate instant: a re-derivation, an orphan scan, a compiled template or a text's word matches
remembered by the sha256 of everything it read).
"""
