"""Side effects at the edge: hashing and atomic writes (reading an input is
generator.storage.bounded_reads; showing a path and naming the file behind an error,
generator.storage.paths).

Every output goes to a temporary file in the target directory and is renamed into place, so a
crash or an error never leaves a half-written file where a reader expects a whole one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from generator.storage.errors import InputError
from generator.storage.paths import display_path

HASH_CHUNK_BYTES = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    """The sha256 of a regular file's bytes, read a chunk at a time; a FIFO or a device (which would
    block or never end) is an OSError naming it, before anything is read."""
    # Opened without waiting (a FIFO has no writer) and judged by what was opened, not by the name.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{_not_regular(mode)}, so it cannot be hashed", str(path))
        os.set_blocking(descriptor, True)
        digest = hashlib.sha256()
        for chunk in iter(lambda: handle.read(HASH_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes (a lone surrogate kept as its own bytes, never an error)."""
    return sha256_bytes(text.encode("utf-8", "surrogatepass"))


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# A temporary file this module writes: `.<target name>.<8 random characters>.tmp` beside the target.
_TEMPORARY = re.compile(r"\A\..+\.[A-Za-z0-9_]{8}\.tmp\Z")


def _replace(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """The one rename every write ends with (a fault-injection test patches it)."""
    os.replace(source, target)


# What marks a readout project's directory (generator.project.CONFIG_NAME).
PROJECT_MARKER = "readout.yaml"
LINK_IN_PROJECT = ("is a symbolic link inside a readout project; readout writes only into the project's own "
                   "directories (a link could send its files anywhere): replace the link with a directory")


def link_inside_project(target: str | os.PathLike) -> Path | None:
    """The first symbolic link among `target`'s directories that lies inside a readout project (a
    directory above it holds readout.yaml), or None. The path is read as written, never resolved:
    a cloned project whose outputs/ or outputs/runs/ is a link must not have its files written
    wherever the link points. Links above every project (the project itself reached through a
    link, /home on another disk) are the user's own arrangement and stay allowed."""
    directories = list(Path(os.path.abspath(target)).parents)   # nearest first
    links = [index for index, directory in enumerate(directories) if os.path.islink(directory)]
    for index in links:
        if any(os.path.isfile(os.path.join(above, PROJECT_MARKER)) for above in directories[index + 1:]):
            return directories[index]
    return None


# NumPy's own words for a short write (`ndarray.tofile`, `np.save` through bm25s): no errno, no
# file, though on a regular file only a full disk or a quota cuts a write short.
_SHORT_WRITE = re.compile(r"(\d+) requested and (\d+) written")


def error_naming_file(error: OSError, target: Path) -> OSError:
    """The same OSError naming the file being written: a full disk or a quota says which output
    it stopped (the bare write() error names no file, and NumPy's short write no errno either)."""
    if error.filename is not None:
        return error
    if error.errno is not None:
        return type(error)(error.errno, error.strerror or os.strerror(error.errno), str(target))
    short = _SHORT_WRITE.search(str(error))
    if short is not None:
        return OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({int(short[2]):,} of {int(short[1]):,} bytes "
                                     "written)", str(target))
    return OSError(None, str(error) or type(error).__name__, str(target))


class Temporary:
    """A temporary file (or staging directory) and the open descriptor whose lock says its writer
    is alive. The lock is flock's, so the kernel drops it with the process however it ends: a
    temporary nobody holds locked was left by a killed writer, and `remove_stale_temporaries` takes
    it away while a live writer's, in this or another process, is never touched."""

    def __init__(self, name: str, held: int | None):
        self.name = name
        self._held = held

    def release(self) -> None:
        if self._held is not None:
            os.close(self._held)
            self._held = None


def _hold(fd: int) -> int | None:
    """A descriptor of `fd`'s file holding its writer's lock, or None where flock is not supported
    (some network file systems: a sweep there cannot lock either, so it removes nothing)."""
    import fcntl

    held = os.dup(fd)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
    except OSError:
        os.close(held)
        return None
    return held


def held_temporary_directory(directory: Path, prefix: str) -> Temporary:
    """A new staging directory `<prefix>XXXXXXXX.tmp` in `directory`, held like a temporary file."""
    import tempfile

    while True:
        name = tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=directory)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY)
        try:
            held = _hold(fd)
            alive = os.path.isdir(name) and os.stat(name).st_ino == os.fstat(fd).st_ino
        finally:
            os.close(fd)
        if alive:
            return Temporary(name, held)
        # A sweep took it in the instant between its creation and the lock: make another.
        if held is not None:
            os.close(held)


def _write_temporary(target: Path, data: bytes) -> Temporary:
    import tempfile   # here, not at the top: a check writes nothing and need not load it

    link = link_inside_project(target)
    if link is not None:
        raise InputError(LINK_IN_PROJECT, path=display_path(link))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_once(target.parent)
        while True:
            fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            held = _hold(fd)
            if os.fstat(fd).st_nlink:
                break
            # A sweep took it in the instant between its creation and the lock: make another.
            os.close(fd)
            if held is not None:
                os.close(held)
    except OSError as error:
        raise error_naming_file(error, target) from None
    temporary = Temporary(tmp_name, held)
    with _removed_on_failure(temporary, target):
        # mkstemp creates 0600; outputs are ordinary files, so apply the usual umask instead.
        os.fchmod(fd, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    return temporary


@contextmanager
def _removed_on_failure(temporary: Temporary, target: Path) -> Iterator[None]:
    """The temporary file removed if the block fails; an OSError then names the file being written."""
    try:
        yield
    except OSError as error:
        _discard(temporary)
        raise error_naming_file(error, target) from None
    except BaseException:
        _discard(temporary)
        raise


def _discard(temporary: Temporary) -> None:
    _unlink_quietly(temporary.name)
    temporary.release()


def _unlink_quietly(name: str | os.PathLike) -> None:
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass


@contextmanager
def staged_file(path: str | os.PathLike, *, commit_lock: Any = None,
                before_commit: Callable[[], None] | None = None) -> Iterator[str]:
    """A temporary file beside `path` for the block to fill (by name: a memory map, a library's
    own writer), renamed onto `path` when the block ends and removed if it raises: a file too
    large to hold in memory is still written whole or not at all. `before_commit` runs just
    before the rename, both under `commit_lock` when one is given (a two-file entry's metadata)."""
    target = Path(path)
    temporary = _write_temporary(target, b"")
    with _removed_on_failure(temporary, target):
        yield temporary.name
        with open(temporary.name, "rb+") as handle:
            os.fsync(handle.fileno())
        with commit_lock if commit_lock is not None else nullcontext():
            if before_commit is not None:
                before_commit()
            _replace(temporary.name, target)
    temporary.release()


def reserve_space(path: str | os.PathLike) -> None:
    """Allocate every block of a file that is already its full size (a sparse file, such as a new
    memory map), so that a full disk is an OSError here, naming the file, and never a SIGBUS when a
    page of the map is first written."""
    with open(path, "rb+") as handle:
        size = os.fstat(handle.fileno()).st_size
        try:
            os.posix_fallocate(handle.fileno(), 0, size)
        except OSError as error:
            if error.errno in (errno.EOPNOTSUPP, errno.EINVAL):
                return   # a file system without preallocation: nothing can be reserved ahead
            raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    target = Path(path)
    temporary = _write_temporary(target, data)
    try:
        _replace(temporary.name, target)
    except BaseException:
        _discard(temporary)
        raise
    temporary.release()
    return target


def remove_if_abandoned(path: Path, directories: bool) -> bool:
    """Remove `path` if no writer holds it: its lock is taken first, so a live writer's is kept."""
    import fcntl

    flags = os.O_RDONLY | os.O_NOFOLLOW | (os.O_DIRECTORY if directories else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False   # held by a live writer (or no locks here: then nothing is known)
        if directories:
            shutil.rmtree(path, ignore_errors=True)
        else:
            _unlink_quietly(path)
        return True
    finally:
        os.close(fd)


def remove_stale_temporaries(directories: Iterable[Path], *, staging_directories: bool = False) -> list[Path]:
    """Delete the temporaries killed writers left in these directories (`.<name>.XXXXXXXX.tmp`
    files, and with `staging_directories` directories of that name too): each one that no live
    writer holds (Temporary). Never follows a link; returns what it removed."""
    removed = []
    for directory in sorted(set(Path(d) for d in directories)):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            path = directory / name
            if not _TEMPORARY.match(name) or path.is_symlink():
                continue
            if path.is_file() or (staging_directories and path.is_dir()):
                if remove_if_abandoned(path, directories=path.is_dir()):
                    removed.append(path)
    return removed


# The directories this process has swept: a write sweeps its directory once per process, so a
# killed run's leftovers go at the next run's first write there, at the cost of one listing.
_SWEPT: set[tuple[str, bool]] = set()


def sweep_once(directory: Path, *, staging_directories: bool = False) -> None:
    """remove_stale_temporaries on `directory` (absent: nothing to do), the first time this process asks."""
    key = (os.path.abspath(directory), staging_directories)
    if key not in _SWEPT:
        _SWEPT.add(key)
        remove_stale_temporaries([directory], staging_directories=staging_directories)


def write_set(files: Sequence[tuple[Path, bytes]]) -> list[Path]:
    """Write files that belong together, the file that names the others last.

    Every file is first written in full to a temporary beside its target (stale temporaries of a
    killed run are removed first); only then are they renamed into place, in the given order. A
    crash before the first rename leaves the old set untouched; a crash between renames leaves
    new files beside an old last file, whose recorded sha256 values show the mixture (the readers
    refuse it, and the next run replaces the whole set).
    """
    targets = [Path(path) for path, _ in files]
    if len(set(targets)) != len(targets):
        raise ValueError("a file set names one file twice")
    remove_stale_temporaries(target.parent for target in targets)
    staged: list[Temporary] = []
    try:
        for target, (_, data) in zip(targets, files):
            staged.append(_write_temporary(target, data))
        for temporary, target in zip(staged, targets):
            _replace(temporary.name, target)
            temporary.name = ""
    except BaseException:
        for temporary in staged:
            if temporary.name:
                _unlink_quietly(temporary.name)
        raise
    finally:
        for temporary in staged:
            temporary.release()
    return targets


# What a file is when it is not a regular one: a hash refuses it, and so does the reader of every
# input (generator.storage.bounded_reads), by what it is.
_KINDS_OF_FILE = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                  (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    for test, what in _KINDS_OF_FILE:
        if test(mode):
            return f"is {what}, not a regular file"
    return None if stat.S_ISREG(mode) else "is not a regular file"


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def dumps_json(value: Any) -> str:
    """Stable JSON: sorted keys, two-space indent, trailing newline, NaN refused."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_json(path: str | os.PathLike, value: Any) -> Path:
    return atomic_write_text(path, dumps_json(value))
