"""Disclosure the tool owns (generator/render/disclosure.py): the decision table, the rules set
after the results with their old rule, new rule and reason, the post hoc mark beside a verdict,
the order of the review, the provenance and a table's sample size are rendered by the package and
verified on the page a reader gets. A team's template, labels or stylesheet that deletes,
relabels, hides or adds to them is refused; the same page without the attack renders."""

import re

import pytest

from generator.cli import main
from tests.conftest import BUDGET_REQUIREMENTS, add_design, claim, d5_record, edit_config, set_label

VERDICT = claim("verdict-d5", "Whether to ship the reranker cannot be decided.",
                "- decision: {trigger: D5, state: cannot be decided}", kind="recommendation", section="verdict")


def project(make_project, tmp_path):
    """Own templates, and D5 with its budget written after the results: a post hoc rule, listed
    with its reason, marked beside the verdict that cites it."""
    root = make_project(tmp_path / "p", extra_claims=VERDICT, own_templates=True)
    (root / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    add_design(root, d5_record())
    return root


def render(root, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["render", str(root)])
    out, err = capsys.readouterr()
    return code, out + err


def edit(root, name: str, old: str, new: str) -> None:
    path = root / "templates" / name
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def append_css(root, css: str) -> None:
    path = root / "templates" / "readout.css"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + css + "\n", encoding="utf-8")


def test_the_untouched_project_renders_its_disclosure(make_project, tmp_path, capsys):
    root = project(make_project, tmp_path)
    code, out = render(root, capsys)
    assert code == 0, out
    page = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    for block in ("decisions", "amendments", "order", "provenance", "post-hoc", "sample"):
        assert f'data-readout="{block}"' in page, block


@pytest.mark.parametrize("old, new", [
    ("{{ disclosure.decisions }}", ""),
    ("{{ disclosure.order }}", ""),
    ("{{ disclosure.provenance }}", ""),
    ("{{ c.post_hoc_mark }}", ""),
    ("{{ disclosure.decisions }}", "{{ disclosure.decisions|replace('post hoc', 'pre-registered') }}"),
])
def test_a_block_deleted_or_edited_in_the_template_is_refused(make_project, tmp_path, capsys, old, new):
    root = project(make_project, tmp_path)
    edit(root, "readout.html.j2", old, new)
    code, out = render(root, capsys)
    assert code != 0 and ("missing or changed" in out or "post hoc mark" in out), out
    assert not (root / "outputs" / "readout.html").exists() or "pre-registered" not in \
        (root / "outputs" / "readout.html").read_text(encoding="utf-8")


def test_a_block_left_out_of_the_sections_is_refused(make_project, tmp_path, capsys):
    root = project(make_project, tmp_path)
    edit_config(root, lambda data: [section.update(show=[block for block in section.get("show", [])
                                                         if block != "decisions"])
                                    for section in data["outputs"]["readout"]["sections"]])
    code, out = render(root, capsys)
    assert code != 0 and "decisions block is missing" in out, out


@pytest.mark.parametrize("key, text", [("post_hoc_verdict", "pre-registered verdict"),
                                       ("rule_registered", "Registered in advance"),
                                       ("post_hoc", "on time")])
def test_a_disclosure_label_relabelled_is_refused(make_project, tmp_path, capsys, key, text):
    root = project(make_project, tmp_path)
    set_label(root, key, text)
    code, out = render(root, capsys)
    # "pre-registered" and "in advance" assert an order: the label rules refuse them before the
    # disclosure check does; "on time" only the disclosure check refuses.
    assert code != 0 and (f"{key}: a disclosure label the tool owns" in out or "asserts" in out), out


@pytest.mark.parametrize("css", [
    "mark.post-hoc { display: none; }",
    "table.decisions { visibility: hidden; }",
    "[data-readout] { font-size: 0; }",
    "main section:nth-of-type(1) { opacity: 0; }",
    ".post-hoc-changes li { position: absolute; left: -9999px; }",
    "mark.post-hoc { color: transparent; }",
    "m\\61 rk.post-hoc { disp\\6c ay: none; }",
    "@media screen { .decisions caption { clip-path: inset(50%); } }",
    "body { transform: scale(0); }",
])
def test_a_stylesheet_that_hides_a_block_is_refused(make_project, tmp_path, capsys, css):
    root = project(make_project, tmp_path)
    append_css(root, css)
    code, out = render(root, capsys)
    assert code != 0 and "may not hide" in out, out


@pytest.mark.parametrize("css", [
    '.claim::after { content: "and it is significant"; }',
    '.claim::after { cont\\65 nt: "lift 0.9"; }',
    'h2::before { content: counter(section); }',
])
def test_a_stylesheet_that_adds_text_is_refused(make_project, tmp_path, capsys, css):
    root = project(make_project, tmp_path)
    append_css(root, css)
    code, out = render(root, capsys)
    # The orphan scan refuses the plain spelling first; the escaped one only this check reads.
    assert code != 0 and ("adds text a reader sees" in out or "CSS generates text" in out), out


def test_a_style_attribute_that_hides_a_block_is_refused(make_project, tmp_path, capsys):
    root = project(make_project, tmp_path)
    edit(root, "readout.html.j2", "<main>", '<main style="display:none">')
    code, out = render(root, capsys)
    assert code != 0 and "style attribute" in out, out


@pytest.mark.parametrize("css", [
    "h2 { color: navy; letter-spacing: 0.02em; }",
    ".notes li { display: none; }",
    "svg.chart text { font-size: 12px; }",
    "@media print { nav { display: none; } }",
    "p.prose { max-width: 40rem; }",
])
def test_a_stylesheet_that_leaves_the_blocks_alone_renders(make_project, tmp_path, capsys, css):
    root = project(make_project, tmp_path)
    append_css(root, css)
    code, out = render(root, capsys)
    assert code == 0, out


def test_a_draft_render_is_not_held_to_the_release_check(make_project, tmp_path, capsys):
    root = project(make_project, tmp_path)
    append_css(root, "mark.post-hoc { display: none; }")
    capsys.readouterr()
    assert main(["render", "--draft", str(root)]) == 0
    assert re.search(r"data-readout=\"post-hoc\"", (root / "outputs" / "readout.html").read_text(encoding="utf-8"))
