"""One torch thread for the modules that import this fixture, and for the children they start.

The suite runs on two pytest-xdist workers on a two-core machine. torch gives each process as many
intra-op threads as there are cores, so two workers (or a worker and the child it waits for) run
four busy threads on two cores, and every small tensor operation waits for a descheduled thread: a
two-layer test model scores 50 pairs in batches of 4 in about 2.4 s with two contending threads
and in 0.07 s with one. The thread count changes how fast the tests' tiny models run, never what
they compute into what a test asserts (results record the count in `threads`, which no test
reads); tests/evaluate/test_rerank_signal.py trains its model on one thread for the same reason.

`one_torch_thread` (module scope, offered to every module through tests/conftest.py) sets one
thread for the tests of a module that uses it (`pytest.mark.usefixtures("one_torch_thread")`, on
the module or on its model tests only, so that a light test never imports torch for it), and gives
the worker its own count back after the module, so the modules that run after it on the same
worker are untouched. `ONE_THREAD_ENV` is the same setting for a child process (torch reads
OMP_NUM_THREADS when it starts).
"""

from __future__ import annotations

import pytest

ONE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def one_torch_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
