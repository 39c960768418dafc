"""What a claim frame is in the ledger: one kind, its rows, and what it is about.

A frame replaces a claim's `text`: the package writes the sentence from the computed result
(generator.claims.frames.readings, generator.claims.frames.phrasing), so it cannot say more than
was computed. Ledger form (a claim's `frame:` mapping; the first key is the kind, naming its
subject)::

    frame: {value: hybrid, metric: nDCG@5}                            # a row's mean (or [dense, sparse, hybrid])
    frame: {record: same_50_rows_after_rerank}                        # what a results file records (or a list)
    frame: {value: hybrid, metric: nDCG@5, statistic: query, query: "13"}
    frame: {comparison: hybrid+rerank, against: hybrid, metric: nDCG@5}            # the mean change
    frame: {comparison: hybrid, against: dense, metric: nDCG@5, statistic: share}  # queries won, tied, lost
    frame: {comparison: hybrid, against: dense, metric: nDCG@5, statistic: query, query: "13"}
    frame: {comparison: hybrid, against: dense, metric: nDCG@5, correction: holm, effect: D5, relative: true}
    frame: {equivalence: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, margin: regression}
    frame: {noninferiority: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, margin: regression}
    frame: {budget: hybrid+rerank, limit: budget.rerank_p95_milliseconds}
    frame: {power: hybrid+rerank, against: hybrid, metric: nDCG@5, effect: D5}
    frame: {since_baseline: hybrid, metric: nDCG@5}
    frame: {decision: D5}
    frame: {ceiling: hybrid, metric: nDCG@5}
    frame: {diagnosis: hybrid}                                        # queries with a candidate miss, an ordering problem
    frame: {diagnosis: hybrid, query: T-02}                           # one query's
    frame: {cost: hybrid+bge-v2-m3}
    frame: {frontier: cheapest, limit: budget.rerank_p95_milliseconds}
    frame: {quote: requirements.md, text: "Retrieval on public scientific claims, not clinical guidelines."}

Every frame but `decision`, `quote` and `since_baseline` may name its results file (`file:`,
default results.json), and every frame its phrasing (`phrasing:`, one of the package's phrasings
of its kind; generator/claims/frames/phrasings/). Thresholds (`margin`, `limit`, `effect`) are
typed references to the design (generator.claims.frames.thresholds).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from generator.core.dataclass import dataclass
from generator.core.results import RESULTS_NAME

MEAN, SHARE, QUERY = "mean", "share", "query"
STATISTICS = (MEAN, SHARE, QUERY)
CORRECTIONS = ("none", "holm")
CHEAPEST = "cheapest"

# kind -> (what its first key names, required keys, optional keys)
KINDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "value": ("row", ("metric",), ("file", "statistic", "query")),
    "record": ("path", (), ("file",)),
    "comparison": ("row", ("against", "metric"), ("file", "statistic", "query", "correction", "effect",
                                                  "relative")),
    "equivalence": ("row", ("to", "metric", "margin"), ("file",)),
    "noninferiority": ("row", ("to", "metric", "margin"), ("file",)),
    "budget": ("row", ("limit",), ("file",)),
    "power": ("row", ("against", "metric"), ("file", "effect")),
    "since_baseline": ("row", ("metric",), ()),
    "decision": ("decision", (), ()),
    "ceiling": ("row", ("metric",), ("file",)),
    "diagnosis": ("row", (), ("file", "query")),
    "cost": ("row", (), ("file",)),
    "frontier": ("configuration", ("limit",), ("file",)),
    "quote": ("document", ("text",), ()),
}
COMMON = ("phrasing",)
# The kinds whose subject may be a list: several rows' means, several recorded values.
LISTS = ("value", "record")
# The kinds that read no results file of their own.
NO_FILE = ("decision", "quote", "since_baseline")


@dataclass(frozen=True)
class Frame:
    kind: str
    subject: tuple[str, ...]          # its row(s), decision id, document or configuration
    options: dict[str, str] = field(default_factory=dict)
    line: int = 0

    @property
    def row(self) -> str:
        return self.subject[0]

    @property
    def rows(self) -> tuple[str, ...]:
        """Every row the frame is about: its subject rows and the one it is compared with."""
        if KINDS[self.kind][0] != "row":
            return ()
        other = self.options.get("against") or self.options.get("to")
        return self.subject + ((other,) if other else ())

    @property
    def file(self) -> str:
        return self.options.get("file", RESULTS_NAME)

    @property
    def metric(self) -> str | None:
        return self.options.get("metric")

    @property
    def statistic(self) -> str:
        return self.options.get("statistic", MEAN)

    @property
    def phrasing(self) -> str | None:
        return self.options.get("phrasing")

    def key(self) -> str:
        """Everything the frame says, in one text: two frames with the same key write the same sentence."""
        options = ", ".join(f"{key}: {value}" for key, value in sorted(self.options.items()))
        return f"frame {self.kind}: {' + '.join(self.subject)}; {options}"

    def describe(self) -> str:
        """How a message names it: `comparison: hybrid+rerank against hybrid on nDCG@5`."""
        parts = [f"{self.kind}: {', '.join(self.subject)}"]
        for key in ("against", "to"):
            if key in self.options:
                parts.append(f"{'against' if key == 'against' else 'to'} {self.options[key]}")
        if self.metric:
            parts.append(f"on {self.metric}")
        if self.statistic != MEAN:
            parts.append(f"({self.statistic}{' ' + self.options['query'] if 'query' in self.options else ''})")
        return " ".join(parts)


def parse_frame(entry: dict[str, Any], line: int = 0) -> tuple[Frame | None, str | None]:
    """A frame from its ledger mapping (each value text, or a list of texts for `value`'s rows),
    or why it is not one."""
    kinds = [kind for kind in KINDS if kind in entry]
    if len(kinds) != 1:
        return None, f"a frame names exactly one kind: {', '.join(KINDS)}"
    kind = kinds[0]
    _subject, required, optional = KINDS[kind]
    allowed = {kind, *required, *optional, *COMMON}
    unknown = sorted(set(entry) - allowed)
    if unknown:
        return None, f"{kind}: unknown key {unknown[0]}; allowed: {', '.join(sorted(allowed))}"
    missing = [key for key in required if not entry.get(key)]
    if missing:
        return None, f"{kind}: needs `{missing[0]}:`"
    subject = entry[kind]
    if isinstance(subject, list):
        if kind not in LISTS or not subject:
            return None, f"{kind}: names one {KINDS[kind][0]}" if kind not in LISTS else f"{kind}: an empty list"
        if len(set(subject)) != len(subject):
            return None, f"{kind}: a {KINDS[kind][0]} is listed twice"
        subject_tuple = tuple(str(item) for item in subject)
    elif isinstance(subject, str) and subject.strip():
        subject_tuple = (subject,)
    else:
        return None, f"{kind}: names its {KINDS[kind][0]}"
    options = {key: value for key, value in entry.items() if key != kind}
    if any(not isinstance(value, str) for value in options.values()):
        return None, f"{kind}: every key but the rows of `value` holds one text"
    problem = _options_problem(kind, subject_tuple, options)
    if problem:
        return None, problem
    return Frame(kind, subject_tuple, options, line), None


def _options_problem(kind: str, subject: tuple[str, ...], options: dict[str, str]) -> str | None:
    other = options.get("against") or options.get("to")
    if other is not None and other in subject:
        return f"{kind}: a row is not compared with itself"
    statistic = options.get("statistic", MEAN)
    if statistic not in STATISTICS or (kind == "value" and statistic == SHARE):
        choices = (MEAN, QUERY) if kind == "value" else STATISTICS
        return f"{kind}: statistic is one of {', '.join(choices)}"
    if kind == "diagnosis":
        return None
    if statistic == QUERY and not options.get("query"):
        return f"{kind}: statistic: query needs `query:` (the query id)"
    if "query" in options and statistic != QUERY:
        return f"{kind}: `query:` goes with statistic: query"
    if kind == "value" and statistic == QUERY and len(subject) > 1:
        return "value: one query's value is of one row"
    if options.get("correction", "none") not in CORRECTIONS:
        return f"{kind}: correction is one of {', '.join(CORRECTIONS)}"
    if "relative" in options and options["relative"] not in ("true", "false"):
        return f"{kind}: relative is true or false"
    if statistic != MEAN and ("effect" in options or options.get("relative") == "true" or "correction" in options):
        return f"{kind}: effect, relative and correction are about the mean (statistic: mean)"
    if kind == "frontier" and subject != (CHEAPEST,):
        return f"frontier: the configuration is `{CHEAPEST}` (the cheapest that fits the limit)"
    return None
