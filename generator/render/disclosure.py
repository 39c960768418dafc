"""Disclosure the tool owns: the blocks that tell a reader how far to trust the verdict.

The trace line, the decision table (each trigger, what it computed, the query set it read, whether
its rule was fixed before the results), one line per decision whose rule was set or moved after
the results and the full record of each such change (a diff of its rule, generator.render.amendments),
the post hoc mark beside a verdict that cites one, the order of the review, the provenance and the
sample a table is measured on are rendered from the package's macros and stylesheet
(disclosure.html.j2, disclosure.css), with the package's words (generator.render.labels).

They are not policed on a page a team wrote: the page is the package's (generator.render.shell),
which places every block itself, in flow and in a fixed order, with a theme and content slots
that cannot reach them. What a release render enforces statically is exactly what the browser
tests (tests/render/test_shell_browser.py) prove sufficient: the page is the package's (a page of
the project's own is marked as such and fails `render --check`), the theme passed its validation,
the slots hold text markup only, the labels are the tool's, and outputs/ holds only files the tool
wrote. A page of the project's own still receives the blocks, rendered, as `disclosure`
(`{{ disclosure.decisions }}`, ...), so it renders; it is never verified.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator.core.dataclass import dataclass
from generator.render.bytecode import SignedBytecode

OWN_DIR = Path(__file__).resolve().parent
TEMPLATE = "disclosure.html.j2"
STYLESHEET = OWN_DIR / "disclosure.css"


@dataclass
class Disclosure:
    """The blocks of one output, rendered (marked), for a page of the project's own."""

    decisions: Markup = Markup("")
    order: Markup = Markup("")
    provenance: Markup = Markup("")
    table_sample: Markup = Markup("")
    post_hoc_mark: Markup = Markup("")


@functools.lru_cache(maxsize=1)
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(loader=FileSystemLoader(str(OWN_DIR)), autoescape=True, undefined=StrictUndefined,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                       bytecode_cache=SignedBytecode())


def _macro(name: str, labels: Any, *args: Any) -> Markup:
    module = _environment().get_template(TEMPLATE).make_module({"L": labels})
    return Markup(getattr(module, name)(*args))


def post_hoc_mark(labels: Any, html: bool) -> Any:
    """The mark beside a verdict whose decision's rule was set or moved after the results."""
    return _macro("post_hoc_mark", labels) if html else " **" + str(labels.post_hoc_verdict) + "**"


def build_disclosure(labels: Any, *, decisions: list[dict], order: list[tuple[Any, Any]],
                     provenance: list[dict], table_sample: Any, html: bool) -> Disclosure:
    """Each block rendered with the package's macros, for a page of the project's own (HTML)."""
    if not html:
        return Disclosure(post_hoc_mark=Markup(post_hoc_mark(labels, html=False)))
    return Disclosure(
        decisions=Markup('<style data-readout="style">\n') + Markup(STYLESHEET.read_text(encoding="utf-8"))
        + Markup("</style>\n") + _macro("decisions", labels, decisions) if decisions else Markup(""),
        order=_macro("order", labels, order),
        provenance=_macro("provenance", labels, provenance, order),
        table_sample=_macro("sample", labels, table_sample) if table_sample else Markup(""),
        post_hoc_mark=post_hoc_mark(labels, html=True))
