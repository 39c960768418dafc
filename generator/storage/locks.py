"""One writer at a time: the lock a command holds while it writes a project's outputs, and the lock
under which a cache entry made of two files is written and read.

Outputs are written as sets (generator.storage.fileio.write_set), and a set's writer first removes the
temporaries a killed run left beside its targets (only those no live writer holds:
generator.storage.fileio.Temporary). Two writers of one directory would still mix their sets. So
`evaluate`, `build`, `render` and `sandbox` hold `outputs_lock` on the directory they write for as
long as they run, and a second one stops at once, before it evaluates, renders or writes anything,
with one line naming the holder's pid (exit 2). Waiting instead would leave a second `build` idle for
however long the first one's evaluation takes, only to redo what the first just wrote. `check` and
`render --check` write no output and take no outputs lock; `check --no-record` and `render --check`
take no lock at all and never load filelock.

The lock is filelock's (flock on Unix): a holder killed even by SIGKILL holds nothing, since the
kernel drops its lock with the process, so a lock file left behind never blocks anyone. The holder
removes its lock file (`.readout.lock`, beside the outputs) before it lets go, so a finished run
leaves none; a process that opened that file just before it went finds it unlinked once it gets
the lock, and filelock counts that as not acquired.

Cache entries are single files renamed into place, so processes sharing a cache each read a whole
entry or none (tests/test_concurrency.py races writers against a reader). Two kinds are more than
one file, and are written (and the first also read) under `entry_lock`, which waits for the other
process instead of stopping: the corpus embeddings, an array and its metadata, which a reader could
otherwise take from two different writers; and an `irds:` export, a set whose writer would take
another writer's staged files for a killed run's leftovers (generator.evaluate.pipeline.prepare_data).

A project's records (claims/: the ledger `import-draft` appends to, the design freeze log `freeze`
appends to, the trace history `check` appends to) are each read, changed and written whole. Two
writers at once would each write what they read plus their own change, and the one renamed last
would lose the other's. So every such read-modify-write holds `records_lock` on claims/, the same
lock file as the outputs' (`.readout.lock`, removed by its holder). A second writer waits for the
first, then reads what the first wrote: it takes milliseconds, and both runs keep what they report.
A lock still held after RECORDS_WAIT_SECONDS is one line naming the holder's pid (exit 2), not a
wait without end on a process that something has stopped.
"""

from __future__ import annotations

import os
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

from generator.storage.errors import InputError, ReadoutError
from generator.storage.fileio import LINK_IN_PROJECT, link_inside_project
from generator.storage.paths import display_path

LOCK_NAME = ".readout.lock"
# A cache entry's lock is held for one write or one read of an array; ten minutes is far beyond
# any of them, and short of waiting forever on a lock that something outside readout holds.
ENTRY_WAIT_SECONDS = 600.0
# A records write reads and writes one small file; a minute is far beyond any of them.
RECORDS_WAIT_SECONDS = 60.0
# The holder's pid, a few digits: anything longer in a lock file is not one this module wrote.
_PID_BYTES = 32


class OutputsLocked(ReadoutError):
    """Another process holds the write lock of a directory this command writes."""


class RecordsLocked(ReadoutError):
    """Another process has held the lock of a project's records for longer than a write takes."""


def lock_path(directory: Path) -> Path:
    return Path(directory) / LOCK_NAME


@contextmanager
def outputs_lock(*directories: Path) -> Iterator[None]:
    """Hold the write lock of each directory (made if missing) for the block. A directory another
    process holds raises OutputsLocked at once; then nothing has been written."""
    unique: dict[str, Path] = {}
    for directory in directories:
        unique.setdefault(os.path.realpath(directory), Path(directory))
    with ExitStack() as stack:
        # One order for everyone: two commands that lock the same two directories never each hold one.
        for key in sorted(unique):
            stack.enter_context(_holding(unique[key]))
        yield


@contextmanager
def records_lock(directory: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the lock of a records directory (a project's claims/) for one read-modify-write of a
    file in it, waiting up to `wait` seconds (RECORDS_WAIT_SECONDS) for another process's write to
    finish; past that, RecordsLocked naming the holder, and nothing has been written."""
    with _holding(Path(directory), RECORDS_WAIT_SECONDS if wait is None else wait):
        yield


@contextmanager
def _holding(directory: Path, wait: float = 0.0) -> Iterator[None]:
    from filelock import FileLock, Timeout   # here: only the writing commands load filelock

    path = lock_path(directory)
    link = link_inside_project(path)
    if link is not None:   # the lock file would be made wherever the link points
        raise InputError(LINK_IN_PROJECT, path=display_path(link))
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    ours: list[os.stat_result] = []

    def record(descriptor: int) -> None:
        # The pid, for the line a second writer prints; the inode, so only our own file is removed.
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode("ascii"), 0)
        ours.append(os.fstat(descriptor))

    lock = FileLock(str(path), timeout=wait, on_acquired=record)
    try:
        lock.acquire()
    except Timeout:
        if wait:
            raise RecordsLocked(busy_message(directory, holder_pid(path), wait)) from None
        raise OutputsLocked(busy_message(directory, holder_pid(path))) from None
    try:
        yield
    finally:
        try:
            # Unlinked while still held: whoever opened it meanwhile finds it gone once it locks it.
            if ours and os.path.samestat(os.stat(path), ours[0]):
                os.unlink(path)
        except OSError:
            pass
        finally:
            lock.release()
            if made:   # a command that stopped before writing leaves no empty outputs/ behind
                try:
                    directory.rmdir()
                except OSError:   # not empty: the command wrote its outputs
                    pass


def busy_message(directory: Path, pid: int | None, waited: float = 0.0) -> str:
    holder = f"pid {pid}, " if pid is not None else ""
    how_long = f" and was not let go within {waited:g} s" if waited else ""
    return (f"{display_path(directory)} is being written by another readout process "
            f"({holder}lock {display_path(lock_path(directory))}){how_long}; run this command again once it has "
            "finished")


def holder_pid(path: Path) -> int | None:
    """The pid the holder wrote into its lock file, or None (not written yet, or gone)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(_PID_BYTES).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def entry_lock(path: Path, wait: float = ENTRY_WAIT_SECONDS) -> Iterator[None]:
    """Hold the lock file `path` of one cache entry for the block, waiting for another process's
    write or read to finish. The lock file stays: it is the cache's, and a lock that never goes
    away is one nobody can race to re-create. A cache that cannot hold a lock file (read-only) is
    read without one: nobody can write it either, so nothing can mix under a reader."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path), timeout=wait)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        raise ReadoutError(f"{display_path(path)}: another process has held this cache entry's lock for "
                           f"{wait:.0f} s; run again once it has finished") from None
    except OSError:
        yield
        return
    try:
        yield
    finally:
        lock.release()
