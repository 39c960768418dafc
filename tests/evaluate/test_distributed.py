"""The Ray engine (generator.evaluate.distributed) gives the single process's outputs: the same
run files byte for byte, the same figures, the same cache entries, so a run on a cluster and a run
here meet in one cache. A local two-worker cluster evaluates a slice of the real SciFact collection
into an empty cache; a cluster started apart is joined by its GCS address on a small generated
corpus; then the refusals (Ray Client, an address where nothing listens) and SIGTERM.

The slice keeps every fourth test query (in the judgements' own order: 75 of the 300), the 83
documents judged relevant to them and every 128th of the documents judged for no query, in the
corpus's own order: 121 of the 5,183. That is four encoder batches of 32, the fewest in which the
cluster still cuts the corpus into more batches and shards than it has workers (a test holds it
to two shards a worker), so what is proven is the same (batches formed over the whole corpus,
shards reassembled in order, real abstracts of every length), at a forty-third of the encoding.
The full corpus took 13 minutes of a CI worker, every run; every eighth unjudged document, 895 in
all, nearly 3; every judged document and every sixty-fourth other, 359 in all, about a minute and
a half of both cores; every third query's judged documents and every sixty-fourth other, 187 in
six batches, one shard (about 12 s of a worker) more for each worker than now.

One local cluster evaluation serves every test of what a cluster computes. Each costs about 80 s
of CPU on this machine's two cores, nearly all of it in its four workers (one per worker and
stage), each a process that imports sentence-transformers (about 9 s) and loads its model; a
second evaluation on a generated corpus proved nothing the slice does not. The single-process run
reads the shared cache (~/.cache/readout, where the slice's embeddings stay between runs); the
cluster's run starts from an empty one, so the encoding really runs on the workers, every time:
that is what is being tested. One module, so that no two clusters run beside each other.
"""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest

from generator.core.options import EvaluationOptions
from generator.storage.errors import InputError
from generator.evaluate.pipeline import evaluate, write_outputs

pytestmark = pytest.mark.model
pytest.importorskip("ray.data")

# What may differ between two evaluations of the same inputs: when and how fast they ran.
TIMING_KEYS = ("rerank_milliseconds", "p95_rerank_milliseconds", "rerank_costs", "manifest")
RUN_FILES = ["dense.trec", "hybrid-rerank.trec", "hybrid.trec", "qrels.tsv", "sparse.trec"]
EVERY_NTH_UNJUDGED = 128
EVERY_NTH_QUERY = 4
# The cluster's tests read the real collection (integration); the refusals do not.
ON_SCIFACT = pytest.mark.integration


def _options(data, root, name, cross_encoder, **overrides):
    return EvaluationOptions(data=data, outputs_dir=root / name / "outputs", dense_model="minilm-offline",
                             rerank_model=str(cross_encoder), cache_dir=root / f"cache-{name}", progress=False,
                             bootstrap_resamples=200, device="cpu", **overrides)


def _evaluate(options, log=None):
    lines = []
    write_outputs(evaluate(options, log=log or lines.append), options, log=lines.append)
    return json.loads(options.results_path.read_text()), lines


def _slice_of(scifact_dir, destination):
    """SciFact cut to every EVERY_NTH_QUERY-th test query: its judgements, the documents they judge
    and every EVERY_NTH_UNJUDGED-th document judged for no query, line for line as the original
    spells them (the queries file as it is)."""
    with (scifact_dir / "qrels" / "test.tsv").open(encoding="utf-8", newline="") as qrels:
        header, *lines = qrels.read().splitlines(keepends=True)
    queries = list(dict.fromkeys(line.split("\t", 1)[0] for line in lines))[::EVERY_NTH_QUERY]
    kept_queries = set(queries)
    kept_lines = [line for line in lines if line.split("\t", 1)[0] in kept_queries]
    judged = {line.split("\t")[1] for line in kept_lines}
    every_judged = {line.split("\t")[1] for line in lines}
    (destination / "qrels").mkdir(parents=True)
    (destination / "qrels" / "test.tsv").write_text(header + "".join(kept_lines), encoding="utf-8")
    shutil.copyfile(scifact_dir / "queries.jsonl", destination / "queries.jsonl")
    kept = unjudged = 0
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as corpus, \
            (destination / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for line in corpus:
            document = json.loads(line)["_id"]
            if document in every_judged and document not in judged:
                continue
            if document not in judged:
                unjudged += 1
                if unjudged % EVERY_NTH_UNJUDGED:
                    continue
            out.write(line)
            kept += 1
    return kept, judged


@pytest.fixture(scope="module")
def engines(scifact_dir, tmp_path_factory, tiny_cross_encoder):
    """The slice evaluated by the single process (on the shared cache), by a local two-worker
    cluster (into an empty cache), and by the single process again on the cache the cluster
    filled, where nothing is left to compute."""
    root = tmp_path_factory.mktemp("scifact-engines")
    documents, judged = _slice_of(scifact_dir, root / "scifact-slice")
    produced = {"documents": documents, "judged": judged}
    local = EvaluationOptions(data=root / "scifact-slice", outputs_dir=root / "local" / "outputs",
                              dense_model="minilm-offline", rerank_model=str(tiny_cross_encoder),
                              rerank_max_length=128, progress=False, device="cpu")
    ray = EvaluationOptions(**{**local.__dict__, "outputs_dir": root / "ray" / "outputs", "engine": "ray",
                               "workers": 2, "cache_dir": root / "empty-cache"})
    again = EvaluationOptions(**{**local.__dict__, "outputs_dir": root / "again" / "outputs",
                                 "cache_dir": ray.cache_dir})
    for name, options in (("local", local), ("ray", ray), ("again", again)):
        log: list[str] = []
        results, _ = _evaluate(options, log.append)
        produced[name] = (options, results, log)
    return produced


@ON_SCIFACT
def test_the_slice_is_real_scifact_with_the_judged_documents_of_every_fourth_query(engines):
    options = engines["local"][0]
    with (options.data / "corpus.jsonl").open(encoding="utf-8") as corpus:
        kept = [json.loads(line)["_id"] for line in corpus]
    assert engines["judged"] <= set(kept) and len(engines["judged"]) == 83
    assert len(kept) == engines["documents"] == 83 + (5183 - 283) // EVERY_NTH_UNJUDGED


@ON_SCIFACT
def test_the_cluster_encoded_the_corpus_itself_in_more_shards_than_workers(engines):
    options, results, log = engines["ray"]
    assert results["manifest"]["caches"]["dense_embeddings"] == "computed"
    assert any(line.startswith(f"dense: encoding {engines['documents']} documents") for line in log)
    from generator.evaluate.encoding import BATCHES_PER_SHARD

    workers = 2
    batches = -(-engines["documents"] // options.encode_batch_size)
    per_shard = max(1, min(BATCHES_PER_SHARD, -(-batches // (4 * workers))))
    assert -(-batches // per_shard) >= 2 * workers, "the slice no longer spreads over the workers"


@ON_SCIFACT
def test_the_run_files_are_the_same_bytes(engines):
    local, ray = engines["local"][0], engines["ray"][0]
    assert sorted(path.name for path in local.runs_dir.iterdir()) == RUN_FILES
    assert sorted(path.name for path in ray.runs_dir.iterdir()) == RUN_FILES
    for name in RUN_FILES:
        assert (ray.runs_dir / name).read_bytes() == (local.runs_dir / name).read_bytes(), name


@ON_SCIFACT
def test_the_figures_are_the_same(engines):
    local, ray = engines["local"][1], engines["ray"][1]
    assert {key for key in local if key not in TIMING_KEYS} == {key for key in ray if key not in TIMING_KEYS}
    for key in local:
        if key not in TIMING_KEYS:
            assert ray[key] == local[key], key
    assert ray["table"][3]["measured"] is True and ray["table"][3]["nDCG@5"] == local["table"][3]["nDCG@5"]
    assert ray["manifest"]["runtime"]["engine"] == "ray" and "engine" not in local["manifest"]["runtime"]


@ON_SCIFACT
def test_the_cluster_wrote_the_entries_the_single_process_reads(engines):
    local, ray = engines["local"][0], engines["ray"][0]
    from generator.evaluate.cache import EmbeddingCache
    from generator.storage.paths import default_cache_dir

    [entry] = sorted((ray.cache_dir / "embeddings").glob("*.npy"))
    shared = local.cache_dir or default_cache_dir()
    local_matrix = EmbeddingCache(shared).load(entry.stem, expected_rows=engines["documents"], normalized=True)
    assert local_matrix is not None, "the single process's cache holds no entry under the cluster's key"
    assert np.array_equal(np.load(entry), local_matrix)
    # The shared cache holds other runs' entries too: each of the cluster's is among them.
    cluster_rerank = sorted(path.relative_to(ray.cache_dir) for path in (ray.cache_dir / "rerank").rglob("*.json"))
    assert len(cluster_rerank) == len(engines["ray"][1]["manifest"]["query_ids"])
    assert [path for path in cluster_rerank if not (shared / path).is_file()] == []
    again = engines["again"][1]
    assert again["manifest"]["caches"]["dense_embeddings"] == "re-used"
    assert again["manifest"]["caches"]["rerank_computed_queries"] == []
    assert again["manifest"]["caches"]["rerank_resumed_queries"] == again["manifest"]["query_ids"]
    assert again["rerank_milliseconds"] == engines["ray"][1]["rerank_milliseconds"]


@ON_SCIFACT
def test_the_driver_says_where_the_work_ran(engines):
    log = engines["ray"][2]
    assert any(line == "ray: 2 workers on a local cluster" for line in log)
    assert not any("WARNING" in line or "INFO" in line for line in log)


def test_engine_options_are_refused_without_the_engine(tmp_path, make_project, monkeypatch, capsys):
    from generator.commands.cli import main

    project = tmp_path / "project"
    make_project(project)
    for option, value in (("--workers", "2"), ("--ray-address", "auto")):
        assert main(["evaluate", str(project), option, value]) == 2
        err = capsys.readouterr().err
        assert f"{option} is for --engine ray" in err and len(err.strip().splitlines()) == 1


def test_without_ray_installed_the_error_says_how_to_install_it(monkeypatch):
    from generator.evaluate.distributed import RayEngine

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(InputError, match=r"pip install 'traced-readout\[ray\]'"):
        RayEngine(workers=2)


# --- joining a cluster: Ray Client, an address where nothing listens, SIGTERM ----------------------


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """A Ray head of one CPU in its own process group (`ray start --block`), joined by its GCS
    address; stopped with its processes at the end, never by `ray stop` (which stops every cluster
    on the machine, the other tests' too). One CPU, so one worker: what joining proves does not
    depend on how many workers the cluster has (the local cluster's two show the work spread), and
    each worker is a process that imports torch and loads a model for each stage, on a core the
    other tests running beside this module would otherwise have."""
    import importlib.util
    import os
    import shutil
    import socket
    import tempfile
    import time

    from tests.conftest import start_python

    temp_dir = tempfile.mkdtemp(prefix="rh", dir="/tmp")
    # The driver's own RAY_* settings (ray.init sets some in this process) are not the head's.
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    head, log, reasons = None, None, []
    try:
        for attempt in range(2):   # a port taken between choosing it and Ray binding it: once more
            # Every port Ray would otherwise take at its fixed default (another test's local cluster,
            # in another worker at the same time, holds those); a short temporary directory: Ray's
            # socket paths live under it, and a Unix socket path holds at most 107 bytes.
            gcs = _free_port()
            # Ray Client's server starts only where grpcio is installed (not by the ray extra), and
            # naming its port without grpcio stops `ray start`.
            names = ("node-manager-port", "object-manager-port", "metrics-export-port", "dashboard-agent-grpc-port",
                     "dashboard-agent-listen-port", "runtime-env-agent-port",
                     *(("ray-client-server-port",) if importlib.util.find_spec("grpc") else ()))
            ports = [f"--{name}={_free_port()}" for name in names]
            log = open(os.path.join(temp_dir, f"head-{attempt}.log"), "w+", encoding="utf-8")
            head = start_python("-m", "ray.scripts.scripts", "start", "--head", "--block", f"--port={gcs}",
                                *ports, "--num-cpus=1", "--object-store-memory=200000000",
                                "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}",
                                env=env, stdout=log, stderr=log, start_new_session=True)
            deadline = time.monotonic() + 120
            while head.poll() is None and time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", gcs), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.5)
            else:
                log.seek(0)
                reasons.append(f"exit {head.poll()}: {log.read()[-1200:]}")
                _stop(head)
                continue
            break
        else:
            pytest.fail("the Ray head did not start: " + " | ".join(reasons))
        yield f"127.0.0.1:{gcs}"
    finally:
        if head is not None:
            _stop(head)
        if log is not None:
            log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _stop(head) -> None:
    import os
    import signal

    # Killed at once: a graceful stop of the head took about 30 s of the suite, and the few seconds
    # of grace it was once given always ran out (5 s of every run); its temporary directory is
    # removed anyway.
    try:
        os.killpg(head.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass   # it had ended already
    head.wait(timeout=60)


@pytest.fixture(scope="module")
def small(tmp_path_factory, tiny_cross_encoder):
    """The single process on a small generated corpus: what a joined one-worker cluster gives too."""
    from tests.conftest import make_small_dataset

    root = tmp_path_factory.mktemp("engines")
    data = make_small_dataset(root / "data", documents=90, queries=7)
    local = _options(data, root, "local", tiny_cross_encoder)
    return (local, *_evaluate(local))


def test_a_clusters_gcs_address_gives_the_same_run_files(small, ray_head, tiny_cross_encoder, tmp_path):
    local = small[0]
    joined = EvaluationOptions(**{**_options(local.data, tmp_path, "joined", tiny_cross_encoder).__dict__,
                                  "engine": "ray", "ray_address": ray_head})
    log: list[str] = []
    try:
        results, _ = _evaluate(joined, log.append)
    finally:
        import ray

        ray.shutdown()   # a joined cluster stays connected: this worker's next test starts afresh
    for path in sorted(local.runs_dir.iterdir()):
        assert (joined.runs_dir / path.name).read_bytes() == path.read_bytes(), path.name
    assert results["table"] == small[1]["table"]
    assert f"ray: 1 worker on the cluster at {ray_head}" in log


@pytest.mark.parametrize("address", ["ray://head:10001", "RAY://127.0.0.1:10001", "ray://[::1]:10001"])
def test_a_ray_client_address_is_refused_saying_what_works(address):
    from generator.evaluate.distributed import RayEngine

    with pytest.raises(InputError, match="Ray Data does not run through Ray Client") as refused:
        RayEngine(address=address, workers=2, log=lambda _: None)
    assert "--ray-address auto" in str(refused.value) and "HOST:6379" in str(refused.value)


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
def test_an_address_where_nothing_listens_is_refused_in_seconds(tmp_path, monkeypatch, capsys, form):
    import time

    from generator.commands.cli import main
    from tests.conftest import make_small_dataset

    data = make_small_dataset(tmp_path / "data", documents=20, queries=3)
    monkeypatch.chdir(tmp_path)
    assert main(["init", "p", "--data", str(data)]) == 0
    address = form.format(port=_free_port())
    capsys.readouterr()
    started = time.monotonic()
    assert main(["evaluate", "p", "--skip-rerank", "--engine", "ray", "--ray-address", address,
                 "--cache-dir", str(tmp_path / "cache")]) == 2
    assert time.monotonic() - started < 30
    line = capsys.readouterr().err.strip().splitlines()[-1]   # after the dataset's one-line summary
    host = address.rsplit(":", 1)[0].strip("[]")
    assert line.startswith(f"Error: --ray-address: no Ray cluster answers at {host}:")
    assert "start one there (`ray start --head`) or check the address" in line


@pytest.mark.parametrize("address, endpoint", [
    ("auto", None), ("local", None), (" AUTO ", None),
    ("head:6380", ("head", 6380)), ("head", ("head", 6379)), ("10.0.0.5:6379", ("10.0.0.5", 6379)),
    ("[::1]:7000", ("::1", 7000)), ("[::1]", ("::1", 6379)),
])
def test_cluster_endpoints_are_read_as_ray_reads_them(address, endpoint):
    from generator.evaluate.distributed import cluster_endpoint

    assert cluster_endpoint(address) == endpoint


@pytest.mark.parametrize("address, message", [(":6379", "names no host"), ("head:port", "is not a number"),
                                              ("http://head:6379", "http:// is not an address Ray joins")])
def test_an_address_ray_could_not_read_is_one_line(address, message):
    from generator.evaluate.distributed import cluster_endpoint

    with pytest.raises(InputError, match=message):
        cluster_endpoint(address)


def test_sigterm_during_a_ray_run_is_one_line_terminated(tmp_path, tiny_cross_encoder):
    """Ray's core worker installs a failure-signal handler that printed a C++ stack dump here."""
    import os
    import signal
    import time
    from subprocess import PIPE, STDOUT

    from tests.conftest import make_small_dataset, run_python, start_python

    data = make_small_dataset(tmp_path / "data", documents=400, queries=7)
    env = dict(os.environ, HF_HUB_OFFLINE="1", READOUT_CACHE=str(tmp_path / "cache"))
    readout = ("-c", "import sys\nfrom generator.commands.cli import run\nsys.argv = ['readout', *sys.argv[1:]]\nrun()")
    assert run_python(*readout, "init", "p", "--data", str(data), env=env, cwd=tmp_path).returncode == 0
    child = start_python(*readout, "evaluate", "p", "--engine", "ray", "--workers", "2", "--rerank-model",
                         str(tiny_cross_encoder), env=env, cwd=tmp_path, stdout=PIPE, stderr=STDOUT, text=True,
                         start_new_session=True)
    lines = []
    try:
        for line in child.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("ray: "):
                time.sleep(1.0)   # inside Ray's own code: actors starting, the first batches sent
                child.send_signal(signal.SIGTERM)
                break
        lines.extend(child.stdout.read().splitlines())
        code = child.wait(timeout=120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    text = "\n".join(lines)
    assert any(line.startswith("ray: ") for line in lines), text[-2000:]
    assert code == 143, text[-2000:]
    assert lines[-1] == "Terminated.", text[-2000:]
    assert "SIGTERM received" not in text and "AbslFailureSignalHandler" not in text
    assert "Traceback" not in text
