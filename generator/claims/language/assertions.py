"""What a claim asserts, in a form the checker computes: which row is higher than which, that a
difference is told from noise (after which correction), that two rows are equivalent within a
margin the design fixed, that a time fits a budget. The author writes the assertion; the checker
evaluates it from the results and the design, never from the author's arithmetic, and every
assertive word of the sentence must be licensed by an assertion that holds
(generator.claims.licensing).

Ledger form (a claim's `asserts:` list; each entry one kind, its rows, and what it is about)::

    asserts:
      - {higher: hybrid, than: dense, metric: nDCG@5}                 # hybrid's mean above dense's
      - {lower: hybrid+rerank, than: hybrid, metric: nDCG@5}
      - {higher: opaque, than: reranked, metric: nDCG@3, query: T-02}  # one query's values
      - {distinguishable: hybrid+rerank, from: hybrid, metric: nDCG@5, correction: holm}
      - {indistinguishable: hybrid, from: dense, metric: nDCG@5}     # correction: none (default)
      - {equivalent: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, margin: int8_margin}
      - {within_budget: hybrid+rerank, budget: rerank_p95_milliseconds}
      - {over_budget: hybrid+rerank, budget: rerank_p95_milliseconds}

Each may name its results file (`file:`, default results.json). What each holds when:

- `higher` / `lower`: the first row's mean of the metric (`table`) is above / below the other's;
  with `query:`, that one query's value (`per_query`).
- `distinguishable`: the pair's paired comparison (`comparisons`, either orientation, else
  `all_pairs`) says `distinguishable`: its 95% interval excludes zero and its sign-flip p-value is
  below 0.05; with `correction: holm`, the pair's `distinguishable_holm` in `all_pairs` (the
  p-value adjusted over every pair of the metric). `indistinguishable`: the same reading, false.
  A difference not told from noise never licenses "as good as".
- `equivalent`: two one-sided tests against a margin fixed in a design document's `budget` block
  (`margin:` names it), read from the pair's paired 95% interval: equivalent when the interval lies
  wholly inside (-margin, +margin), which is each one-sided test at the 2.5% level.
- `within_budget` / `over_budget`: the row's p95 milliseconds per query (`rerank_costs`) at or
  below / above the design budget `budget:` names.

An assertion on a row, a metric or a budget the files do not hold, or on a row that was not
measured, does not hold (and says why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from generator.results import RESULTS_NAME

# kind -> (the key naming the other row, or None; the class of lexicon words it licenses)
KINDS: dict[str, str | None] = {"higher": "than", "lower": "than", "distinguishable": "from",
                                "indistinguishable": "from", "equivalent": "to", "within_budget": None,
                                "over_budget": None}
CORRECTIONS = ("none", "holm")
# The assertion that says the opposite: a negated word ("does not beat") is licensed by it.
OPPOSITE = {"higher": "lower", "lower": "higher", "distinguishable": "indistinguishable",
            "indistinguishable": "distinguishable", "within_budget": "over_budget", "over_budget": "within_budget"}
SYMMETRIC = frozenset({"distinguishable", "indistinguishable", "equivalent"})


@dataclass(frozen=True)
class Assertion:
    kind: str
    row: str
    other: str | None = None
    metric: str | None = None
    file: str = RESULTS_NAME
    correction: str = "none"
    budget: str | None = None      # a design budget: the budget of a time, the margin of an equivalence
    query: str | None = None       # higher / lower on one query's value rather than the mean
    line: int = 0

    def text(self) -> str:
        """How a message names it: `higher: hybrid than dense on nDCG@5`."""
        other = f" {KINDS[self.kind]} {self.other}" if self.other else ""
        metric = f" on {self.metric}" if self.metric else ""
        budget = f" ({'margin' if self.kind == 'equivalent' else 'budget'} {self.budget})" if self.budget else ""
        correction = f", {self.correction}" if self.correction != "none" else ""
        query = f" of query {self.query}" if self.query else ""
        return f"{self.kind}: {self.row}{other}{metric}{query}{budget}{correction}"

    def rows(self) -> tuple[str, ...]:
        return (self.row, self.other) if self.other else (self.row,)


def parse_assertion(entry: Mapping[str, Any]) -> tuple[Assertion | None, str | None]:
    """An assertion from its ledger mapping (values already text), or why it is not one."""
    kinds = [kind for kind in KINDS if kind in entry]
    if len(kinds) != 1:
        return None, f"an assertion names exactly one of {', '.join(KINDS)}"
    kind = kinds[0]
    partner = KINDS[kind]
    allowed = {kind, "file", "metric"} | ({partner} if partner else set()) | (
        {"query"} if kind in ("higher", "lower") else set()) | (
        {"correction"} if kind in ("distinguishable", "indistinguishable") else set()) | (
        {"margin"} if kind == "equivalent" else set()) | ({"budget"} if kind.endswith("budget") else set())
    unknown = sorted(set(entry) - allowed)
    if unknown:
        return None, f"{kind}: unknown key {unknown[0]}; allowed: {', '.join(sorted(allowed))}"
    if partner and not entry.get(partner):
        return None, f"{kind}: {entry.get(kind)} needs `{partner}:` (the other row)"
    if partner and entry.get(partner) == entry.get(kind):
        return None, f"{kind}: a row is not compared with itself"
    if kind in ("higher", "lower", "distinguishable", "indistinguishable", "equivalent") and not entry.get("metric"):
        return None, f"{kind}: needs `metric:` (nDCG@5, recall@5, ...)"
    if kind == "equivalent" and not entry.get("margin"):
        return None, "equivalent: needs `margin:`, a budget a design document fixes before the results"
    if kind.endswith("budget") and not entry.get("budget"):
        return None, f"{kind}: needs `budget:`, a budget of a design document"
    correction = entry.get("correction", "none")
    if correction not in CORRECTIONS:
        return None, f"{kind}: correction is one of {', '.join(CORRECTIONS)}"
    return Assertion(kind, str(entry[kind]), str(entry[partner]) if partner else None, entry.get("metric"),
                     entry.get("file", RESULTS_NAME), correction,
                     entry.get("margin") if kind == "equivalent" else entry.get("budget"), entry.get("query")), None
