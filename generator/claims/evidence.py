"""What one source of a claim showed: the quote and where it stands, the value and how it was
placed, or the decision row a verdict cites. Every rule that reads a source reports it this way,
and the renderer shows it to the reader beside the claim.
"""

from __future__ import annotations

from typing import Any

from generator.core.dataclass import dataclass


@dataclass
class Evidence:
    kind: str                                # "design" | "measured" | "decision"
    ok: bool = True                          # this source holds
    # design
    document: str | None = None              # as written in the ledger (relative to design/)
    line: int | None = None                  # document line where the quote starts
    heading: str | None = None               # nearest Markdown heading above it
    quote: str | None = None                 # the quote, whitespace-normalised
    # measured
    file: str | None = None                  # as written (relative to outputs/)
    path: str | None = None
    name: str | None = None                  # the value name in the claim
    value: Any = None                        # raw JSON value
    formatted: str | None = None             # as placed in the text (None when not placed)
    predicate: str | None = None             # the source's predicate (on each of its values)
    predicate_holds: bool | None = None
    # decision: document, line, heading and predicate name the trigger; value is the decision row
