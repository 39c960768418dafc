"""The (query, document) pairs a reranker scores: each query's candidates from the row it reranks
(hybrid in the SciFact review), in rank order.

They are read back from what an evaluation wrote (the results file names that row's run file)
and the project's dataset, so `readout cost` times exactly the pairs the rerank row scores.
"""

from __future__ import annotations

from pathlib import Path

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.evaluate.data import load_dataset
from generator.core.runfiles import read_run
from generator.storage.paths import display_path
from generator.core.results import read_results

@dataclass(frozen=True)
class CandidatePairs:
    pairs_by_query: dict[str, list[tuple[str, str]]]   # query id -> [(query text, document text)], best first
    results_path: Path
    run_path: Path
    data_dir: Path


def rerank_candidate_pairs(results_path: Path, data_dir: Path) -> CandidatePairs:
    """The run of the row the reranker reorders (`runs.<row>` in the results file; the rows are
    recorded in `manifest.rows`), joined with the dataset's texts.

    A run file's scores strictly decrease down each query (generator.core.runfiles), so
    sorting by score, highest first, is rank order. Queries follow the qrels file's order.
    """
    results = read_results(results_path)
    shown = display_path(results_path)
    over = results.model.roles.rerank_over
    if over is None:
        raise InputError("no rerank row is configured, so there are no pairs to time (evaluate.rows)", path=shown,
                         field="manifest.rows")
    relative = results.model.runs.get(over)
    if not isinstance(relative, str) or not relative:
        raise InputError(f"no {over} run file named here; run `readout evaluate` first", path=shown,
                         field=f"runs.{over}")
    run_path = Path(results_path).parent / relative
    if not run_path.is_file():
        raise InputError(f"the {over} run file {relative} is missing; run `readout evaluate`", path=shown,
                         field=f"runs.{over}")
    try:
        run = read_run(run_path)
    except ValueError as error:
        raise InputError(f"not a TREC run file (qid Q0 docid rank score tag): {error}",
                         path=display_path(run_path)) from None
    if not run:
        raise InputError("the run file holds no rankings", path=display_path(run_path))
    dataset = load_dataset(data_dir)
    texts = {document.doc_id: document.retrieval_text for document in dataset.documents}
    order = {query_id: position for position, query_id in enumerate(dataset.test_query_ids())}
    pairs_by_query: dict[str, list[tuple[str, str]]] = {}
    for query_id in sorted(run, key=lambda q: (order.get(q, len(order)), q)):
        if query_id not in dataset.queries:
            raise InputError(f"query {query_id!r} is not in the dataset's queries.jsonl",
                             path=display_path(run_path))
        ranked = sorted(run[query_id].items(), key=lambda item: -item[1])
        missing = [doc_id for doc_id, _ in ranked if doc_id not in texts]
        if missing:
            raise InputError(f"document {missing[0]!r} (query {query_id!r}) is not in the dataset's corpus.jsonl",
                             path=display_path(run_path))
        pairs_by_query[query_id] = [(dataset.queries[query_id], texts[doc_id]) for doc_id, _ in ranked]
    return CandidatePairs(pairs_by_query, Path(results_path), run_path, Path(data_dir))
