"""What a results file records that its project can still say, besides its own derivation: the
corpus size, counted in the dataset when the manifest's corpus file is there with the recorded
sha256, and the reason a rerank row was skipped, which readout.yaml gives. Kept apart from the
derivation (generator.claims.tracing.rederive) so that a check whose derivations are remembered
never loads it."""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

from generator.fileio import sha256_bytes, sha256_file
from generator.memo import default_memo
from generator.results import Results

# The files beside a results file that it vouches for (generator.claims.tracing.rederive.SIDE_FILES
# says how each is derived).
SIDE_FILE_NAMES = ("acquisition_funnel.json", "stage_boundary.json", "run_manifest.json")


_READ_WHOLE_BYTES = 256 * 1024 * 1024


def _documents_in(corpus: Path, sha256: Any) -> int | None:
    """The non-blank lines of a corpus.jsonl whose bytes have `sha256`, else None.

    Read once per check for every results file that names it, and remembered across checks by
    the file's identity as the kernel keeps it (device, inode, size, modification and change
    times, as git's index does): no write leaves all of them as they were, and the change time
    cannot be set back by any user. A large corpus is hashed once, not at every check."""
    status = corpus.stat()
    return _counted(str(corpus.resolve()), (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
                                            status.st_ctime_ns), str(sha256))


# A file changed less than this long ago may change again within the same timestamp tick
# without its identity showing it ("racy git"): it is counted afresh, not remembered.
_SETTLED_SECONDS = 2


@functools.lru_cache(maxsize=8)
def _counted(path: str, identity: tuple[int, ...], sha256: str) -> int | None:
    count = functools.partial(_count_documents, Path(path), identity[2], sha256)
    if time.time_ns() - max(identity[3], identity[4]) < _SETTLED_SECONDS * 1_000_000_000:
        return count()
    return default_memo().remembered("corpus documents", {"path": path, "identity": list(identity), "sha256": sha256},
                             count)


def _count_documents(corpus: Path, size: int, sha256: str) -> int | None:
    if size <= _READ_WHOLE_BYTES:
        content = corpus.read_bytes()
        if sha256_bytes(content) != sha256:
            return None
        return sum(1 for line in content.split(b"\n") if line.strip())
    if sha256_file(corpus) != sha256:
        return None
    with corpus.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def project_problem(results: Results, project_root: Path, skip_rerank_reason: str | None) -> str | None:
    """What a results file records that its project can still say: the corpus size, counted in
    the dataset when the manifest's corpus file is there with the recorded sha256, and the reason
    a rerank row was skipped, which readout.yaml gives. None when both agree (or cannot be read)."""
    model = results.model
    folder = model.manifest.get("data_directory")
    recorded = model.manifest_block("inputs").get("corpus.jsonl")
    if isinstance(folder, str) and isinstance(recorded, dict) and model.documents is not None:
        corpus = (project_root / folder / "corpus.jsonl")
        counted = _documents_in(corpus, recorded.get("sha256")) if corpus.is_file() else None
        if counted is not None:
            if counted != model.documents:
                return f"documents says {model.documents:,}, but the dataset's corpus.jsonl holds {counted:,} documents"
    if skip_rerank_reason is not None:
        roles = model.roles
        row = model.row(roles.rerank) if roles.rerank else None
        if row is not None and row.get("measured") is False and row.get("not_measured_reason") != skip_rerank_reason:
            return (f"table[search={roles.rerank}].not_measured_reason is not the reason readout.yaml gives "
                    f"(evaluate.skip_rerank_reason: {skip_rerank_reason[:60]!r})")
    return None
