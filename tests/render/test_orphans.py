"""The orphan scan: text in an output that no claim, label or data value accounts for fails the
render with its file and line, and nothing is written."""

from __future__ import annotations

import pytest

from generator.cli import main
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
    ("report.md.j2", "{% endif %}\nReranking is always worth its cost.\n\n<!--", "{% endif %}\n\n<!--"),
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
    from generator.claims.checker import check_project
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
