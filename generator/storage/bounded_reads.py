"""The one bounded reader every input goes through: how much each kind of input may hold, and
what is never read (a symbolic link leading out of its project, a FIFO, a device, a socket, a
directory), decided before anything is opened and again on what was opened.
"""

from __future__ import annotations

import os
from pathlib import Path

from generator.storage.errors import InputError, clip
from generator.storage.fileio import HASH_CHUNK_BYTES, PROJECT_MARKER, _not_regular
from generator.storage.paths import display_path


# --- reading an input: one bounded reader ---------------------------------------------------------

_MiB = 1024 * 1024
# The most each kind of input may hold: far above any file the tool writes or a team writes by hand,
# far below what would take a runner's memory. A file beyond its bound is refused once bound + 1
# bytes have been read, never by its recorded size (a device says 0).
INPUT_BOUNDS: dict[str, int] = {
    "readout.yaml": 1 * _MiB,
    "ledger": 32 * _MiB,            # generator.storage.safe_yaml.MAX_BYTES: the largest file the checker reads
    "draft": 32 * _MiB,             # the Markdown `import-draft` splits
    # Twice generator.claims.record.design.MAX_DOCUMENT_BYTES (1 MB): an over-long document read
    # within the bound is still refused with its size.
    "design document": 2 * _MiB,
    "design freeze log": 64 * _MiB,  # every frozen text and diff, for years of amendments
    "trace history": 16 * _MiB,     # one ~300-byte line per ledger version: some 50,000 versions
    "results file": 256 * _MiB,     # generator.core.results.MAX_RESULTS_BYTES
    "run file": 1024 * _MiB,        # a TREC run: 7,000 queries x 1,000 documents is ~350 MB
    "judgements": 256 * _MiB,       # a qrels copy beside the runs
    "label registry": 1 * _MiB,
    "sandbox input": 256 * _MiB,    # the L03 sandbox's data files, and its recorded run manifest
    "cache entry": 256 * _MiB,      # a cache entry's JSON (a restored CI cache is an input too)
}


def project_of(path: str | os.PathLike) -> Path | None:
    """The readout project `path` lies in as written (the nearest directory above it holding
    readout.yaml), or None."""
    for directory in Path(os.path.abspath(path)).parents:
        # lexists: a readout.yaml that is itself a link out still marks its project
        if os.path.lexists(os.path.join(directory, PROJECT_MARKER)):
            return directory
    return None


def link_out_of_project(path: str | os.PathLike) -> Path | None:
    """Where `path` really leads when it lies in a project and a symbolic link (of it or of a
    directory below the project) takes it outside that project; None otherwise. Git commits links,
    so a pull request can make any project file a link to /dev/zero or to a file of the runner's."""
    project = project_of(path)
    if project is None:
        return None
    target = Path(os.path.realpath(path))
    try:
        target.relative_to(os.path.realpath(project))
    except ValueError:
        return target
    return None


def input_problem(path: str | os.PathLike) -> str | None:
    """Why `path` may not be read as an input, decided before anything opens it: a symbolic link
    leading out of its project, or anything but a regular file (a FIFO would block a reader for
    ever, a device never ends). None for a file that does not exist: the reader says that."""
    outside = link_out_of_project(path)
    if outside is not None and os.path.lexists(path):
        return (f"is a symbolic link leading out of the project (to {clip(str(outside), 120)}); an input is read only "
                "inside its project: replace the link with the file")
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        return f"cannot be read ({error.strerror or type(error).__name__})"
    return _not_regular(mode)


def read_input(path: str | os.PathLike, kind: str, shown: str | None = None) -> bytes:
    """The bytes of one input file, through the one bounded reader every input reader uses.

    Refused before anything is read (an InputError naming the file): a symbolic link leading out of
    the project, a FIFO, a device, a socket or a directory (`input_problem`), checked again on the
    opened descriptor, so nothing swapped in meanwhile is read either; refused once more than
    INPUT_BOUNDS[kind] bytes have been read. A missing file is FileNotFoundError, for the caller to
    say what is missing and how to make it; any other failure to open is an InputError."""
    shown = shown if shown is not None else display_path(path)
    limit = INPUT_BOUNDS[kind]
    problem = input_problem(path)
    if problem is not None:
        raise InputError(problem, path=shown)
    try:
        # O_NONBLOCK: a FIFO put in place since the check opens without waiting for a writer.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as error:
        raise InputError(f"cannot be read ({error.strerror or type(error).__name__})", path=shown) from None
    with os.fdopen(descriptor, "rb") as handle:
        # What was opened is judged, not the name: a file renamed into place meanwhile (a cache
        # entry's writer) is read whole; anything else swapped in is refused unread.
        problem = _not_regular(os.fstat(handle.fileno()).st_mode)
        if problem is not None:
            raise InputError(problem, path=shown)
        os.set_blocking(handle.fileno(), True)
        chunks, held = [], 0
        while held <= limit:
            chunk = handle.read(min(HASH_CHUNK_BYTES, limit + 1 - held))
            if not chunk:
                break
            chunks.append(chunk)
            held += len(chunk)
    if held > limit:
        raise InputError(f"larger than {_size(limit)}, the most a {kind} may hold: not a {kind} readout wrote or "
                         "a person would write", path=shown)
    return b"".join(chunks)


def _size(limit: int) -> str:
    return f"{limit // _MiB:,} MiB" if limit >= _MiB else f"{limit:,} bytes"


def utf8_text(path: Path, shown: str, kind: str) -> str:
    """A file's text, read by `read_input` as an input of `kind`, or one input error naming the
    line of its first byte that is not UTF-8."""
    data = read_input(path, kind, shown)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte {error.start:,} of the file)", path=shown, line=line) from None


def regular_file_problem(path: str | os.PathLike) -> str | None:
    """Why `path` is not a regular file to read, said by what it is, or None. A FIFO would block
    a reader forever and a device never ends, so both are refused before anything opens them."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "not found"
    except PermissionError:
        return "not readable (permission denied)"
    except OSError as error:
        return f"cannot be read ({error.strerror or type(error).__name__})"
    return _not_regular(mode)
