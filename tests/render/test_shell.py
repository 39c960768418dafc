"""The page shell the package owns (generator/render/shell.py, issue 45): every output places the
tool's blocks itself, in an order a team cannot change; a team fills content slots and declares a
theme; a page of the project's own renders marked as such and never passes `render --check`; every
post hoc verdict keeps its mark in every output; outputs/ holds only what the tool wrote.

What no supported customisation can do is proved in a browser (test_shell_browser.py); here, the
refusals and the static side."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from tests.conftest import (BUDGET_REQUIREMENTS, REPOSITORY_ROOT, add_design, claim, d5_record, edit_config,
                            one_line_error, refreeze, run_cli)

VERDICT = claim("verdict-d5", "Whether to ship the reranker cannot be decided.",
                "- decision: {trigger: D5, state: cannot be decided}", kind="recommendation", section="verdict")
IN_AAR = claim("aar-d5", "Whether to ship the reranker cannot be decided.",
               "- decision: {trigger: D5, state: cannot be decided}", kind="recommendation", output="aar",
               section="next")
IN_TEACHBACK = claim("teachback-d5", "Whether to ship the reranker cannot be decided.",
                     "- decision: {trigger: D5, state: cannot be decided}", kind="recommendation",
                     output="teachback", section="candidates")
TOOL_BLOCKS = ("trace", "decisions", "post-hoc-lines", "post-hoc", "decision-values", "amendments", "sample",
               "provenance", "order")


def post_hoc_project(make_project, tmp_path, **kwargs) -> Path:
    """D5 with its budget written after the results (post hoc), cited by a verdict in every output."""
    root = make_project(tmp_path / "p", extra_claims=VERDICT + IN_AAR + IN_TEACHBACK, **kwargs)
    (root / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    add_design(root, d5_record())
    return root


def page(root: Path, name: str = "readout.html") -> str:
    return (root / "outputs" / name).read_text(encoding="utf-8")


def templates(root: Path) -> Path:
    folder = root / "templates"
    folder.mkdir(exist_ok=True)
    return folder


# --- the page: every block, in the shell's order ------------------------------------------------


def test_the_page_places_every_tool_block_in_its_order(tmp_path, make_project, monkeypatch, capsys):
    root = post_hoc_project(make_project, tmp_path)
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    html = page(root)
    for block in TOOL_BLOCKS:
        assert f'data-readout="{block}"' in html, block
    positions = [html.index(f'data-readout="{block}"') for block in
                 ("trace", "decisions", "post-hoc-lines", "decision-values", "amendments", "provenance")]
    assert positions == sorted(positions), "title, trace, decisions, post hoc lines, values read, record, provenance"
    assert html.index('<h1>') < html.index('data-readout="trace"') < html.index('id="section-verdict"')
    soup = BeautifulSoup(html, "html5lib")
    sections = [section["id"] for section in soup.select("main > section")]
    assert sections[0] == "section-verdict" and sections[-1] == "section-provenance"
    # The team's sections keep readout.yaml's order between them.
    order = [f"section-{s['id']}" for s in yaml.safe_load(
        (root / "readout.yaml").read_text(encoding="utf-8"))["outputs"]["readout"]["sections"]]
    kept = [section for section in sections if section in order]
    assert kept == [section for section in order if section in kept]


def test_a_verdict_cites_a_post_hoc_rule_and_every_output_marks_it(tmp_path, make_project, monkeypatch, capsys):
    root = post_hoc_project(make_project, tmp_path)
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    assert "Whether to ship the reranker cannot be decided. <mark class=\"post-hoc\" data-readout=\"post-hoc\">" \
           "post hoc verdict</mark>" in page(root)
    for name in ("AAR.md", "TEACHBACK.md"):
        text = page(root, name)
        assert "Whether to ship the reranker cannot be decided. **post hoc verdict**[^" in text, name
        # ... with the decision, its post hoc line and the record of the amendment.
        assert "| D5 | cannot be decided |" in text and "- **D5 post hoc**" in text, name
        assert "## Rules set or moved after the results were seen" in text, name


def test_the_post_hoc_line_and_record_show_what_moved_as_a_diff(tmp_path, make_project, monkeypatch, capsys):
    root = post_hoc_project(make_project, tmp_path)
    text = (root / "design" / "decisions.md").read_text(encoding="utf-8")
    (root / "design" / "decisions.md").write_text(text.replace(
        "```trigger\ndecision: D5\n", "```trigger\ndecision: D5\neffect: {comparison: hybrid+rerank_vs_hybrid, "
        "metric: nDCG@5, minimum: 0.02}\n"), encoding="utf-8")
    refreeze(root, reason="D5 states its smallest lift")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    soup = BeautifulSoup(page(root), "html5lib")
    line = " ".join(soup.select_one('ul[data-readout="post-hoc-lines"] li').get_text().split())
    assert line.startswith("D5 post hoc") and "(effect)" in line and "D5 states its smallest lift" in line
    record = soup.select_one("#amendment-D5")
    diffs = record.select("table.rule-diff")
    effect = [[cell.get_text(" ", strip=True) for cell in row.find_all(["th", "td"])]
              for row in diffs[-1].select("tbody tr")]
    assert ["effect.minimum", "none", "0.02"] in effect
    assert all(before != after for _, before, after in effect), "only the fields that moved"


# --- a page of the project's own: rendered, marked, never verified ------------------------------


@pytest.mark.parametrize("name, edit", [
    ("readout.html.j2", lambda text: text.replace("{{ tool.post_hoc_lines(post_hoc_lines) }}", "")),
    ("readout.html.j2", lambda text: text.replace("{% if decisions %}{{ tool.decisions(decisions) }}{% endif %}",
                                                  "<details>{{ tool.decisions(decisions) }}</details>")),
    ("readout.css", lambda text: text + "\ntable.decisions { max-height: 1px; overflow: hidden; display: block; }\n"),
    ("readout.css", lambda text: text + "\n.post-hoc-lines { unicode-bidi: bidi-override; direction: rtl; }\n"),
    ("report.md.j2", lambda text: text.replace("{{ c.post_hoc_mark }}", "")),
], ids=["html-drops-post-hoc-lines", "html-folds-decisions", "css-clips-decisions", "css-bidi-override",
        "markdown-drops-the-mark"])
def test_a_page_of_the_projects_own_is_marked_and_never_verified(tmp_path, make_project, monkeypatch, capsys, name,
                                                                 edit):
    root = post_hoc_project(make_project, tmp_path)
    own = templates(root) / name
    own.write_text(edit((REPOSITORY_ROOT / "templates" / name).read_text(encoding="utf-8")), encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.out + outcome.err
    assert f"warning: outputs/{'AAR.md' if name.endswith('.md.j2') else 'readout.html'}: not verified" in outcome.err
    written = page(root, "AAR.md" if name.endswith(".md.j2") else "readout.html")
    assert "Not verified: rendered from a template of the project" in written
    assert f"templates/{name}" in written
    check = run_cli(root, monkeypatch, capsys, "render", "--check")
    assert check.code == 1, check.out
    assert "not verified: rendered from templates/" in check.out and "Check failed" in check.out


def test_an_identical_copy_of_the_tools_page_is_the_tools_page(tmp_path, make_project, monkeypatch, capsys):
    root = post_hoc_project(make_project, tmp_path, own_templates=True)
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    assert "Not verified" not in page(root)
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_a_template_readout_yaml_names_that_nobody_holds_is_refused(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    edit_config(root, lambda data: data["outputs"]["readout"].update(template="fancy.html.j2"))
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2
    line = one_line_error(outcome)
    assert "readout.yaml: outputs.readout.template: no template 'fancy.html.j2'" in line, line


# --- content slots --------------------------------------------------------------------------------


SLOTS = """{% macro section(s) %}{% if s.id == "limits" %}<p><strong>{{ L.team_contact }}</strong></p>{% endif %}{% endmacro %}
{% macro end() %}<ul><li>{{ L.team_contact }}</li></ul>{% endmacro %}
"""


def _with_slots(root: Path, text: str, name: str = "slots.html.j2") -> None:
    folder = templates(root)
    (folder / "labels.yaml").write_text("team_contact: Search team\n", encoding="utf-8")
    (folder / name).write_text(text, encoding="utf-8")


def test_a_slot_fills_its_place_and_nothing_else(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    _with_slots(root, SLOTS)
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.err
    soup = BeautifulSoup(page(root), "html5lib")
    assert soup.select_one("#section-limits > div.slot").get_text(strip=True) == "Search team"
    end = soup.select_one("main > div.slot")
    assert end.get_text(strip=True) == "Search team"
    assert end.find_next("section")["id"] in ("section-decisions", "section-withdrawn", "section-amendments",
                                              "section-provenance")
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_unbalanced_markup_in_a_slot_stays_in_its_slot(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    _with_slots(root, '{% macro section(s) %}{% if s.id == "verdict" %}</section></main><p><strong>{{ L.team_contact }}'
                      '{% endif %}{% endmacro %}')
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    soup = BeautifulSoup(page(root), "html5lib")
    slot = soup.select_one("#section-verdict > div.slot")
    assert str(slot) == '<div class="slot"><p><strong>Search team</strong></p></div>'
    assert soup.select_one("main #section-provenance") is not None, "the page's structure is the shell's"


HIDING_SLOTS = [
    pytest.param("<details><summary>{{ L.team_contact }}</summary>", "<details> is not one", id="closed-details"),
    pytest.param("<div hidden>{{ L.team_contact }}", "<div> is not one", id="div-hidden"),
    pytest.param('<p hidden>{{ L.team_contact }}</p>', "may not carry hidden=", id="hidden-attribute"),
    pytest.param("<template>{{ L.team_contact }}</template>", "<template> is not one", id="template"),
    pytest.param("<dialog>{{ L.team_contact }}</dialog>", "<dialog> is not one", id="dialog"),
    pytest.param("<!-- {{ L.team_contact }}", "holds no comment", id="html-comment"),
    pytest.param('<p style="max-height: 1px; overflow: hidden">{{ L.team_contact }}</p>', "may not carry style=",
                 id="style-attribute"),
    pytest.param('<p dir="rtl">{{ L.team_contact }}</p>', "may not carry dir=", id="dir-attribute"),
    pytest.param("<p>\u202e{{ L.team_contact }}</p>", "U+202E", id="bidi-override-character"),
    pytest.param('<a href="https://example.org">{{ L.team_contact }}</a>', "may not carry href=", id="outside-link"),
    pytest.param("<style>table { display: none }</style>", "<style> is not one", id="stylesheet"),
]


@pytest.mark.parametrize("markup, reason", HIDING_SLOTS)
def test_a_slot_that_could_hide_or_restyle_is_refused(tmp_path, make_project, monkeypatch, capsys, markup, reason):
    root = make_project(tmp_path / "p")
    _with_slots(root, "{% macro end() %}" + markup + "{% endmacro %}")
    for args in (("render",), ("render", "--check")):
        outcome = run_cli(root, monkeypatch, capsys, *args)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert "templates/slots.html.j2" in line and reason in line, line
    assert not (root / "outputs" / "readout.html").exists()


@pytest.mark.parametrize("markdown, reason", [
    ("<!-- {{ L.team_contact }}", "html block"),
    ("<details>{{ L.team_contact }}", "html block"),
    ("```\n{{ L.team_contact }}", "fence"),
    ("# {{ L.team_contact }}", "headings start at level 3"),
    ("[{{ L.team_contact }}](https://example.org)", "links within the page only"),
], ids=["comment", "raw-html", "open-code-fence", "top-heading", "outside-link"])
def test_a_markdown_slot_holds_plain_markdown_only(tmp_path, make_project, monkeypatch, capsys, markdown, reason):
    root = make_project(tmp_path / "p")
    _with_slots(root, "{% macro end() %}" + markdown + "{% endmacro %}", name="slots.md.j2")
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert "templates/slots.md.j2" in line and reason in line, line


def test_a_markdown_slot_cannot_drop_a_post_hoc_mark(tmp_path, make_project, monkeypatch, capsys):
    root = post_hoc_project(make_project, tmp_path)
    _with_slots(root, '{% macro section(s) %}### {{ L.team_contact }}\n\n- {{ L.team_contact }}{% endmacro %}',
                name="slots.md.j2")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    for name in ("AAR.md", "TEACHBACK.md"):
        text = page(root, name)
        assert "### Search team" in text
        assert text.count("**post hoc verdict**") == 1, name


# --- the theme: declared properties, validated ---------------------------------------------------


def _theme(root: Path, text: str) -> None:
    (templates(root) / "theme.yaml").write_text(text, encoding="utf-8")


REFUSED_THEMES = [
    pytest.param("light: {ink: '#fafafa'}\n", "light.ink", "has a contrast of", id="near-white-text-on-white"),
    pytest.param("light: {mark: '#1b1f24'}\n", "light.mark", "ink #1b1f24 on mark #1b1f24", id="post-hoc-mark-ground-is-its-ink"),
    pytest.param("dark: {muted: '#161b22'}\n", "dark.muted", "has a contrast of", id="unreadable-in-dark-mode-only"),
    pytest.param("light: {rule: '#ffffff'}\n", "light.rule", "dividers", id="invisible-dividers"),
    pytest.param("light: {ink: 'rgba(0, 0, 0, 0.05)'}\n", "light.ink", "not an opaque CSS colour", id="translucent-ink"),
    pytest.param("light: {ink: '#000; display: none'}\n", "light.ink", "not an opaque CSS colour", id="css-in-a-colour"),
    pytest.param("font: Adobe Blank\n", "font", "blank glyphs", id="a-font-with-blank-glyphs"),
    pytest.param("font_size: 2\n", "font_size", "a number from 14 to 24", id="two-pixel-type"),
    pytest.param("spacing: 1000\n", "spacing", "a number from 0.75 to 1.75", id="a-thousandfold-spacing"),
    pytest.param("css: 'table { display: none }'\n", "css", "no stylesheet", id="a-stylesheet-key"),
    pytest.param("logo: logo.svg\n", "logo.svg", "missing", id="a-logo-that-is-not-there"),
]


@pytest.mark.parametrize("theme, where, reason", REFUSED_THEMES)
def test_a_theme_that_hides_or_shrinks_is_refused(tmp_path, make_project, monkeypatch, capsys, theme, where, reason):
    root = make_project(tmp_path / "p")
    _theme(root, theme)
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert "templates/" in line and where in line and reason in line, line


def _png(width: int, height: int) -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x1f\x5f\xa8" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_a_logo_is_a_small_png_drawn_at_a_fixed_height(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    (templates(root) / "logo.png").write_bytes(_png(64, 32))
    _theme(root, "logo: logo.png\n")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    assert re.search(r'<img class="logo" src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="">', page(root))
    (templates(root) / "logo.png").write_bytes(_png(2000, 10))
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2 and "a logo is at most 1024 pixels a side" in one_line_error(outcome)


HONEST_THEMES = {
    "dark": "light: {ink: '#e6edf3', paper: '#0d1117', muted: '#9da7b3', accent: '#79b8ff', rule: '#3d444d', "
            "tint: '#161b22', mark: '#3b2f00', flag: '#ff9492', flag_background: '#3c1618', good: '#56d364', "
            "warn: '#f0b849'}\ndark: false\n",
    "large-font": "font_size: 22\nline_height: 1.7\nspacing: 1.4\nfont: serif\n",
    "brand": "light: {accent: '#6a1b9a', ink: '#201a2b'}\nwidth: 70\nfont: humanist\n",
}


@pytest.mark.parametrize("name", sorted(HONEST_THEMES))
def test_an_honest_theme_renders_and_passes_the_check(tmp_path, make_project, monkeypatch, capsys, name):
    root = post_hoc_project(make_project, tmp_path)
    _theme(root, HONEST_THEMES[name])
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


# --- outputs/ holds what the tool wrote --------------------------------------------------------


def test_a_hand_written_page_beside_the_reports_fails_the_check(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0
    (root / "outputs" / "readout-summary.html").write_text("<p>Ship it</p>\n", encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "render", "--check")
    assert outcome.code == 1, outcome.out
    assert "outputs/readout-summary.html: not a file readout wrote for this project" in outcome.out
    render = run_cli(root, monkeypatch, capsys, "render")
    assert render.code == 0 and "warning: outputs/readout-summary.html: not a file readout wrote" in render.err


def test_the_report_a_renamed_output_left_behind_fails_the_check(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    edit_config(root, lambda data: data["outputs"]["readout"].update(file="summary.html"))
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    outcome = run_cli(root, monkeypatch, capsys, "render", "--check")
    assert outcome.code == 1 and "outputs/readout.html: not a file readout wrote" in outcome.out, outcome.out
    (root / "outputs" / "readout.html").unlink()
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_files_a_results_manifest_lists_and_a_link_out(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    assert sorted(path.name for path in (root / "outputs" / "runs").iterdir())   # listed: no finding
    (root / "outputs" / "runs" / "extra.trec").write_text("q01 Q0 d01 1 1.0 x\n", encoding="utf-8")
    (root / "outputs" / "notes").symlink_to(tmp_path)
    outcome = run_cli(root, monkeypatch, capsys, "render", "--check")
    assert outcome.code == 1
    assert "outputs/runs/extra.trec: not a file readout wrote" in outcome.out
    assert "outputs/notes: not a file readout wrote" in outcome.out


@pytest.mark.parametrize("project", [".", "examples/l03"])
def test_the_committed_projects_outputs_are_all_the_tools(project):
    from generator.project import load_project
    from generator.render.renderer import _written_here, render_outputs
    from generator.render.stamps import unwritten_files
    from generator.claims.tracing.checker import check_project

    loaded = load_project(REPOSITORY_ROOT / project)
    rendered = render_outputs(loaded, check_project(loaded, git_history=False))
    assert unwritten_files(loaded.outputs_dir, _written_here(loaded, rendered)) == []
