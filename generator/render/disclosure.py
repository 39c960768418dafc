"""Disclosure the tool owns: the blocks that tell a reader how far to trust the verdict.

The decision table (each trigger, what it computed, whether its rule was fixed before the results),
every rule set or moved after the results with its old rule, new rule and reason, the post hoc
mark beside a verdict that cites such a rule, the order of the review (when the design was first
frozen, what git anchors), the provenance (hashes, models, packages, inputs) and the sample a table
is measured on are rendered here, from a template and a stylesheet the package ships
(disclosure.html.j2, disclosure.css), with labels a team cannot change. A team's readout template
places them (`{{ disclosure.decisions }}`, `{{ disclosure.order }}`, `{{ disclosure.provenance }}`,
`{{ disclosure.table_sample }}`; a post hoc verdict's mark comes with its claim as `{{ c.post_hoc_mark }}`)
and nothing else.

A release render then verifies the page a reader gets, before anything is written:

- **present**: each block appears verbatim (a block deleted, edited, relabelled or left out of the
  sections of readout.yaml is refused): the provenance always, the decision table and the order of
  the review whenever the design holds a decision;
- **its own words**: every label a block reads is the package's (templates/labels.yaml may not
  relabel "post hoc" as "pre-registered");
- **not hidden**: every stylesheet and `style` attribute of the page is parsed with a real CSS
  tokenizer (tinycss2: escapes decoded, so `cont\\65 nt` is `content`); no declaration may add text
  (`content`), and no rule that hides, shrinks, clips, moves or fades may select a block, anything
  inside one, or any element around one (its selectors are matched on the page itself, with
  soupsieve). `@import` and `@font-face` are refused: what they load cannot be read here.

Limits: a rule's selector is matched without its pseudo-classes of state (:hover, :target, ...)
and media conditions, so a rule that could select a block in some state counts as selecting it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from markupsafe import Markup

OWN_DIR = Path(__file__).resolve().parent
TEMPLATE = "disclosure.html.j2"
STYLESHEET = OWN_DIR / "disclosure.css"
_CONTENT_OK = {"none", "normal", ""}
# Pseudo-elements and pseudo-classes of state: stripped before a selector is matched on the page.
_PSEUDO = re.compile(r"::?(?:before|after|first-line|first-letter|marker|placeholder|selection|backdrop|hover|"
                     r"focus|focus-within|focus-visible|active|visited|target|link|checked)(?![\w-])", re.IGNORECASE)


class RecordingLabels:
    """The label registry, recording every key a disclosure block reads."""

    def __init__(self, labels: Any):
        self._labels = labels
        self.read: set[str] = set()

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self._labels[key]

    def raw(self, key: str) -> str:
        self.read.add(key)
        return self._labels.raw(key)

    def has(self, key: str) -> bool:
        return self._labels.has(key)


@dataclass
class Disclosure:
    """The blocks of one output, rendered (marked, as the template receives them)."""

    decisions: Markup = Markup("")
    order: Markup = Markup("")
    provenance: Markup = Markup("")
    table_sample: Markup = Markup("")
    post_hoc_mark: Markup = Markup("")
    labels_read: set[str] = field(default_factory=set)

    def required(self) -> dict[str, str]:
        """Each block a release page must hold verbatim, by name: the provenance always, the
        decisions and the order of the review wherever there is a decision to disclose."""
        names = ("provenance", "decisions", "order") if str(self.decisions).strip() else ("provenance",)
        return {name: str(getattr(self, name)) for name in names}


@functools.lru_cache(maxsize=1)
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(loader=FileSystemLoader(str(OWN_DIR)), autoescape=True, undefined=StrictUndefined,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _macro(name: str, labels: Any, *args: Any) -> Markup:
    module = _environment().get_template(TEMPLATE).make_module({"L": labels})
    return Markup(getattr(module, name)(*args))


def stylesheet_element() -> Markup:
    """The decision table's own styles, inside the block: the one stylesheet the check skips."""
    return Markup('<style data-readout="style">\n') + Markup(STYLESHEET.read_text(encoding="utf-8")) + \
        Markup("</style>\n")


def build_disclosure(labels: Any, *, decisions: list[dict], order: list[tuple[Any, Any]],
                     provenance: list[dict], table_sample: Any, html: bool) -> Disclosure:
    """Render each block with the package's template (HTML outputs only; a Markdown report keeps
    its template's own tables)."""
    if not html:
        return Disclosure()
    recording = RecordingLabels(labels)
    built = Disclosure(
        decisions=stylesheet_element() + _macro("decisions", recording, decisions) if decisions else Markup(""),
        order=_macro("order", recording, order),
        provenance=_macro("provenance", recording, provenance),
        table_sample=_macro("sample", recording, table_sample) if table_sample else Markup(""),
        post_hoc_mark=_macro("post_hoc_mark", recording))
    built.labels_read = set(recording.read)
    return built


def relabelled(labels_read: Iterable[str], texts: dict[str, str], package: dict[str, str]) -> list[str]:
    """The disclosure labels a project's label registry changes from the package's."""
    return sorted(key for key in labels_read if key in package and texts.get(key) != package[key])


# --- the page a reader gets ------------------------------------------------------------------------


def missing_blocks(marked: str, disclosure: Disclosure, post_hoc_claims: Iterable[str], file: str) -> list[str]:
    """Each required block (and each post hoc verdict with its mark) not on the page verbatim."""
    problems = [f"{file}: the tool's {name} block is missing or changed: place {{{{ disclosure.{name} }}}} unchanged "
                f"and show `{name}` in a section of readout.yaml"
                for name, block in disclosure.required().items() if block not in marked]
    for claim in post_hoc_claims:
        if claim not in marked:
            problems.append(f"{file}: a verdict that cites a rule set after the results is shown without its "
                            "post hoc mark: place {{ c.post_hoc_mark }} right after {{ c.text }}")
            break
    return problems


def _tokens(values: list) -> list:
    return [token for token in values if token.type not in ("whitespace", "comment")]


def _number(token: Any) -> float | None:
    return float(token.value) if token.type in ("number", "dimension", "percentage") else None


def hides(name: str, value: list) -> bool:
    """Whether a declaration can hide, shrink, clip, move or fade what it applies to."""
    tokens = _tokens(value)
    idents = {token.lower_value for token in tokens if token.type == "ident"}
    numbers = [(token, _number(token)) for token in tokens if _number(token) is not None]
    if name == "display":
        return "none" in idents or "contents" in idents
    if name == "visibility":
        return bool(idents & {"hidden", "collapse"})
    if name == "opacity" or name == "fill-opacity":
        return any((token.type == "percentage" and number < 90) or (token.type != "percentage" and number < 0.9)
                   for token, number in numbers)
    if name == "font-size":
        return any(number <= 0 or (token.type == "dimension" and token.lower_unit == "px" and number < 8) or
                   (token.type == "dimension" and token.lower_unit in ("em", "rem", "ex", "ch") and number < 0.6) or
                   (token.type == "percentage" and number < 60) for token, number in numbers) or \
            bool(idents & {"xx-small", "x-small"})
    if name in ("color", "-webkit-text-fill-color"):
        return "transparent" in idents or any(token.type == "function" and token.lower_name in ("rgba", "hsla", "rgb", "hsl")
                                              and _alpha_zero(token) for token in tokens)
    if name in ("clip", "clip-path", "mask", "mask-image", "filter", "backdrop-filter", "mix-blend-mode",
                "transform", "content-visibility", "-webkit-mask", "-webkit-mask-image", "zoom", "scale"):
        return not idents <= {"none", "normal", "auto", "visible"} or any(token.type != "ident" for token in tokens)
    if name in ("height", "max-height", "width", "max-width", "line-height", "block-size", "inline-size"):
        return any(number == 0 for _, number in numbers)
    if name in ("text-indent", "letter-spacing", "word-spacing", "z-index", "left", "top", "right", "bottom",
                "margin", "margin-left", "margin-top", "margin-right", "margin-bottom", "inset"):
        return any(number < 0 for _, number in numbers)
    if name == "position":
        return bool(idents & {"absolute", "fixed"})
    if name in ("overflow", "overflow-x", "overflow-y", "text-overflow"):
        return False
    return False


def _alpha_zero(function: Any) -> bool:
    numbers = [_number(token) for token in _tokens(function.arguments) if _number(token) is not None]
    return len(numbers) == 4 and numbers[-1] == 0


def _adds_text(name: str, value: list) -> bool:
    if name != "content":
        return False
    tokens = _tokens(value)
    return not (len(tokens) <= 1 and all(token.type == "ident" and token.lower_value in _CONTENT_OK
                                         for token in tokens))


@dataclass
class _Page:
    soup: Any
    guarded: set[int]            # ids of every block element, everything inside one and around one


def _page(html: str) -> _Page:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html5lib")
    guarded: set[int] = set()
    for block in soup.select("[data-readout]"):
        guarded.add(id(block))
        guarded.update(id(element) for element in block.find_all(True))
        guarded.update(id(element) for element in block.parents)
    return _Page(soup, guarded)


def _selects_guarded(page: _Page, prelude: str) -> tuple[bool, str | None]:
    """Whether any selector of a rule's prelude selects a guarded element (None: it cannot be read)."""
    import soupsieve

    for selector in prelude.split(","):
        plain = _PSEUDO.sub("", selector).strip() or "*"
        plain = re.sub(r"^([>+~])", r"* \1", re.sub(r"([>+~])$", r"\1 *", plain))
        try:
            matched = page.soup.select(plain)
        except (soupsieve.SelectorSyntaxError, NotImplementedError, ValueError) as error:
            return False, f"{selector.strip()!r} cannot be read ({str(error).splitlines()[0]})"
        if any(id(element) in page.guarded for element in matched):
            return True, selector.strip()
    return False, None


def css_problems(html: str, file: str) -> list[str]:
    """What a page's stylesheets and `style` attributes do to the tool's blocks (see the module
    docstring); one problem per rule."""
    import tinycss2

    page = _page(html)
    own = STYLESHEET.read_text(encoding="utf-8")
    problems: list[str] = []

    def declarations(content: list) -> list:
        return [item for item in tinycss2.parse_blocks_contents(content, skip_comments=True, skip_whitespace=True)
                if item.type == "declaration"]

    def rules(items: Iterable[Any], where: str) -> None:
        for item in items:
            if item.type == "error":
                problems.append(f"{file}: {where}: CSS that cannot be parsed ({item.message}) cannot be checked")
            elif item.type == "at-rule":
                if item.lower_at_keyword in ("media", "supports", "layer", "container", "document") and item.content:
                    rules(tinycss2.parse_rule_list(item.content, skip_comments=True, skip_whitespace=True), where)
                elif item.lower_at_keyword in ("import", "font-face", "namespace"):
                    problems.append(f"{file}: {where}: @{item.lower_at_keyword} loads what this check cannot read")
            elif item.type == "qualified-rule":
                prelude = tinycss2.serialize(item.prelude).strip()
                for declaration in declarations(item.content):
                    if _adds_text(declaration.lower_name, declaration.value):
                        problems.append(f"{file}: {where}: `{prelude}` adds text a reader sees "
                                        f"(content: {tinycss2.serialize(declaration.value).strip()}); every word on "
                                        "the page comes from a claim, a label or a value")
                    elif hides(declaration.lower_name, declaration.value):
                        selected, which = _selects_guarded(page, prelude)
                        if selected or which:
                            problems.append(
                                f"{file}: {where}: `{which}` {'cannot be matched' if not selected else 'reaches'} "
                                f"the tool's disclosure blocks with `{declaration.lower_name}: "
                                f"{tinycss2.serialize(declaration.value).strip()}`: a team's stylesheet may not "
                                "hide, shrink, clip, move or fade the decision table, its post hoc marks, the "
                                "order of the review, the provenance or a sample size")
                            break

    for number, style in enumerate(page.soup.find_all("style"), start=1):
        text = "".join(str(child) for child in style.children)   # get_text() leaves style sheets out
        if style.get("data-readout") == "style" and text.strip() == own.strip():
            continue
        rules(tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True), f"stylesheet {number}")
    for element in page.soup.select("[style]"):
        for declaration in declarations(tinycss2.parse_component_value_list(element["style"])):
            if _adds_text(declaration.lower_name, declaration.value):
                problems.append(f"{file}: a style attribute adds text a reader sees (content)")
            elif id(element) in page.guarded and hides(declaration.lower_name, declaration.value):
                problems.append(f"{file}: a style attribute on <{element.name}> hides the tool's disclosure blocks "
                                f"with `{declaration.lower_name}`")
    return problems
