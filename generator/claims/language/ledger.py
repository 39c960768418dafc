"""The claim ledger: every sentence the reports say, with the evidence that must support it.

File format (`claims/ledger.yaml`; JSON Schema in `claims/ledger.schema.json`)::

    version: 1
    languages: [de]                      # optional: languages besides English (generator.core.text.verdicts)
    claims:
      - id: hybrid-beats-dense-ndcg5     # unique; letters, digits, '-', '_', '.'; starts alphanumeric
        output: readout                  # teachback | aar | readout
        section: results                 # a section of that output (readout.yaml `outputs:`)
        kind: evaluative                 # factual | causal | evaluative | performance | recommendation
        text: "Hybrid reaches nDCG@5 {hybrid:.3f} against dense {dense:.3f}."
        status: active                   # active (default) | struck
        # strike_reason: "..."           # required when struck, refused otherwise
        # strike_display: withdrawn      # when struck: withdrawn (listed last with its reason, default) |
        #                                # strike (struck through in place, never in the verdict) | omit
        sources:
          - design:
              document: decisions.md     # a file inside design/; no '..', no absolute path
              quote: "RRF with constant 60"
          - measured:
              file: results.json         # a JSON file in outputs/ (default results.json)
              values:                    # name -> path into that file (grammar: generator/core/results/paths.py)
                hybrid: "table[search=hybrid].nDCG@5"
                dense: "table[search=dense].nDCG@5"
              predicate: "hybrid > dense"   # optional; grammar: generator/claims/language/predicates.py
          - decision:                    # a verdict computed by a decision record's trigger
              trigger: D5                # a fenced trigger block in design/ (generator/claims/record/triggers.py)
              state: does not fire       # fires | does not fire | cannot be decided
        asserts:                         # what the sentence asserts, computed by the checker
          - {higher: hybrid, than: dense, metric: nDCG@5}   # (generator/claims/language/assertions.py)

Rules the loader enforces (a violation makes the ledger unusable: exit 2, `file:line: field:
message`): YAML read with the safe composer only; every scalar is kept as the text written
(so `quote: 2030` is the string "2030", and `status: yes` is refused, not turned into true);
no unknown field anywhere; no duplicate key; `version` is 1; ids unique and at most MAX_ID_CHARS
characters (so are value names), value paths at most MAX_PATH_CHARS; `kind`, `output`,
`status`, `strike_display` from their fixed lists; each source has exactly one of `design`,
`measured` or `decision`; value names are plain identifiers, unique within a claim; every `{placeholder}` in
`text` is a plain declared value name with an optional format spec (`{name}` or `{name:.3f}`;
`{{` and `}}` are literal braces; no `{a.b}`, `{a[0]}` or `{a!r}`); every name in a predicate is
declared; a design document name stays inside design/. The loader is
`generator.claims.language.ledger_loader`; this module holds the claim model it builds.

Whether each claim *traces* is decided by `generator.claims.tracing.checker`, not here (its docstring
gives the rules and the scores). Beside the ledger in `claims/`:
`design-freeze.json` (`readout freeze`: sha256 of every file in design/),
`trace-history.jsonl` (append-only; one line per ledger version the first time `readout check`
sees its sha256; the first line is the first-draft score) and `ledger.first-draft.yaml` (the
ledger as first written, whose sha256 is that first line's).
A draft in Markdown becomes unsourced claims through `generator.claims.language.draft`.
"""

from __future__ import annotations

import re
import string
from dataclasses import field
from pathlib import Path
from typing import Union

from generator.claims.frames.spec import COMMON as FRAME_COMMON, KINDS as FRAME_KINDS, Frame
from generator.claims.language.formats import spec_problem
from generator.claims.language.predicates import Predicate
from generator.core.dataclass import dataclass
from generator.project.outputs import OUTPUT_NAMES
from generator.core.results import Step

LEDGER_VERSION = "1"
ENGLISH = "en"
OUTPUTS = OUTPUT_NAMES
KINDS = ("factual", "causal", "evaluative", "performance", "recommendation")
STATUSES = ("active", "struck")
STRIKE_DISPLAYS = ("withdrawn", "strike", "omit")

TOP_FIELDS = ("version", "languages", "claims")
CLAIM_FIELDS = ("id", "output", "section", "kind", "text", "frame", "language", "status", "strike_reason",
                "strike_display", "sources")
# Every key a frame may hold (generator.claims.frames.spec says which go with which kind).
FRAME_FIELDS = (*FRAME_KINDS, *sorted({key for _subject, required, optional in FRAME_KINDS.values()
                                       for key in (*required, *optional)}), *FRAME_COMMON)
REQUIRED_CLAIM_FIELDS = ("id", "output", "section", "kind")
# The ledger form before frames: what it asserted is now a frame the tool writes.
RETIRED_FIELDS = {"asserts": "a claim no longer asserts beside its own words: write what it asserts as a `frame:` "
                             "(the package writes the sentence from the computed result; docs/claims.md, "
                             "'Frames'); `readout upgrade-ledger` converts a ledger"}
SOURCE_KINDS = ("design", "measured", "decision")
DESIGN_FIELDS = ("document", "quote")
DECISION_FIELDS = ("trigger", "state")
# What a decision record's trigger computed (generator.claims.record.triggers).
DECISION_STATES = ("fires", "does not fire", "cannot be decided")
MEASURED_FIELDS = ("file", "values", "predicate")
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# Bounds: a ledger beyond them is refused with one line, never a crash.
MAX_CLAIMS = 20_000
MAX_TEXT = 2_000
MAX_VALUES = 32
# An id is repeated in every message about its claim, and a path in every finding about its value.
MAX_ID_CHARS = 80
MAX_PATH_CHARS = 500
# The longest message from the path, predicate and placeholder parsers a ledger error repeats.
MAX_REASON_CHARS = 200
STRIKE_REASON_MAX_WORDS = 12
SECTION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


# --- data model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placeholder:
    """One `{name:spec}` in a claim's text."""

    name: str
    spec: str


@dataclass(frozen=True)
class DesignSource:
    document: str          # relative to design/, as written
    quote: str
    line: int              # ledger line of the `design:` entry
    kind: str = "design"


@dataclass(frozen=True)
class MeasuredSource:
    file: str              # relative to outputs/, as written
    values: dict[str, str]           # name -> path text
    steps: dict[str, tuple[Step, ...]]
    predicate: str | None
    compiled: Predicate | None
    line: int
    value_lines: dict[str, int] = field(default_factory=dict)
    kind: str = "measured"


@dataclass(frozen=True)
class DecisionSource:
    """A verdict computed by a decision record's reversal trigger: the claim holds when `check`
    computes the same state and the sentence says the decision that state gives."""

    trigger: str           # the decision id, e.g. D5
    state: str             # one of DECISION_STATES
    line: int
    kind: str = "decision"


Source = Union[DesignSource, MeasuredSource, DecisionSource]


@dataclass(frozen=True)
class Claim:
    id: str
    line: int
    output: str
    section: str
    kind: str
    text: str
    status: str = "active"
    strike_reason: str | None = None
    strike_display: str | None = None
    sources: tuple[Source, ...] = ()
    placeholders: tuple[Placeholder, ...] = ()
    field_lines: dict[str, int] = field(default_factory=dict)
    # The sentence the package writes from a computed result (generator.claims.frames); the claim
    # then has no `text` of its own.
    frame: Frame | None = None
    # The language the claim is written in (English, or one the ledger declares): its frame's
    # sentence, and the lexicon its free prose is read with.
    language: str = "en"

    @property
    def framed(self) -> bool:
        return self.frame is not None

    @property
    def struck(self) -> bool:
        return self.status == "struck"

    @property
    def design_sources(self) -> list[DesignSource]:
        return [source for source in self.sources if isinstance(source, DesignSource)]

    @property
    def measured_sources(self) -> list[MeasuredSource]:
        return [source for source in self.sources if isinstance(source, MeasuredSource)]

    @property
    def decision_sources(self) -> list[DecisionSource]:
        return [source for source in self.sources if isinstance(source, DecisionSource)]


@dataclass(frozen=True)
class Ledger:
    path: Path
    sha256: str
    claims: tuple[Claim, ...]
    version: str = LEDGER_VERSION
    # The languages its claims are written in besides English: verdicts are recognised in each.
    languages: tuple[str, ...] = ()

    def by_id(self) -> dict[str, Claim]:
        return {claim.id: claim for claim in self.claims}


# --- a claim text's placeholders -------------------------------------------------------------


def parse_placeholders(text: str) -> tuple[Placeholder, ...]:
    """The `{name:spec}` fields of a claim text; raises ValueError for anything but plain names."""
    found: list[Placeholder] = []
    for _literal, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if conversion:
            raise ValueError(f"placeholder {{{name}!{conversion}}}: conversions are not allowed")
        if not name.isidentifier():
            raise ValueError(f"placeholder {{{name}}}: only a plain value name is allowed "
                             "(no attribute, index or positional field)")
        if "{" in (spec or ""):
            raise ValueError(f"placeholder {{{name}}}: nested fields in a format spec are not allowed")
        problem = spec_problem(spec or "")
        if problem:
            raise ValueError(f"placeholder {{{name}}}: {problem}")
        found.append(Placeholder(name=name, spec=spec or ""))
    return tuple(found)


def literal_text(text: str, marker: str = "\x00") -> str:
    """The claim text with each placeholder replaced by `marker` and `{{`/`}}` unescaped."""
    parts: list[str] = []
    for literal, name, _spec, _conversion in string.Formatter().parse(text):
        parts.append(literal)
        if name is not None:
            parts.append(marker)
    return "".join(parts)
