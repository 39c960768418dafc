"""The rerank row with a model that has learnt something, so that a wrong reordering shows.

A random cross-encoder's scores mean nothing, so a rerank row that sorted ascending, scored each
candidate with its neighbour's text or dropped a batch would pass every test of mechanics. Here
a tiny cross-encoder is first trained on this file's own fixture pairs until it separates them;
the real `rerank_rankings` then lifts a deliberately bad "over" ranking, and each of three
mutants of the rerank path must lose that lift or fail loudly. Depth and int8 precision, which
need no signal, use the random tiny model of conftest.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from generator.core.metrics import macro_mean, ndcg_at_k, same_candidate_sets
from generator.evaluate import retrieval
from generator.evaluate.cache import RerankCache
from generator.evaluate.models import apply_precision, load_cross_encoder, resolve_model
from generator.evaluate.retrieval import rerank_rankings

pytestmark = pytest.mark.model

MAX_LENGTH = 64
BATCH_SIZE = 3
TRAINING_ROUNDS, STEPS_PER_ROUND, LEARNING_RATE = 24, 25, 2e-3

# Each query has two relevant documents that share its words. Its non-relevant candidates are the
# other queries' first documents (relevant elsewhere, so a score must depend on the query as well
# as the text) and four documents about nothing asked.
TOPICS = {
    "q1": ("insulin receptor signalling", ("insulin binds its receptor and starts the signalling cascade",
                                           "receptor signalling after insulin in liver cells")),
    "q2": ("tumor immune therapy", ("immune therapy shrinks the tumor in half of the patients",
                                    "a tumor escapes immune attack unless therapy blocks it")),
    "q3": ("sleep and memory", ("memory consolidates during deep sleep", "sleep loss impairs memory in students")),
    "q4": ("vaccine antibody response", ("the vaccine raises an antibody response within weeks",
                                         "antibody response to a second vaccine dose")),
}
FILLER = ("a mouse trial of a new diet", "heart rate during exercise", "the bacteria of the gut",
          "lung function in smokers")
QUERIES = {query: text for query, (text, _) in TOPICS.items()}
TEXTS = {f"{query}-r{number}": text for query, (_, relevant) in TOPICS.items()
         for number, text in enumerate(relevant)} | {f"filler{number}": text for number, text in enumerate(FILLER)}
RELEVANT = {query: {f"{query}-r0", f"{query}-r1"} for query in TOPICS}
NOT_RELEVANT = {query: [f"{other}-r0" for other in TOPICS if other != query] + [f"filler{n}" for n in range(4)]
                for query in TOPICS}
# The bad row: every non-relevant candidate first, the relevant two at ranks 8 and 9.
OVER = {query: [(doc_id, 1.0 - rank / 10) for rank, doc_id in enumerate(NOT_RELEVANT[query] + sorted(RELEVANT[query]))]
        for query in TOPICS}
TRAINING_PAIRS = [(QUERIES[query], TEXTS[doc_id], float(doc_id in RELEVANT[query]))
                  for query in TOPICS for doc_id, _ in OVER[query]]


def _separated(scores_by_query: dict[str, dict[str, float]]) -> bool:
    """Whether every query scores each relevant document above each non-relevant one."""
    return all(min(scores[d] for d in RELEVANT[q]) > max(scores[d] for d in NOT_RELEVANT[q])
               for q, scores in scores_by_query.items())


def _scores(score_pairs) -> dict[str, dict[str, float]]:
    pairs = [(QUERIES[query], TEXTS[doc_id]) for query in TOPICS for doc_id, _ in OVER[query]]
    flat = iter(float(score) for score in score_pairs(pairs))
    return {query: {doc_id: next(flat) for doc_id, _ in OVER[query]} for query in TOPICS}


@pytest.fixture(scope="module")
def trained_cross_encoder(tiny_cross_encoder, tmp_path_factory) -> Path:
    """conftest's random two-layer BERT (MiniLM's tokenizer) trained with plain torch, full batch,
    on TRAINING_PAIRS (the 36 (query, candidate text) pairs of OVER labelled by RELEVANT), in
    rounds of 25 steps until it separates them; no dropout and one thread, so the run is the same
    every time."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # tensors this small run faster on one thread than two contending
    try:
        torch.manual_seed(0)
        model = BertForSequenceClassification.from_pretrained(str(tiny_cross_encoder), hidden_dropout_prob=0.0,
                                                              attention_probs_dropout_prob=0.0)
        tokenizer = AutoTokenizer.from_pretrained(str(tiny_cross_encoder))
        queries, texts, labels = zip(*TRAINING_PAIRS)
        batch = tokenizer(list(queries), list(texts), padding=True, truncation=True, max_length=MAX_LENGTH,
                          return_tensors="pt")
        target = torch.tensor(labels)
        optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
        loss = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(len(NOT_RELEVANT["q1"]) / 2))

        def logits(pairs):
            encoded = tokenizer(*map(list, zip(*pairs)), padding=True, truncation=True, max_length=MAX_LENGTH,
                                return_tensors="pt")
            with torch.no_grad():
                return model.eval()(**encoded).logits.view(-1).tolist()

        for _ in range(TRAINING_ROUNDS):
            model.train()
            for _ in range(STEPS_PER_ROUND):
                optimizer.zero_grad()
                loss(model(**batch).logits.view(-1), target).backward()
                optimizer.step()
            if _separated(_scores(logits)):
                break
    finally:
        torch.set_num_threads(threads)
    path = tmp_path_factory.mktemp("models") / "fixture-trained-cross-encoder"
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


_caches = itertools.count()


def _rerank(model_dir: Path, cache_root: Path, **settings) -> retrieval.RerankOutcome:
    """The real rerank row over OVER, with a cache of its own (a cached score would hide a mutant)."""
    identity = resolve_model(str(model_dir))
    settings = {"batch_size": BATCH_SIZE, **settings}
    return rerank_rankings(OVER, QUERIES, TEXTS, identity, MAX_LENGTH,
                           RerankCache(cache_root / f"cache{next(_caches)}", identity.cache_key), progress=False,
                           log=lambda _: None, **settings)


def _ndcg5(rankings) -> float:
    return macro_mean(ndcg_at_k([doc_id for doc_id, _ in rankings[q]], RELEVANT[q], 5) for q in TOPICS)


def reranked_ndcg5(model_dir: Path, cache_root: Path, **settings) -> float:
    return _ndcg5(_rerank(model_dir, cache_root, **settings).rankings)


@pytest.fixture(scope="module")
def real_ndcg5(trained_cross_encoder, tmp_path_factory) -> float:
    return reranked_ndcg5(trained_cross_encoder, tmp_path_factory.mktemp("real"))


def test_the_trained_model_separates_the_pairs_it_was_trained_on(trained_cross_encoder):
    """Trained on TRAINING_PAIRS (this file's fixture); loaded the way the rerank row loads it."""
    model = load_cross_encoder(resolve_model(str(trained_cross_encoder)), MAX_LENGTH)
    scores = _scores(lambda pairs: model.predict(pairs, batch_size=BATCH_SIZE, show_progress_bar=False))
    assert _separated(scores), scores


def test_reranking_lifts_the_bad_over_row_with_the_same_candidates(trained_cross_encoder, tmp_path, real_ndcg5):
    outcome = _rerank(trained_cross_encoder, tmp_path)
    assert _ndcg5(OVER) == 0.0   # the relevant documents sit below rank 5
    assert real_ndcg5 == _ndcg5(outcome.rankings) > _ndcg5(OVER)
    assert real_ndcg5 == 1.0
    assert same_candidate_sets({q: [d for d, _ in OVER[q]] for q in TOPICS},
                               {q: [d for d, _ in outcome.rankings[q]] for q in TOPICS})


def test_sorting_ascending_is_caught(trained_cross_encoder, tmp_path, real_ndcg5, monkeypatch):
    real = retrieval.reordered

    def ascending(candidates, scores, tail=()):
        return real(candidates, [-score for score in scores], tail)

    monkeypatch.setattr(retrieval, "reordered", ascending)
    assert reranked_ndcg5(trained_cross_encoder, tmp_path) < real_ndcg5


def test_texts_shifted_by_one_candidate_are_caught(trained_cross_encoder, tmp_path, real_ndcg5, monkeypatch):
    def shifted(query, candidates, texts):
        return [(query, texts[candidates[(index + 1) % len(candidates)]]) for index in range(len(candidates))]

    monkeypatch.setattr(retrieval, "candidate_pairs", shifted)
    assert reranked_ndcg5(trained_cross_encoder, tmp_path) < real_ndcg5


@pytest.mark.parametrize("batch_size", [BATCH_SIZE, 4])   # a full last batch (9 % 3 == 0), and a partial one
def test_a_dropped_last_batch_fails_loudly_instead_of_shifting_scores(trained_cross_encoder, tmp_path, batch_size):
    def without_last_batch(identity, max_length, device):
        model = load_cross_encoder(identity, max_length, device)
        predict = model.predict

        def short(pairs, batch_size, **options):
            return predict(pairs[:len(pairs) - (len(pairs) % batch_size or batch_size)], batch_size=batch_size,
                           **options)

        model.predict = short
        return model

    with pytest.raises(ValueError, match=r"^\d+ scores for 9 candidates$"):
        _rerank(trained_cross_encoder, tmp_path, load_model=without_last_batch, batch_size=batch_size)


def _counting_loader(calls: list[int]):
    def load(identity, max_length, device):
        model = load_cross_encoder(identity, max_length, device)
        predict = model.predict

        def counted(pairs, **options):
            calls.append(len(pairs))
            return predict(pairs, **options)

        model.predict = counted
        return model
    return load


def test_with_a_depth_only_the_top_candidates_are_rescored_and_the_rest_keep_their_order(tiny_cross_encoder,
                                                                                          tmp_path):
    calls: list[int] = []
    outcome = _rerank(tiny_cross_encoder, tmp_path, depth=4, load_model=_counting_loader(calls))
    assert set(calls) == {4}   # the warm-up and every query: four pairs each
    for query, ranking in outcome.rankings.items():
        over = [doc_id for doc_id, _ in OVER[query]]
        head, tail = ranking[:4], ranking[4:]
        assert sorted(doc_id for doc_id, _ in head) == sorted(over[:4])
        assert [score for _, score in head] == sorted((score for _, score in head), reverse=True)
        assert [doc_id for doc_id, _ in tail] == over[4:]
        assert max(score for _, score in tail) < min(score for _, score in head)


def test_int8_scores_the_same_candidates_differently(tiny_cross_encoder, tmp_path):
    fp32 = _rerank(tiny_cross_encoder, tmp_path, precision="fp32").rankings
    int8 = _rerank(tiny_cross_encoder, tmp_path, precision="int8").rankings
    assert same_candidate_sets({q: [d for d, _ in r] for q, r in fp32.items()},
                               {q: [d for d, _ in r] for q, r in int8.items()})
    fp32_scores = {(q, d): s for q, r in fp32.items() for d, s in r}
    int8_scores = {(q, d): s for q, r in int8.items() for d, s in r}
    assert fp32_scores.keys() == int8_scores.keys() and fp32_scores != int8_scores
    # Those int8 scores are the quantized model's own (apply_precision), not a relabelled fp32 run.
    quantized = apply_precision(load_cross_encoder(resolve_model(str(tiny_cross_encoder)), MAX_LENGTH), "int8")
    candidates = [doc_id for doc_id, _ in OVER["q1"]]
    direct = quantized.predict([(QUERIES["q1"], TEXTS[d]) for d in candidates], batch_size=BATCH_SIZE,
                               show_progress_bar=False)
    assert sorted(int8_scores[("q1", d)] for d in candidates) == sorted(float(s) for s in direct)
