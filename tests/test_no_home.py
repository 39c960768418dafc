"""No home directory (a container running an arbitrary uid with HOME unset): the commands that need
a cache say so in one line with what to set, and READOUT_CACHE is enough to run."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from subprocess import PIPE

import pytest

from generator.commands.cli import main
from tests.conftest import REPOSITORY_ROOT, Outcome, one_line_error, run_tool, start_python
from tests.one_thread import ONE_THREAD_ENV

TINY_BEIR = REPOSITORY_ROOT / "examples" / "tiny-beir"
NO_HOME = ("Error: no home directory to keep the cache in (HOME is not set and this user has none): "
           "set READOUT_CACHE to a writable directory, or HOME")


@pytest.mark.parametrize("command", ["evaluate", "build"])
def test_no_home_is_one_line_saying_what_to_set(tmp_path, monkeypatch, capsys, command):
    def no_home(cls=None):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", classmethod(no_home))
    monkeypatch.delenv("READOUT_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["init", "p", "--data", str(TINY_BEIR)]) == 0
    capsys.readouterr()
    code = main([command, "p"])
    outcome = Outcome(code, *capsys.readouterr())
    assert code == 2
    assert one_line_error(outcome) == NO_HOME
    assert not (tmp_path / "p" / "outputs" / "results.json").exists()


def test_a_uid_without_a_home_evaluates_with_readout_cache(request):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running as another uid needs root and setpriv")
    # Outside pytest's own temporary directory, which other users cannot enter.
    work = Path(tempfile.mkdtemp(prefix="readout-no-home-"))
    request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
    shutil.copytree(TINY_BEIR, work / "tiny-beir")
    run_tool("chmod", "-R", "a+rwX", str(work), check=True)
    env = {key: value for key, value in os.environ.items() if key not in ("HOME", "READOUT_CACHE", "XDG_CONFIG_HOME")}
    env["HF_HUB_OFFLINE"] = "1"
    env.update(ONE_THREAD_ENV)   # the evaluation's torch on one thread (tests/one_thread.py)

    def readout(*args: str, **extra: str):
        child = start_python("-c", "import sys\nfrom generator.commands.cli import run\nsys.argv = ['readout', *sys.argv[1:]]\nrun()",
                             *args, cwd=work, env={**env, **extra}, under=("setpriv", "--reuid=54321", "--regid=54321",
                                                                          "--clear-groups"),
                             stdout=PIPE, stderr=PIPE, text=True)
        out, err = child.communicate(timeout=300)
        return Outcome(child.returncode, out, err)

    # The interpreter itself must be one another user may run (a virtual environment under /root
    # is not): exit 126 or 127 from setpriv says it is not.
    probe = start_python("-c", "pass", cwd=work, env=env, under=("setpriv", "--reuid=54321", "--regid=54321",
                                                                  "--clear-groups"), stdout=PIPE, stderr=PIPE, text=True)
    _, probe_err = probe.communicate(timeout=60)
    if probe.returncode in (126, 127):
        pytest.skip(f"this interpreter cannot be run by another user here: {probe_err.strip()[:200]}")
    assert readout("init", "p", "--data", "tiny-beir").code == 0
    refused = readout("evaluate", "p")
    assert refused.code == 2 and refused.err.strip() == NO_HOME, refused.err[-800:]
    done = readout("evaluate", "p", READOUT_CACHE=str(work / "cache"))
    assert done.code == 0, done.err[-800:]
    assert (work / "p" / "outputs" / "results.json").is_file()
