"""Side effects at the edge: hashing, atomic writes, and naming the file an error came from.

Every output goes to a temporary file in the target directory and is renamed into place, so a
crash or an error never leaves a half-written file where a reader expects a whole one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from generator.errors import InputError

HASH_CHUNK_BYTES = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
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


def _written_file_error(error: OSError, target: Path) -> OSError:
    """The same OSError naming the file being written: a full disk or a quota says which output
    it stopped (the bare write() error names no file)."""
    if error.filename is None and error.errno is not None:
        return type(error)(error.errno, error.strerror or os.strerror(error.errno), str(target))
    return error


def _write_temporary(target: Path, data: bytes) -> str:
    import tempfile   # here, not at the top: a check writes nothing and need not load it

    link = link_inside_project(target)
    if link is not None:
        raise InputError(LINK_IN_PROJECT, path=display_path(link))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise _written_file_error(error, target) from None
    with _removed_on_failure(tmp_name, target):
        # mkstemp creates 0600; outputs are ordinary files, so apply the usual umask instead.
        os.fchmod(fd, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    return tmp_name


@contextmanager
def _removed_on_failure(tmp_name: str, target: Path) -> Iterator[None]:
    """The temporary file removed if the block fails; an OSError then names the file being written."""
    try:
        yield
    except OSError as error:
        _unlink_quietly(tmp_name)
        raise _written_file_error(error, target) from None
    except BaseException:
        _unlink_quietly(tmp_name)
        raise


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
    tmp_name = _write_temporary(target, b"")
    with _removed_on_failure(tmp_name, target):
        yield tmp_name
        with open(tmp_name, "rb+") as handle:
            os.fsync(handle.fileno())
        with commit_lock if commit_lock is not None else nullcontext():
            if before_commit is not None:
                before_commit()
            _replace(tmp_name, target)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    target = Path(path)
    tmp_name = _write_temporary(target, data)
    try:
        _replace(tmp_name, target)
    except BaseException:
        _unlink_quietly(tmp_name)
        raise
    return target


def remove_stale_temporaries(directories: Iterable[Path]) -> list[Path]:
    """Delete the temporary files a killed write left in these directories (one writer per
    outputs/ at a time: a second writer's temporaries would be taken for stale ones)."""
    removed = []
    for directory in sorted(set(Path(d) for d in directories)):
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if _TEMPORARY.match(path.name) and path.is_file() and not path.is_symlink():
                _unlink_quietly(path)
                removed.append(path)
    return removed


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
    staged: list[tuple[str, Path]] = []
    try:
        for target, (_, data) in zip(targets, files):
            staged.append((_write_temporary(target, data), target))
        for number, (tmp_name, target) in enumerate(staged):
            _replace(tmp_name, target)
            staged[number] = ("", target)
    except BaseException:
        for tmp_name, _ in staged:
            if tmp_name:
                _unlink_quietly(tmp_name)
        raise
    return targets


def utf8_text(path: Path, shown: str) -> str:
    """A file's text, or one input error naming the line of its first byte that is not UTF-8."""
    data = path.read_bytes()
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
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
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


def path_option(text: str) -> Path:
    """An argparse type for a path option: an empty string is refused rather than read as the
    working directory."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError("empty path")
    return Path(text)


def display_path(path: Path | str) -> str:
    """`path` relative to the working directory when it lies below it, else as given."""
    try:
        cwd = os.getcwd()
    except OSError:
        return str(path)
    return _display_path(str(path), cwd)


def resolved(path: Path | str) -> Path:
    """`Path.resolve()` that refuses a symbolic link loop in one line on every Python: 3.11
    raises RuntimeError, while 3.13 returns the unresolved path and leaves the loop to whatever
    reads it next (a directory that "does not exist", a file silently skipped)."""
    try:
        result = Path(path).resolve()
    except RuntimeError:
        raise InputError(LINK_LOOP, path=display_path(path)) from None
    try:
        os.stat(result)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise InputError(LINK_LOOP, path=display_path(path)) from None
    return result


LINK_LOOP = "a symbolic link loop; remove or repoint the link"


def default_cache_dir() -> Path:
    """Embeddings, rerank scores, cost timings and dataset exports: $READOUT_CACHE or ~/.cache/readout."""
    configured = os.environ.get("READOUT_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "readout"


def display_home_path(path: Path | str) -> str:
    """A cache location as a reader expects it: `~/.cache/readout` for a path below the home
    directory (no user name in a log), otherwise as `display_path` shows it."""
    try:
        home = Path.home().resolve()
        relative = Path(os.path.abspath(path)).relative_to(home)
    except (RuntimeError, ValueError, OSError):
        return display_path(path)
    return "~" if relative == Path(".") else f"~/{relative.as_posix()}"


@lru_cache(maxsize=4096)
def _display_path(path: str, cwd_text: str) -> str:
    target = Path(path)
    cwd = Path(cwd_text)
    candidates = [Path(os.path.abspath(target))]
    try:
        candidates.append(target.resolve())
    except (OSError, RuntimeError):   # a link loop (RuntimeError on Python 3.11): show it as given
        pass
    for candidate in candidates:
        try:
            return candidate.relative_to(cwd).as_posix()
        except ValueError:
            continue
    return str(target)


@contextmanager
def reading(path: Path | str) -> Iterator[None]:
    """Tag any unexpected exception raised while `path` is processed with that file's name.

    The CLI reports an unexpected exception as one line; with this tag the line names the file
    the user has to look at (a ledger whose aliases explode, a results file nested too deeply).
    The innermost `reading` wins, so the most specific file is named.
    """
    try:
        yield
    except Exception as error:
        if getattr(error, "readout_path", None) is None:
            try:
                error.readout_path = display_path(path)  # type: ignore[attr-defined]
            except AttributeError:  # pragma: no cover - exceptions with __slots__
                pass
        raise
