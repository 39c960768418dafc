"""Paths as a reader sees them: a path shown relative to the working directory, a cache location
shown under `~`, a path resolved with a link loop refused in one line, the cache's home, and the
file named behind an unexpected error (`reading`).
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from generator.storage.errors import InputError


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


def home_directory() -> Path:
    """This user's home directory: `Path.home()`, except that an empty HOME counts as no HOME (the
    password database's home), where `Path.home()` gives "/" and a cache would land in /.cache.
    RuntimeError or KeyError when there is none."""
    if "HOME" in os.environ and not os.environ["HOME"]:
        import pwd

        home = pwd.getpwuid(os.getuid()).pw_dir   # KeyError: a uid the password database does not know
        if not home:
            raise RuntimeError("HOME is empty and this user has no home directory")
        return Path(home)
    return Path.home()


def default_cache_dir() -> Path:
    """Embeddings, rerank scores, cost timings and dataset exports: $READOUT_CACHE or ~/.cache/readout."""
    configured = os.environ.get("READOUT_CACHE")
    if configured:
        return Path(configured).expanduser()
    try:
        return home_directory() / ".cache" / "readout"
    except (RuntimeError, KeyError):
        # No HOME and no home directory for this user (a container's arbitrary uid).
        raise InputError("no home directory to keep the cache in (HOME is not set and this user has none): "
                         "set READOUT_CACHE to a writable directory, or HOME") from None


def display_home_path(path: Path | str) -> str:
    """A cache location as a reader expects it: `~/.cache/readout` for a path below the home
    directory (no user name in a log), otherwise as `display_path` shows it."""
    try:
        home = home_directory().resolve()
        relative = Path(os.path.abspath(path)).relative_to(home)
    except (RuntimeError, KeyError, ValueError, OSError):
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
