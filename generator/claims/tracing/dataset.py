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

from generator.core.textlines import count_records
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_file
from generator.storage.memo import default_memo
from generator.core.results import Results
from generator.core.results.model import corpus_input

# The files beside a results file that it vouches for (generator.claims.tracing.rederive.SIDE_FILES
# says how each is derived).
SIDE_FILE_NAMES = ("acquisition_funnel.json", "stage_boundary.json", "run_manifest.json")


def _documents_in(corpus: Path, sha256: Any) -> int | None:
    """The documents of a corpus file (plain or .gz) whose bytes have `sha256`, else None.

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
    count = functools.partial(_count_documents, Path(path), sha256)
    if time.time_ns() - max(identity[3], identity[4]) < _SETTLED_SECONDS * 1_000_000_000:
        return count()
    return default_memo().remembered("corpus documents", {"path": path, "identity": list(identity), "sha256": sha256},
                             count)


def _count_documents(corpus: Path, sha256: str) -> int | None:
    if sha256_file(corpus) != sha256:
        return None
    try:
        return count_records(corpus)
    except InputError:
        return None   # unreadable now: evaluate says why; the count is not what check decides on


def project_problem(results: Results, project_root: Path, skip_rerank_reason: str | None) -> str | None:
    """What a results file records that its project can still say: the corpus size, counted in
    the dataset when the manifest's corpus file is there with the recorded sha256, and the reason
    a rerank row was skipped, which readout.yaml gives. None when both agree (or cannot be read)."""
    model = results.model
    folder = model.manifest.get("data_directory")
    recorded = corpus_input(model.manifest_block("inputs"))
    if isinstance(folder, str) and recorded is not None and model.documents is not None:
        name, entry = recorded
        corpus = (project_root / folder / name)
        counted = _documents_in(corpus, entry.get("sha256")) if corpus.is_file() else None
        if counted is not None:
            if counted != model.documents:
                return f"documents says {model.documents:,}, but the dataset's {name} holds {counted:,} documents"
    if skip_rerank_reason is not None:
        roles = model.roles
        row = model.row(roles.rerank) if roles.rerank else None
        if row is not None and row.get("measured") is False and row.get("not_measured_reason") != skip_rerank_reason:
            return (f"table[search={roles.rerank}].not_measured_reason is not the reason readout.yaml gives "
                    f"(evaluate.skip_rerank_reason: {skip_rerank_reason[:60]!r})")
    return None
