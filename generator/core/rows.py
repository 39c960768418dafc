"""Which rows an evaluation runs: the `evaluate.rows` list of readout.yaml, and the roles a results
file's rows play (which one is the baseline, which one is the reranker under decision and whose
candidates it reorders).

Kinds (each row names the rows it reads, which must come earlier in the list):

- `dense`: a bi-encoder's top `depth` by the dot product of normalized embeddings (`model`).
- `sparse`: BM25 through bm25s, Lucene variant (`k1`, `b`).
- `fusion`: `method: rrf` (reciprocal rank fusion with constant `k`, over two or more rows) or
  `method: minmax` (`alpha` * min-max(first) + (1 - alpha) * min-max(second), over two rows).
- `rerank`: a cross-encoder reordering another row's candidates (`over`, any earlier row; `model`,
  `max_length`, `batch_size`; `depth`: only the over row's top `depth` are scored and reordered,
  the rest keep their order below them; `precision`: fp32, or int8 by dynamic quantization of
  the linear layers; `skip`: a reason the row is recorded as not measured). Any number of them:
  each is compared with its over row and has its own cost. The first is the reranker the
  readout decides on (`rerank_cost`, `p95_rerank_milliseconds` and the default triggers are its).
- `run`: a TREC run file a team already has (`file`, relative to the project).

The first row is the baseline every other row is compared against. Without `rows`, the four rows
of the SciFact review run (dense, sparse, hybrid as RRF of the two, hybrid+rerank over hybrid),
with the models and constants of the `evaluate:` block. This module imports nothing heavy: the
checker reads the roles without numpy or torch.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.core.text.wording import data_text_problem

KINDS = ("dense", "sparse", "fusion", "rerank", "run")
FUSION_METHODS = ("rrf", "minmax")
# bm25s's own defaults, set explicitly so the manifest states what ran.
BM25_K1 = 1.5
BM25_B = 0.75
MINMAX_ALPHA = 0.5
# The SciFact review's rows; results files written before rows were configurable hold these.
DEFAULT_BASELINE = "dense"
DEFAULT_RERANK_ROW = "hybrid+rerank"
DEFAULT_RERANK_OVER = "hybrid"
# No dot: a row name is a key of result paths (per_query.<row>.<query>), where a dot separates keys.
ROW_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]{0,39}")
# Words a sentence names a kind of row by (the aliases of generator.claims.tracing.rules.attribution): a row
# may carry one as its name only if it is of that kind, or a fusion row named "hybrid+rerank"
# would pass for the reranker in every sentence that says "reranker".
KIND_WORDS = {"dense": ("dense", "bi-encoder"), "sparse": ("sparse", "bm25", "bm25s"), "fusion": ("hybrid",),
              "rerank": ("hybrid+rerank", "rerank", "reranker", "reranked", "reranking", "cross-encoder")}


def name_kind_problem(name: str, kind: str) -> str | None:
    """Why a row of `kind` may not be called `name` (a word that says another kind), or None."""
    for word_kind, words in KIND_WORDS.items():
        if name.lower() in words and kind != word_kind:
            return f"a row named {name!r} must be a {word_kind} row: its name says what it is in every sentence"
    return None


# The keys each kind takes besides name and kind; a key of another kind is refused, not ignored.
_KEYS = {"dense": ("model",), "sparse": ("k1", "b"), "fusion": ("of", "method", "k", "alpha"),
         "rerank": ("over", "model", "depth", "max_length", "batch_size", "precision", "skip"),
         "run": ("file", "outside_project")}
PRECISIONS = ("fp32", "int8")


@dataclass(frozen=True)
class RowSpec:
    """One configured row. Unset parameters (None) take the `evaluate:` block's values."""

    name: str
    kind: str
    model: str | None = None
    k1: float | None = None
    b: float | None = None
    of: tuple[str, ...] = ()
    method: str | None = None
    k: int | None = None
    alpha: float | None = None
    over: str | None = None
    max_length: int | None = None
    file: Path | None = None
    depth: int | None = None           # rerank: how many of the over row's candidates it scores (None: all)
    batch_size: int | None = None
    precision: str | None = None
    skip: str | None = None            # rerank: why the row is recorded as not measured
    outside_project: bool = False      # run: the file may lie outside the project (said explicitly)

    def label(self, depth: int, model_name: str | None = None) -> str:
        """What the tables say the row is: its model (`model_name`, as resolved, for dense and
        rerank rows), its BM25 constants where they are not bm25s's own, its fusion, its file."""
        if self.kind == "dense":
            return model_name or self.model or ""
        if self.kind == "rerank":
            return (model_name or self.model or "") + self.setting_words()
        if self.kind == "sparse":
            constants = "" if (self.k1, self.b) == (BM25_K1, BM25_B) else f" k1={self.k1:g} b={self.b:g}"
            return "bm25s (BM25, Lucene variant)" + constants
        if self.kind == "fusion":
            fused = " and ".join([", ".join(self.of[:-1]), self.of[-1]])
            if self.method == "rrf":
                return f"RRF k={self.k} over {fused} top {depth}"
            return f"min-max fusion alpha={self.alpha:g} over {fused} top {depth}"
        return f"run file {self.file.name if self.file else ''}"

    def setting_words(self) -> str:
        """What a rerank row's label adds to its model: the depth and precision when they are not
        the whole candidate list at fp32 (a reader compares rows that share a model by these)."""
        words = [f"top {self.depth}"] if self.depth is not None else []
        words += [self.precision] if self.precision not in (None, "fp32") else []
        return f" ({', '.join(words)})" if words else ""

    def parameters(self) -> dict[str, Any]:
        """What the manifest records of this row: every parameter that changes its numbers."""
        entry: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "dense":
            entry["model"] = self.model
        elif self.kind == "sparse":
            entry.update({"k1": self.k1, "b": self.b})
        elif self.kind == "fusion":
            entry.update({"method": self.method, "of": list(self.of)})
            entry.update({"k": self.k} if self.method == "rrf" else {"alpha": self.alpha})
        elif self.kind == "rerank":
            entry.update({"over": self.over, "model": self.model, "max_length": self.max_length})
            # Only when set, so a results file made before rows took them stays current.
            entry.update({key: value for key, value in (("depth", self.depth), ("batch_size", self.batch_size),
                                                        ("precision", self.precision), ("skip", self.skip))
                          if value is not None})
        elif self.kind == "run":
            entry["file"] = self.file.name if self.file else None
        return entry


def default_rows() -> tuple[RowSpec, ...]:
    """The SciFact review's four rows, their parameters unset (`fill_defaults` gives them)."""
    return (RowSpec("dense", "dense"), RowSpec("sparse", "sparse"),
            RowSpec("hybrid", "fusion", of=("dense", "sparse"), method="rrf"),
            RowSpec(DEFAULT_RERANK_ROW, "rerank", over="hybrid"))


def fill_defaults(rows: tuple[RowSpec, ...], *, dense_model: str, rrf_k: int, rerank_model: str,
                  rerank_max_length: int) -> tuple[RowSpec, ...]:
    """Every unset parameter from the `evaluate:` block (or the command line)."""
    filled = []
    for row in rows:
        if row.kind == "dense":
            row = replace(row, model=row.model or dense_model)
        elif row.kind == "sparse":
            row = replace(row, k1=BM25_K1 if row.k1 is None else row.k1, b=BM25_B if row.b is None else row.b)
        elif row.kind == "fusion":
            method = row.method or "rrf"
            row = replace(row, method=method, k=(rrf_k if row.k is None else row.k) if method == "rrf" else None,
                          alpha=(MINMAX_ALPHA if row.alpha is None else row.alpha) if method == "minmax" else None)
        elif row.kind == "rerank":
            row = replace(row, model=row.model or rerank_model,
                          max_length=rerank_max_length if row.max_length is None else row.max_length)
        filled.append(row)
    return tuple(filled)


def parse_rows(raw: Any, config_display: str, field: str = "evaluate.rows") -> tuple[RowSpec, ...]:
    """The `rows:` list, each entry checked where it stands: a one-line error names the entry."""
    if not isinstance(raw, list) or not raw:
        raise InputError("expected a list of rows, the baseline first", path=config_display, field=field)
    rows: list[RowSpec] = []
    for index, item in enumerate(raw):
        entry = _Entry(item, f"{field}[{index}]", config_display, tuple(rows))
        name, kind = entry.name_and_kind()
        rows.append(_PARSE_KIND[kind](entry, RowSpec(name, kind)))
    return tuple(rows)


@dataclass(frozen=True)
class _Entry:
    """One entry of the `rows:` list, with the rows listed above it."""

    item: Any
    where: str
    config_display: str
    earlier: tuple[RowSpec, ...]

    def refuse(self, message: str, key: str | None = None) -> InputError:
        return InputError(message, path=self.config_display, field=f"{self.where}.{key}" if key else self.where)

    def name_and_kind(self) -> tuple[str, str]:
        item = self.item
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or "kind" not in item:
            raise self.refuse("expected {name: ROW, kind: dense|sparse|fusion|rerank|run, ...}")
        name = item["name"].strip()
        if (problem := data_text_problem(name)) or not ROW_NAME.fullmatch(name):
            raise self.refuse("a row name is a short identifier (letters, digits, _ + -)"
                              + (f": it {problem}" if problem else ""), "name")
        if any(row.name == name for row in self.earlier):
            raise self.refuse(f"row {name!r} already exists: each row has its own name", "name")
        kind = item["kind"]
        if kind not in KINDS:
            raise self.refuse(f"choose one of {', '.join(KINDS)}", "kind")
        if problem := name_kind_problem(name, kind):
            raise self.refuse(problem, "name")
        for key in sorted(set(map(str, item)) - {"name", "kind"}):
            if key not in _KEYS[kind]:
                raise self.refuse(f"a {kind} row takes {', '.join(_KEYS[kind])}", key)
        return name, kind

    def earlier_row(self, value: Any, key: str) -> str:
        names = [row.name for row in self.earlier]
        if not isinstance(value, str) or value not in names:
            raise self.refuse(f"name a row listed above this one ({', '.join(names) or 'none yet'})", key)
        return value

    def number(self, key: str, low: float, high: float, integer: bool = False) -> Any:
        value = self.item.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) \
                or not low <= value <= high:
            raise self.refuse(f"must be {'an integer' if integer else 'a number'} from {low:,} to {high:,}", key)
        return value

    def text(self, key: str, required: bool = False) -> str | None:
        value = self.item.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.refuse("expected a non-empty string", key)
        return value.strip()


def _parse_dense(entry: _Entry, spec: RowSpec) -> RowSpec:
    return replace(spec, model=entry.text("model"))


def _parse_sparse(entry: _Entry, spec: RowSpec) -> RowSpec:
    return replace(spec, k1=entry.number("k1", 0, 100), b=entry.number("b", 0, 1))


def _parse_fusion(entry: _Entry, spec: RowSpec) -> RowSpec:
    item = entry.item
    method = item.get("method", "rrf")
    if method not in FUSION_METHODS:
        raise entry.refuse(f"choose one of {', '.join(FUSION_METHODS)}", "method")
    fused = item.get("of")
    if not isinstance(fused, list) or len(fused) < 2:
        raise entry.refuse("expected a list of two or more rows to fuse", "of")
    names = tuple(entry.earlier_row(value, f"of[{position}]") for position, value in enumerate(fused))
    if len(set(names)) != len(names):
        raise entry.refuse("each row is fused once", "of")
    if method == "minmax" and len(names) != 2:
        raise entry.refuse("min-max fusion interpolates exactly two rows", "of")
    if method == "rrf" and "alpha" in item:
        raise entry.refuse("alpha weighs min-max fusion; RRF takes k", "alpha")
    if method == "minmax" and "k" in item:
        raise entry.refuse("k is RRF's constant; min-max fusion takes alpha", "k")
    return replace(spec, of=names, method=method, k=entry.number("k", 1, 1_000_000, integer=True),
                   alpha=entry.number("alpha", 0, 1))


def _parse_rerank(entry: _Entry, spec: RowSpec) -> RowSpec:
    precision = entry.item.get("precision")
    if precision is not None and precision not in PRECISIONS:
        raise entry.refuse(f"choose one of {', '.join(PRECISIONS)}", "precision")
    skip = entry.text("skip")
    if skip is not None and (problem := data_text_problem(skip)):
        raise entry.refuse(f"a reason is one line of text: it {problem}", "skip")
    return replace(spec, over=entry.earlier_row(entry.item.get("over"), "over"), model=entry.text("model"),
                   max_length=entry.number("max_length", 1, 65_536, integer=True),
                   depth=entry.number("depth", 1, 100_000, integer=True),
                   batch_size=entry.number("batch_size", 1, 65_536, integer=True), precision=precision, skip=skip)


def _parse_run(entry: _Entry, spec: RowSpec) -> RowSpec:
    outside = entry.item.get("outside_project", False)
    if not isinstance(outside, bool):
        raise entry.refuse("expected true or false", "outside_project")
    file = Path(entry.text("file", required=True)).expanduser()
    if not outside and (file.is_absolute() or ".." in file.parts):
        # A cloned project must not make evaluate read /etc/passwd or a sibling's files into its
        # results; reading from elsewhere is a choice the configuration states where it is made.
        raise entry.refuse(f"{str(file)[:120]!r} is outside the project: keep run files inside it (a path "
                           f"relative to the project, without '..'), or add `outside_project: true` to this row "
                           f"to read it from there deliberately", "file")
    return replace(spec, file=file, outside_project=outside)


_PARSE_KIND = {"dense": _parse_dense, "sparse": _parse_sparse, "fusion": _parse_fusion, "rerank": _parse_rerank,
               "run": _parse_run}


@dataclass(frozen=True)
class RowRoles:
    """What a results file's rows are to the checker and the renderer."""

    baseline: str
    rerank: str | None          # the reranker under decision (the first rerank row), if any
    rerank_over: str | None     # the row whose candidates it reorders
    names: tuple[str, ...]
    # Every rerank row, the first included, with the row it reorders: each is compared with it.
    reranks: tuple[tuple[str, str], ...] = ()

    @property
    def rerank_pairs(self) -> list[tuple[str, str]]:
        return list(self.reranks) or ([(self.rerank, self.rerank_over)] if self.rerank and self.rerank_over else [])


def roles_from_specs(rows: tuple[RowSpec, ...]) -> RowRoles:
    reranks = tuple((row.name, row.over) for row in rows if row.kind == "rerank" and row.over)
    first = reranks[0] if reranks else (None, None)
    return RowRoles(rows[0].name, first[0], first[1], tuple(row.name for row in rows), reranks)
