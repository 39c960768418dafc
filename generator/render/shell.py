"""The page shell the package owns: what every output holds, in an order no team can change, and
the content slots a team fills.

Every output (readout.html, TEACHBACK.md, AAR.md) is rendered from the package's own page
(templates/readout.html.j2, templates/report.md.j2 and templates/readout.css as the package ships
them), which places, in this order: the title; the trace line (the current and first-draft trace
scores, and the score of each origin of a sentence counted apart); the first section (the verdict:
its claims, every decision with the query set it read, and one line per decision whose rule was set
or moved after the results); the team's sections in readout.yaml's order, each table and chart
captioned with its query set and count; the withdrawn claims; the full record of every post hoc
amendment, field by field; and, last, the provenance with the order of the review.

What a team shapes: its sections (readout.yaml), its words (claims; labels it adds), its theme
(generator.render.theme: declared colours, a font from a list, sizes within bounds, a logo) and
its content slots: `templates/slots.html.j2` (or `slots.md.j2`) may define the macros `section(s)`
(placed at the end of each section) and `end()` (after the last section, before the amendments and
the provenance). A slot's output is parsed as a fragment (html5lib) and written back balanced, and
may hold only text markup (SLOT_ELEMENTS, no attribute but an in-page link): it cannot wrap, hide,
move or restyle a block of the tool's, and the shell's stylesheet bounds its height. A Markdown
slot may hold paragraphs, lists, emphasis, headings and tables, nothing raw.

A project that insists on its own page (a `templates/readout.html.j2`, `templates/report.md.j2`
or `templates/readout.css` that differs from the package's, or another template named in
readout.yaml) is rendered from it, with a notice at the top of the page that it is not the tool's
page, and never passes `render --check`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.core.text.characters import describe, hidden_character
from generator.storage.errors import InputError
from generator.storage.paths import display_path, reading
from generator.project import Project, default_templates_dir
from generator.project.outputs import OutputSpec
from generator.render.orphans import CLOSE, OPEN

HTML_PAGE, MARKDOWN_PAGE, STYLESHEET = "readout.html.j2", "report.md.j2", "readout.css"
HTML_SLOTS, MARKDOWN_SLOTS = "slots.html.j2", "slots.md.j2"
SLOT_MACROS = ("section", "end")
# The elements a content slot may hold: text and its structure, nothing that hides, folds, floats,
# embeds or restyles.
SLOT_ELEMENTS = frozenset({"p", "span", "strong", "em", "b", "i", "ul", "li", "h3", "h4", "table", "thead", "tbody",
                           "tr", "th", "td", "caption", "code", "q", "blockquote", "a", "br"})
SLOT_ATTRIBUTES = {"a": {"href"}, "th": {"scope", "colspan", "rowspan"}, "td": {"colspan", "rowspan"}}
# Markdown a slot may hold: what CommonMark parses these into (markdown-it's token types).
MARKDOWN_SLOT_TOKENS = frozenset({"paragraph_open", "paragraph_close", "inline", "text", "softbreak", "hardbreak",
                                  "strong_open", "strong_close", "em_open", "em_close", "code_inline",
                                  "bullet_list_open", "bullet_list_close", "ordered_list_open", "ordered_list_close",
                                  "list_item_open", "list_item_close", "heading_open", "heading_close",
                                  "table_open", "table_close", "thead_open", "thead_close", "tbody_open",
                                  "tbody_close", "tr_open", "tr_close", "th_open", "th_close", "td_open", "td_close",
                                  "link_open", "link_close", "blockquote_open", "blockquote_close", "s_open",
                                  "s_close"})


def package_page(spec: OutputSpec) -> str:
    """The package's page for an output of this kind."""
    return HTML_PAGE if spec.is_html else MARKDOWN_PAGE


def own_templates_dir(project: Project) -> Path | None:
    """The project's own templates folder, when it has one apart from the package's."""
    own = project.root / "templates"
    if not own.is_dir() or own.resolve() == default_templates_dir().resolve():
        return None
    return own


def _differs(own: Path, name: str) -> bool:
    package = default_templates_dir() / name
    if not package.is_file():
        return True
    with reading(own):
        return own.read_bytes() != package.read_bytes()


@dataclass(frozen=True)
class PageSource:
    """Where an output's page comes from: the package's shell, or (unverified) the project's own
    template and stylesheet, each named by its path."""

    template: str
    own_template: Path | None = None
    own_stylesheet: Path | None = None

    @property
    def unverified(self) -> list[Path]:
        return [path for path in (self.own_template, self.own_stylesheet) if path is not None]


def page_source(project: Project, spec: OutputSpec) -> PageSource:
    """The output's page: the package's unless the project has its own (see the module docstring);
    a template readout.yaml names that neither the package nor the project holds is refused."""
    own_dir = own_templates_dir(project)
    page = package_page(spec)
    template = spec.template
    own_template = own_stylesheet = None
    if own_dir is not None and (own_dir / template).is_file() and _differs(own_dir / template, template):
        own_template = own_dir / template
    elif template != page:
        raise InputError(f"no template {template!r}: the tool's page for an output ending in "
                         f"{Path(spec.file).suffix} is {page} (a page of the project's own lives in templates/, "
                         "and is never verified)", path=display_path(project.config_path),
                         field=f"outputs.{spec.name}.template")
    if spec.is_html and own_dir is not None and (own_dir / STYLESHEET).is_file() \
            and _differs(own_dir / STYLESHEET, STYLESHEET):
        own_stylesheet = own_dir / STYLESHEET
    return PageSource(template, own_template, own_stylesheet)


def unverified_lines(output_path: Path, source: PageSource) -> list[str]:
    """What `render --check` says of an output drawn from a page of the project's own."""
    return [f"{display_path(output_path)}: not verified: rendered from {display_path(path)}, the project's own "
            f"{'stylesheet' if path.name.endswith('.css') else 'template'}, not the tool's page (declare colours and "
            "fonts in templates/theme.yaml and content in templates/slots.html.j2 or slots.md.j2; remove "
            f"{path.name} to render the tool's page)" for path in source.unverified]


def mark_unverified(text: str, notice: str, is_html: bool) -> str:
    """The page of a project's own template with the notice that it is not the tool's page, first
    thing in the body (HTML) or under the title (Markdown)."""
    if is_html:
        lower = text.lower()
        start = lower.find("<body")
        end = text.find(">", start) + 1 if start >= 0 else 0
        banner = (f'<div class="readout-unverified" role="alert" data-readout="unverified" style="display: block; '
                  f'padding: 0.75rem 1rem; margin: 0; border: 3px solid #b42318; background: #ffffff; color: #b42318; '
                  f'font: 700 16px/1.4 system-ui, sans-serif">{notice}</div>\n')
        return text[:end] + "\n" + banner + text[end:]
    lines = text.split("\n")
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join(lines[:at] + ["", f"> **{notice}**", ""] + lines[at:])


# --- content slots -----------------------------------------------------------------------------


def slot_module(env: Any, project: Project, spec: OutputSpec, context: dict[str, Any]) -> Any:
    """The project's slot template for this output's kind as a module of macros, or None."""
    own_dir = own_templates_dir(project)
    name = HTML_SLOTS if spec.is_html else MARKDOWN_SLOTS
    if own_dir is None or not (own_dir / name).is_file():
        return None
    try:
        return env.get_template(name).make_module(context)
    except InputError:
        raise
    except Exception as error:  # jinja2 errors: name the template and line, never a traceback
        raise InputError(f"cannot render: {error}", path=display_path(own_dir / name),
                         line=getattr(error, "lineno", None)) from None


def _slot_text(module: Any, macro: str, shown: str, *args: Any) -> str:
    function = getattr(module, macro, None) if module is not None else None
    if function is None:
        return ""
    try:
        return str(function(*args))
    except InputError:
        raise
    except Exception as error:
        raise InputError(f"cannot render the {macro} slot: {error}", path=shown,
                         line=getattr(error, "lineno", None)) from None


def _hidden_in(text: str) -> str | None:
    found = hidden_character(text.replace(OPEN, "").replace(CLOSE, ""), allow="\n\t\r")
    return describe(found) if found else None


def _html_slot(text: str, shown: str) -> str:
    """The slot's markup parsed as a fragment and written back balanced, or refused."""
    import html5lib

    if not text.strip():
        return ""
    hidden = _hidden_in(text)
    if hidden:
        raise InputError(f"a content slot may not hold the invisible or control character {hidden}", path=shown)
    fragment = html5lib.parseFragment(text, container="div", treebuilder="etree", namespaceHTMLElements=False)
    for element in fragment.iter():
        if element is fragment:
            continue
        if not isinstance(element.tag, str):
            raise InputError("a content slot holds no comment: what it would hide a reader cannot see", path=shown)
        tag = element.tag.lower()
        if tag not in SLOT_ELEMENTS:
            raise InputError(f"a content slot holds text markup only ({', '.join(sorted(SLOT_ELEMENTS))}): <{tag}> "
                             "is not one (it could hide, fold or move what the page shows)", path=shown)
        for attribute, value in element.attrib.items():
            allowed = SLOT_ATTRIBUTES.get(tag, set())
            if attribute not in allowed or (attribute == "href" and not str(value).startswith("#")) or (
                    attribute in ("colspan", "rowspan") and not str(value).isdigit()):
                raise InputError(f"a content slot's <{tag}> may not carry {attribute}=: only an in-page link's href "
                                 "and a table cell's scope and spans (no style, class, id, hidden or dir)", path=shown)
    from html5lib import serialize

    return serialize(fragment, tree="etree", omit_optional_tags=False, quote_attr_values="always",
                     resolve_entities=False)


def _markdown_slot(text: str, shown: str) -> str:
    """A Markdown slot's text, refused unless it is paragraphs, lists, emphasis, headings (level 3
    and below), tables, quotes and in-page links: nothing raw, no code block that would run on."""
    from markdown_it import MarkdownIt

    if not text.strip():
        return ""
    hidden = _hidden_in(text)
    if hidden:
        raise InputError(f"a content slot may not hold the invisible or control character {hidden}", path=shown)
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    for token in tokens:
        for part in [token, *(token.children or [])]:
            if part.type not in MARKDOWN_SLOT_TOKENS:
                raise InputError(f"a Markdown content slot holds paragraphs, lists, emphasis, headings, tables and "
                                 f"quotes only: {part.type.replace('_', ' ')} is not one", path=shown)
            if part.type == "heading_open" and part.tag in ("h1", "h2"):
                raise InputError("a Markdown content slot's headings start at level 3 (###): the page's own are "
                                 "levels 1 and 2", path=shown)
            if part.type == "link_open" and not str(part.attrGet("href") or "").startswith("#"):
                raise InputError("a Markdown content slot links within the page only (#...)", path=shown)
    return text.strip("\n")


def slot(module: Any, macro: str, is_html: bool, shown: str, *args: Any) -> str:
    """One slot's content, checked (HTML: balanced and text markup only; Markdown: plain)."""
    text = _slot_text(module, macro, shown, *args)
    return _html_slot(text, shown) if is_html else _markdown_slot(text, shown)


# --- the order of the page ---------------------------------------------------------------------


FIRST_SECTION = "verdict"
# Blocks drawn from one results file: shown once per query set the page reads.
SET_BLOCKS = ("table", "quality_vs_time", "deltas", "all_pairs", "per_query", "rerank_cost", "frontier")
# Blocks the shell places itself, wherever a section's `show` names them.
SHELL_BLOCKS = ("decisions", "provenance")


def section_order(spec: OutputSpec) -> tuple[str | None, list[str], str | None]:
    """(the first section, the sections between in readout.yaml's order, the last section): the
    verdict first (the section named `verdict`, else the one that shows `decisions`), the section
    that shows `provenance` last; None where the shell adds its own (a verdict section holding the
    decisions alone; a provenance section)."""
    ids = [section.id for section in spec.sections]
    first = FIRST_SECTION if FIRST_SECTION in ids else next(
        (section.id for section in spec.sections if "decisions" in section.show), None)
    last = next((section.id for section in spec.sections if "provenance" in section.show and section.id != first),
                None)
    middle = [section for section in ids if section not in (first, last)]
    return first, middle, last
