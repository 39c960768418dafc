"""The orphan scan: text in an output that no claim, label or data value accounts for fails the
render with its file and line, and nothing is written."""

from __future__ import annotations

import pytest

from generator.commands.cli import main
from generator.render.orphans import CLOSE, OPEN, scan_html, scan_markdown


def m(text: str) -> str:
    return OPEN + text + CLOSE


def test_marked_html_text_passes():
    html = f"<html><head><title>{m('T')}</title></head><body><p>{m('a claim.')} ({m('0.61')})</p></body></html>"
    assert scan_html(html, "out.html") == []


def test_unmarked_html_sentence_is_found_with_its_line():
    html = f"<body>\n<p>{m('a claim.')}</p>\n<p>Reranking always pays.</p>\n</body>"
    assert [(o.file, o.line, o.text) for o in scan_html(html, "out.html")] == [
        ("out.html", 3, "Reranking always pays.")]


def test_unmarked_number_between_marked_values_is_found():
    html = f"<td>{m('0.61')} 20 {m('x')}</td>"
    assert [o.text for o in scan_html(html, "o.html")] == ["20"]


def test_marked_span_may_contain_markup_spanning_several_text_nodes():
    html = "<p>" + OPEN + "Hybrid <strong>wins</strong> here." + CLOSE + "</p>"
    assert scan_html(html, "o.html") == []


def test_visible_attributes_svg_text_css_content_and_numbered_lists_are_scanned():
    html = ('<div title="Invented tooltip"></div><svg><text>axis 0.5</text></svg>'
            '<style>p::after { content: "made up"; }</style><ol><li>' + m("x") + "</li></ol>")
    found = [o.text for o in scan_html(html, "o.html")]
    assert found == ["title=Invented tooltip", "axis 0.5", 'CSS generates text: content: "made up"',
                     "<ol> numbers its items itself: use <ul> with data-bound numbers"]


def test_markdown_syntax_and_comments_pass_but_words_do_not():
    text = (f"# {m('Title')}\n\n| {m('Row')} | {m('0.6')} |\n| --- | ---: |\n\n~~{m('struck')}~~[^{m('1')}]\n"
            "<!-- readout-built-from {\"a\": 1} -->\nA new sentence.\n")
    assert [(o.line, o.text) for o in scan_markdown(text, "AAR.md")] == [(8, "A new sentence.")]


@pytest.mark.parametrize("template, addition, where", [
    ("readout.html.j2", "<p>Reranking is always worth its cost.</p>\n</main>", "</main>"),
    ("readout.html.j2", "<td>0.75</td></tr>\n</tbody>", "</tbody>"),
    ("report.md.j2", "\nReranking is always worth its cost.\n\n<!-- {{ stamp_name", "\n<!-- {{ stamp_name"),
])
def test_literal_text_added_to_a_template_fails_the_render(tmp_path, monkeypatch, capsys, template, addition, where, make_project):
    root = make_project(tmp_path / "p", own_templates=True)
    path = root / "templates" / template
    text = path.read_text()
    assert where in text
    path.write_text(text.replace(where, addition, 1))
    monkeypatch.chdir(root)
    code = main(["render"])
    err = capsys.readouterr().err
    assert code == 1
    orphan_lines = [line for line in err.splitlines() if ": orphan text " in line]
    assert orphan_lines, err
    literal = "0.75" if "0.75" in addition else "Reranking is always worth its cost."
    assert all(literal in line for line in orphan_lines)
    first = orphan_lines[0]
    output = first.split(":")[0]
    line_number = int(first.split(":")[1])
    assert output in ("outputs/readout.html", "outputs/TEACHBACK.md", "outputs/AAR.md")
    assert err.splitlines()[-1].startswith("Render failed:")
    assert not (root / "outputs" / "readout.html").exists()
    # the reported line is where the text is in the output a fresh draft of the same render shows
    from generator.claims.tracing.checker import check_project
    from generator.project import load_project
    from generator.render.renderer import render_outputs

    rendered = {f"outputs/{r.path.name}": r.text for r in render_outputs(load_project(root),
                                                                          check_project(load_project(root)))}
    assert literal in rendered[output].splitlines()[line_number - 1]


def test_the_unmodified_templates_render_without_orphans(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", own_templates=True)
    monkeypatch.chdir(root)
    assert main(["render"]) == 0


def test_a_sentence_in_the_label_registry_is_refused(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", own_templates=True)
    labels = root / "templates" / "labels.yaml"
    labels.write_text(labels.read_text() + "sneaky: Reranking is always worth its cost.\n")
    monkeypatch.chdir(root)
    assert main(["render"]) == 2
    line = len(labels.read_text().splitlines())  # the line just added
    assert capsys.readouterr().err == (
        f"Error: templates/labels.yaml:{line}: sneaky: a label holds no sentence punctuation or markup ('.'): put "
        "prose in the claim ledger\n")


def test_a_literal_string_expression_in_a_template_is_still_an_orphan(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", own_templates=True)
    path = root / "templates" / "readout.html.j2"
    path.write_text(path.read_text().replace("</main>", "<p>{{ 'Typed into the template.' }}</p>\n</main>", 1))
    monkeypatch.chdir(root)
    assert main(["render"]) == 1
    assert "orphan text 'Typed into the template.'" in capsys.readouterr().err


# --- what a browser renders is what the scan reads (each channel: a failing case and its spellings)

HTML_CHANNELS = [
    pytest.param(f"<p>{m('x')}</p><!-->Ship the reranker.", "Ship the reranker.", id="empty-comment-closes"),
    pytest.param(f"<p>{m('x')}</p><!-- a --!>Ship it now.", "Ship it now.", id="bang-comment-closes"),
    pytest.param(f"<p>{m('x')}</p><!--->Ship it now.", "Ship it now.", id="dash-comment-closes"),
    pytest.param("<style>q { quotes: '\u00ab' '\u00bb'; }</style>", "quotes:", id="css-quotes"),
    pytest.param("<style>li::marker { content: '9 '; }</style>", "content:", id="css-marker-content"),
    pytest.param(f'<ul style="list-style-type: \'10 \'"><li>{m("a")}</li></ul>', "list-style-type", id="style-string-marker"),
    pytest.param(f'<ul style="list-style: decimal"><li>{m("a")}</li></ul>', "list-style: decimal", id="style-decimal"),
    pytest.param(f"<style>ul {{ list-style-type: upper-roman; }}</style><ul><li>{m('a')}</li></ul>", "upper-roman",
                 id="css-roman-numbering"),
    pytest.param("<style>@counter-style x { symbols: '1'; }</style>", "@counter-style", id="counter-style"),
    pytest.param('<input value="500 ms">', "value=500 ms", id="input-value"),
    pytest.param('<input placeholder="ship it">', "placeholder=ship it", id="placeholder"),
    pytest.param(f'<abbr title="0.9 lift">{m("x")}</abbr>', "title=0.9 lift", id="title"),
    pytest.param('<button aria-label="deploy now"></button>', "aria-label=deploy now", id="aria-label"),
    pytest.param(f'<img alt="{m("a")}" src="data:image/svg+xml,%3Csvg%3E%3Ctext%3E9%3C/text%3E%3C/svg%3E">',
                 "data: URL", id="svg-data-url"),
    pytest.param('<div style="background:url(data:text/html,<b>9</b>)"></div>', "data: URL", id="css-data-url"),
    pytest.param('<object data="data:text/html,Ship it"></object>', "data: URL", id="object-data-url"),
    pytest.param(f"<svg><text>axis 0.5</text></svg>{m('x')}", "axis 0.5", id="svg-text"),
    pytest.param(f"<title>Ship {m('x')}</title>", "Ship", id="document-title"),
]


@pytest.mark.parametrize("html, fragment", HTML_CHANNELS)
def test_every_channel_a_browser_renders_is_scanned(html, fragment):
    assert any(fragment in orphan.text for orphan in scan_html(html, "o.html")), scan_html(html, "o.html")


@pytest.mark.parametrize("html", [
    f"<p>{m('a')}</p><!-- a comment that hides nothing -->",
    '<link rel="icon" href="data:,">',
    f"<ul style=\"list-style: none\"><li>{m('a')}</li></ul>",
    f"<style>p {{ content: none; quotes: none; }}</style><p>{m('a')}</p>",
    f'<abbr title="{m("0.9")}">{m("x")}</abbr>',
])
def test_what_a_browser_shows_nothing_of_passes(html):
    assert scan_html(html, "o.html") == []


MARKDOWN_CHANNELS = [
    pytest.param(f"{m('See')} [{m('x')}](#a \"Ship it, 0.9 lift\")\n", "title=Ship it, 0.9 lift", id="link-title"),
    pytest.param(f"{m('See')} [{m('x')}](#a 'Ship it')\n", "title=Ship it", id="link-title-single-quotes"),
    pytest.param(f"[{m('x')}][r]\n\n[r]: #a \"Ship the reranker\"\n", "title=Ship the reranker", id="reference-title"),
    pytest.param(f"{m('a')} <span title=\"12 ms\">{m('b')}</span>\n", "title=12 ms", id="raw-html-attribute"),
    pytest.param(f"{m('a')}\n\n<!-->Ship it\n", "Ship it", id="comment-that-closes-at-once"),
    pytest.param(f"1. {m('a')}\n2. {m('b')}\n", "<ol>", id="numbered-list"),
]


@pytest.mark.parametrize("text, fragment", MARKDOWN_CHANNELS)
def test_every_channel_a_markdown_viewer_renders_is_scanned(text, fragment):
    assert any(fragment in orphan.text for orphan in scan_markdown(text, "AAR.md")), scan_markdown(text, "AAR.md")
