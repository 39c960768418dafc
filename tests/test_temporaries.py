"""What a killed or failed write leaves behind, and who takes it away (generator.storage.fileio.Temporary):
every temporary is held locked by its writer, so a sweep removes exactly the ones whose writer is
gone (killed by SIGKILL here, in a child process) and never a live writer's; a full disk is one
line naming the file, with nothing left to keep the disk full; a symbolic link where a BM25 entry
should be is replaced, never followed."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path
from subprocess import PIPE, Popen

import pytest

from generator.storage import fileio
from generator.commands.cli import main
from generator.evaluate.cache import EmbeddingCache
from generator.storage.fileio import atomic_write_text, held_temporary_directory, remove_stale_temporaries

from tests.conftest import run_python, run_tool, start_python

STALE_NAME = ".results.json.AbCdEf12.tmp"


def _child(code: str) -> Popen:
    """A Python child that runs `code` with this checkout's package, prints READY and waits."""
    return start_python("-c", code, stdout=PIPE, text=True)


def _ready(child: Popen) -> None:
    line = child.stdout.readline()
    assert line.strip() == "READY", line


def _killed(child: Popen) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


def _temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


# --- the sweep: dead writers' temporaries go, live writers' stay -----------------------------------


def test_a_temporary_nobody_holds_is_removed_and_a_live_writers_is_kept(tmp_path):
    child = _child(
        "import time\nfrom pathlib import Path\nfrom generator.storage.fileio import _write_temporary\n"
        f"held = _write_temporary(Path({str(tmp_path / 'other.json')!r}), b'being written')\n"
        "print('READY', flush=True)\ntime.sleep(120)\n")
    try:
        _ready(child)
        (tmp_path / STALE_NAME).write_bytes(b"half a file")   # a killed writer's, left unlocked
        [live] = [name for name in _temporaries(tmp_path) if name.startswith(".other.json.")]
        assert remove_stale_temporaries([tmp_path]) == [tmp_path / STALE_NAME]
        assert _temporaries(tmp_path) == [live]        # the live writer's temporary is untouched
        _killed(child)
        assert remove_stale_temporaries([tmp_path]) == [tmp_path / live]
        assert _temporaries(tmp_path) == []
    finally:
        child.kill()


def test_a_sweep_never_follows_or_removes_a_link_or_an_ordinary_file(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep", encoding="utf-8")
    (tmp_path / "d").mkdir()
    os.symlink(outside, tmp_path / "d" / ".x.json.AbCdEf12.tmp")
    (tmp_path / "d" / "results.json").write_text("{}", encoding="utf-8")
    (tmp_path / "d" / ".hidden.tmp").write_text("not ours: no random part", encoding="utf-8")
    (tmp_path / "d" / ".y.json.AbCdEf12.tmp").mkdir()   # a directory: only staging sweeps take those
    assert remove_stale_temporaries([tmp_path / "d"]) == []
    assert outside.read_text(encoding="utf-8") == "keep"
    assert sorted(os.listdir(tmp_path / "d")) == [".hidden.tmp", ".x.json.AbCdEf12.tmp", ".y.json.AbCdEf12.tmp",
                                                  "results.json"]
    assert remove_stale_temporaries([tmp_path / "d"], staging_directories=True) == \
        [tmp_path / "d" / ".y.json.AbCdEf12.tmp"]


def test_the_first_write_into_a_directory_sweeps_it(tmp_path):
    (tmp_path / STALE_NAME).write_bytes(b"x" * 1000)
    atomic_write_text(tmp_path / "note.txt", "hello")
    assert sorted(os.listdir(tmp_path)) == ["note.txt"]


def test_a_writer_swept_in_the_instant_before_its_lock_makes_another_temporary(tmp_path, monkeypatch):
    """The race a sweep could win: the temporary exists, its lock is not yet taken."""
    real_hold = fileio._hold
    swept = []

    def hold_after_a_sweep(fd):
        if not swept:
            swept.extend(remove_stale_temporaries([tmp_path]))
        return real_hold(fd)

    monkeypatch.setattr(fileio, "_hold", hold_after_a_sweep)
    atomic_write_text(tmp_path / "out.txt", "whole")
    assert len(swept) == 1 and (tmp_path / "out.txt").read_text(encoding="utf-8") == "whole"
    assert os.listdir(tmp_path) == ["out.txt"]


# --- each command's own temporaries ----------------------------------------------------------------


def test_a_killed_embedding_write_is_swept_by_the_next_load(tmp_path):
    cache_root = tmp_path / "cache"
    child = _child(
        "import time\nfrom pathlib import Path\nfrom generator.evaluate.cache import EmbeddingCache\n"
        f"cache = EmbeddingCache(Path({str(cache_root)!r}))\n"
        "with cache.writer('k' * 64, (2000, 384), {}) as rows:\n"
        "    rows[:1000] = 0.5\n    print('READY', flush=True)\n    time.sleep(120)\n")
    try:
        _ready(child)
        _killed(child)
    finally:
        child.kill()
    embeddings = cache_root / "embeddings"
    [left] = _temporaries(embeddings)
    assert (embeddings / left).stat().st_size >= 2000 * 384 * 4    # the reserved, never-renamed map
    warnings: list[str] = []
    assert EmbeddingCache(cache_root).load("k" * 64, 2000, warn=warnings.append) is None
    assert _temporaries(embeddings) == [] and warnings == []


def test_a_killed_bm25_build_leaves_a_staging_directory_the_next_run_removes(tmp_path, small_dataset):
    cache_root = tmp_path / "cache"
    child = _child(
        "import time\nfrom pathlib import Path\nfrom generator.evaluate import sparse_index\n"
        "class Slow:\n    def save(self, path, show_progress=False):\n"
        "        (Path(path) / 'params.index.json').write_text('{}')\n"
        "        print('READY', flush=True)\n        time.sleep(120)\n"
        f"sparse_index.SparseIndexCache(Path({str(cache_root)!r})).store('k' * 64, Slow())\n")
    try:
        _ready(child)
        _killed(child)
    finally:
        child.kill()
    sparse = cache_root / "sparse"
    [left] = [name for name in os.listdir(sparse) if name.endswith(".tmp")]
    assert (sparse / left).is_dir()
    from generator.evaluate.data import load_dataset
    from generator.evaluate.retrieval import sparse_rankings

    dataset = load_dataset(small_dataset)
    queries = dict(list(dataset.queries.items())[:3])
    assert sparse_rankings(dataset.documents, queries, 10, cache_dir=cache_root) == \
        sparse_rankings(dataset.documents, queries, 10)
    assert [name for name in os.listdir(sparse) if name.endswith(".tmp")] == []


def test_a_killed_freezes_temporary_is_gone_after_the_next_freeze_even_with_nothing_to_change(
        tmp_path, monkeypatch, capsys):
    root = tmp_path / "p"
    (root / "design").mkdir(parents=True)
    (root / "claims").mkdir()
    (root / "readout.yaml").write_text("title: T\nkind: beir\n", encoding="utf-8")
    (root / "design" / "brief.md").write_text("# Brief\n\nA design.\n", encoding="utf-8")
    (root / "claims" / "ledger.yaml").write_text("version: 1\nclaims: []\n", encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["freeze"]) == 0
    stale = root / "claims" / ".design-freeze.json.Zz9Yy8Xx.tmp"
    stale.write_text('{"half": ', encoding="utf-8")
    assert main(["freeze"]) == 0
    assert "unchanged" in capsys.readouterr().out
    assert sorted(os.listdir(root / "claims")) == ["design-freeze.json", "ledger.yaml"]


# --- a full disk -------------------------------------------------------------------------------------


def test_a_full_disk_while_embeddings_are_reserved_is_an_error_naming_the_entry_and_leaves_nothing(
        tmp_path, monkeypatch):
    def no_space(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "posix_fallocate", no_space)
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(OSError) as raised:
        with cache.writer("k" * 64, (100, 8), {}) as rows:
            rows[:] = 1.0
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.filename == str(tmp_path / "embeddings" / f"{'k' * 64}.npy")
    assert os.listdir(tmp_path / "embeddings") == []


def _small_file_system(tmp_path: Path, size: str) -> Path:
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root (the ENOSPC path is tested without it above)")
    done = run_tool("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    return mount


@pytest.mark.parametrize("rows", [4000])
def test_a_really_full_disk_is_no_sigbus_and_the_next_run_has_its_space_back(tmp_path, rows):
    """A 1 MiB tmpfs and a 6 MiB entry: the old memory-mapped write died of SIGBUS mid-encoding."""
    mount = _small_file_system(tmp_path, "1m")
    try:
        code = ("import sys\nfrom pathlib import Path\nfrom generator.evaluate.cache import EmbeddingCache\n"
                "try:\n"
                f"    with EmbeddingCache(Path({str(mount)!r})).writer('k' * 64, ({rows}, 384), {{}}) as m:\n"
                "        m[:] = 0.25\n"
                "except OSError as error:\n    print(error.errno, error.filename); sys.exit(3)\n")
        done = run_python("-c", code)
        assert done.returncode == 3, (done.returncode, done.stderr[-500:])   # -7 would be SIGBUS
        assert done.stdout.split() == [str(errno.ENOSPC), str(mount / "embeddings" / f"{'k' * 64}.npy")]
        assert os.listdir(mount / "embeddings") == []                         # the space is given back
    finally:
        run_tool("umount", str(mount))


# --- a symbolic link where a BM25 entry should be -----------------------------------------------------


def test_a_symlinked_bm25_entry_is_replaced_by_a_rebuild_and_its_target_untouched(tmp_path, small_dataset):
    from generator.evaluate.data import load_dataset
    from generator.evaluate.retrieval import sparse_rankings

    dataset = load_dataset(small_dataset)
    queries = dict(list(dataset.queries.items())[:3])
    cache_root = tmp_path / "cache"
    expected = sparse_rankings(dataset.documents, queries, 10, cache_dir=cache_root)
    [entry] = [path for path in (cache_root / "sparse").iterdir() if path.is_dir()]
    elsewhere = tmp_path / "elsewhere"
    entry.rename(elsewhere)
    (elsewhere / "mine.txt").write_text("keep", encoding="utf-8")
    os.symlink(elsewhere, entry)
    warnings: list[str] = []
    assert sparse_rankings(dataset.documents, queries, 10, cache_dir=cache_root, log=warnings.append) == expected
    assert "is a symbolic link, not an entry this cache wrote" in warnings[0] and "rebuilding" in warnings[0]
    assert entry.is_dir() and not entry.is_symlink()
    assert (elsewhere / "mine.txt").read_text(encoding="utf-8") == "keep"
    again: list[str] = []
    assert sparse_rankings(dataset.documents, queries, 10, cache_dir=cache_root, log=again.append) == expected
    assert again[0].startswith("sparse: re-using the saved BM25 index")


def test_a_held_staging_directory_is_kept_while_its_holder_lives(tmp_path):
    held = held_temporary_directory(tmp_path, ".key.")
    try:
        assert remove_stale_temporaries([tmp_path], staging_directories=True) == []
        assert Path(held.name).is_dir()
    finally:
        held.release()
    assert remove_stale_temporaries([tmp_path], staging_directories=True) == [Path(held.name)]
