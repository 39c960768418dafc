"""The number rule: which runs of digits in a claim's text are numbers a reader would take as facts.

After removing placeholders and URLs, a *number* is a run of digits with optional inner `.` or
`,` groups (`20`, `0.81`, `2030`, `11.1`, `10,000`) that touches no letter, digit, `_`, `@` or `.`
before it and no letter, digit, `_`, `@` or `.x` after it. Digits inside a label are not numbers:
`nDCG@5`, `Recall@50`, `BM25`, `p95`, `v6.0.0`, `MiniLM-L6-v2`, `results-300.json`, and
identifiers whose digits follow a capital letter and a hyphen (`T-03`, `D-010`, `IDX-L03-001`).
Code spans are prose here: a number in backticks is still a number. Spelled-out numbers
(`four rows`) are not detected. A number is accounted for when the same value occurs as a number
in the quote of one of the claim's design sources or in one of its predicates (a threshold the
checker verifies); otherwise it was typed by hand and the claim does not trace.
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![A-Za-z0-9_@.])(?<![A-Z]-)(?<![A-Z][0-9]-)(?<![A-Z][0-9][0-9]-)\d+(?:[.,]\d+)*"
                    r"(?![A-Za-z0-9_@]|\.[A-Za-z0-9])")
_NOT_PROSE = re.compile(r"<https?://[^>]*>|https?://[^\s)\]>]+")


def number_tokens(text: str) -> list[str]:
    """Numbers written in prose, by the number rule in this module's docstring."""
    return NUMBER.findall(_NOT_PROSE.sub(" ", text))


def number_value(token: str) -> float:
    return float(token.replace(",", ""))
