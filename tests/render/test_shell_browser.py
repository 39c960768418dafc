"""Verified by effect (issue 45 part 2): the rendered pages opened in Chromium, across every kind of
theme the validation admits (the tool's own, a dark palette, the largest and the smallest type and
spacing, a brand colour, the system's dark mode), at 1280 and 390 px. Each block the tool owns
(`[data-readout]`) is rendered and visible: checkVisibility, a box on screen when scrolled to, not
covered by anything else (elementFromPoint), not clipped by a scroll box, and every text in it at
12 px or more and at WCAG AA contrast against what it is drawn on.

Beside the honest themes, the attempts that stay inside the supported customisation and must not
hide anything: a content slot of 500 line breaks, a logo of 1024 by 1024 pixels, a right-to-left
override in a query text. (What the customisation refuses is tested in test_shell.py.)

This is what makes the gate's static side sufficient: the gate checks that the page is the tool's,
the theme passed validation and the slots hold text markup only; these tests prove that any such
page shows every block. Needs /usr/bin/chromium and playwright, as test_browser.py.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import run_cli
from tests.render.test_browser import _chromium, browser  # noqa: F401 (fixtures)
from tests.render.test_shell import HONEST_THEMES, _png, _with_slots, post_hoc_project, templates

VIEWPORTS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}
THEMES = {
    "tool": "",
    **HONEST_THEMES,
    "smallest": "font_size: 14\nline_height: 1.3\nspacing: 0.75\nwidth: 40\n",
    "largest": "font_size: 24\nline_height: 2.0\nspacing: 1.75\nwidth: 80\nfont: monospace\n",
}
FLOOR_PX, AA = 12.0, 4.5

# Every block the tool owns, as Chromium lays it out: why it is not seen, if it is not.
_BLOCK_PROBLEMS = """({floor, aa}) => {
  const parse = text => (text.match(/[0-9.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const contrast = (a, b) => { const [l, d] = [luminance(a), luminance(b)].sort((x, y) => y - x);
                               return (l + 0.05) / (d + 0.05); };
  const ground = element => {
    for (let node = element; node; node = node.parentElement) {
      const colour = getComputedStyle(node).backgroundColor;
      const values = parse(colour);
      if (values.length >= 3 && (values.length === 3 || values[3] > 0)) return values.slice(0, 3);
    }
    return parse(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3).length === 3
      ? parse(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3) : [255, 255, 255];
  };
  const problems = [];
  const blocks = [...document.querySelectorAll('[data-readout]')].filter(block =>
      !block.closest('.set-panel') || getComputedStyle(block.closest('.set-panel')).display !== 'none');
  for (const block of blocks) {
    const name = block.getAttribute('data-readout') + ' ' + (block.textContent || '').trim().slice(0, 40);
    if (!block.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) { problems.push(name + ': not visible'); continue; }
    block.scrollIntoView({block: 'center', inline: 'nearest'});
    const box = (block.getClientRects()[0] || block.getBoundingClientRect());
    if (box.width <= 0 || box.height <= 0) { problems.push(name + ': no box'); continue; }
    if (box.left < -1 || box.left >= innerWidth || box.top >= innerHeight || box.bottom <= 0)
      problems.push(name + ': off screen ' + JSON.stringify([box.left, box.top, box.right, box.bottom]));
    for (let node = block.parentElement; node && node !== document.body; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
      const outer = node.getBoundingClientRect();
      if (box.top < outer.top - 1 || box.bottom > outer.bottom + 1 || box.left < outer.left - 1 || box.left >= outer.right)
        problems.push(name + ': clipped by ' + node.tagName + '.' + node.className);
    }
    const x = Math.min(Math.max(box.left + Math.min(box.width, 40) / 2, 0), innerWidth - 1);
    const y = Math.min(Math.max(box.top + Math.min(box.height, 20) / 2, 0), innerHeight - 1);
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(block.contains(hit) || hit.contains(block)))
      problems.push(name + ': covered by ' + (hit ? hit.tagName + '.' + hit.className : 'nothing'));
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const element = text.parentElement;
      if (!text.textContent.trim() || !element.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
      if (element.closest('thead') && getComputedStyle(element.closest('thead')).position === 'absolute') continue;
      const range = document.createRange();
      range.selectNodeContents(text);
      const at = range.getBoundingClientRect();
      for (let node = element; node && node !== document.body; node = node.parentElement) {
        const clip = getComputedStyle(node);
        if (clip.overflowX === 'visible' && clip.overflowY === 'visible') continue;
        const outer = node.getBoundingClientRect();
        if (!(at.right > outer.left + 1 && at.left < outer.right - 1 && at.bottom > outer.top + 1 && at.top < outer.bottom - 1)) {
          problems.push(name + ': "' + text.textContent.trim().slice(0, 30) + '" outside ' + node.tagName + '.' + node.className);
          break;
        }
      }
      const style = getComputedStyle(element);
      if (parseFloat(style.fontSize) < floor) problems.push(name + ': ' + style.fontSize + ' text "' + text.textContent.trim().slice(0, 30) + '"');
      const ratio = contrast(parse(style.color).slice(0, 3), ground(element));
      if (ratio < aa) problems.push(name + ': contrast ' + ratio.toFixed(2) + ' for "' + text.textContent.trim().slice(0, 30) + '"');
    }
  }
  return {problems, count: blocks.length, names: [...new Set(blocks.map(b => b.getAttribute('data-readout')))]};
}"""

RLO = "\u202e"


@contextmanager
def _opened(browser, path: Path, viewport: dict) -> Iterator:
    """One page of Chromium on `path` at `viewport`, in a context of its own."""
    page = browser.new_page(viewport=viewport)
    try:
        page.goto(path.resolve().as_uri(), wait_until="load")
        yield page
    finally:
        page.close()


def _results_with_bidi(root: Path) -> None:
    from generator.evaluate.pipeline import write_sealed_results
    from tests.conftest import fixture_evaluation

    evaluation = fixture_evaluation()
    evaluation.results["query_texts"] = {query: f"query {query}" for query in evaluation.results["manifest"]["query_ids"]}
    evaluation.results["query_texts"]["q01"] = f"insulin {RLO}esod rotpecer"
    write_sealed_results(root / "outputs" / "results.json", root / "outputs" / "runs", evaluation)


@pytest.fixture(scope="module")
def themed_pages(tmp_path_factory) -> dict[str, Path]:
    """The post hoc fixture project under every admitted theme, each with a slot of 500 line
    breaks, a logo of 1024 by 1024 pixels and a right-to-left override in a query text."""
    from tests.conftest import _make_project

    pages = {}
    monkeypatch = pytest.MonkeyPatch()
    try:
        for name, theme in THEMES.items():
            root = post_hoc_project(_make_project, tmp_path_factory.mktemp(name))
            _results_with_bidi(root)
            _with_slots(root, "{% macro section(s) %}<p>{{ L.team_contact }}" + "<br>" * 500
                        + "</p>{% endmacro %}")
            (templates(root) / "logo.png").write_bytes(_png(1024, 1024))
            (templates(root) / "theme.yaml").write_text(theme + "logo: logo.png\n", encoding="utf-8")
            code = _render(root, monkeypatch)
            assert code == 0, name
            pages[name] = root / "outputs" / "readout.html"
    finally:
        monkeypatch.undo()
    return pages


def _render(root: Path, monkeypatch) -> int:
    from generator.commands.cli import main

    monkeypatch.chdir(root)
    return main(["render", str(root)])


@pytest.mark.browser
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_every_tool_block_is_seen_under_every_admitted_theme(themed_pages, viewport, browser):
    for theme, path in sorted(themed_pages.items()):
        for scheme in ("light", "dark"):
            page = browser.new_page(viewport=VIEWPORTS[viewport], color_scheme=scheme)
            page.goto(path.resolve().as_uri(), wait_until="load")
            found = page.evaluate(_BLOCK_PROBLEMS, {"floor": FLOOR_PX, "aa": AA})
            assert found["problems"] == [], (theme, scheme, viewport, found["problems"][:10])
            assert {"trace", "decisions", "post-hoc-lines", "post-hoc", "decision-values", "amendments",
                    "sample", "provenance", "order"} <= set(found["names"]), found["names"]
            page.close()


@pytest.mark.browser
def test_the_first_screen_holds_the_verdict_its_decisions_and_the_post_hoc_lines(themed_pages, browser):
    """At 1280 by 900, under every theme and with a screen-sized logo: the verdict, the decision
    table and the post hoc lines start on the first screen; the logo stays at its height."""
    for theme, path in sorted(themed_pages.items()):
        page = browser.new_page(viewport=VIEWPORTS["1280"])
        page.goto(path.resolve().as_uri(), wait_until="load")
        tops = page.evaluate("""() => ['#section-verdict .prose', '[data-readout="decisions"]',
            '[data-readout="post-hoc-lines"] li'].map(s => document.querySelector(s).getBoundingClientRect().top)""")
        assert all(0 <= top < 900 for top in tops), (theme, tops)
        logo = page.locator("img.logo").bounding_box()
        assert logo["height"] <= 2.5 * 24 + 1 and logo["width"] <= 8 * 24 + 1, (theme, logo)
        page.close()


@pytest.mark.browser
def test_a_slot_of_500_line_breaks_pushes_nothing_out_of_reach(themed_pages, browser):
    with _opened(browser, themed_pages["tool"], VIEWPORTS["390"]) as page:
        heights = page.evaluate("[...document.querySelectorAll('div.slot')].map(s => s.getBoundingClientRect().height)")
        assert heights and max(heights) <= 844 / 2 + 1, heights


@pytest.mark.browser
def test_a_right_to_left_override_in_a_query_text_reorders_nothing(themed_pages, browser):
    with _opened(browser, themed_pages["tool"], VIEWPORTS["1280"]) as page:
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        texts = page.locator("table.per-query .qtext").all_inner_texts()
        assert "insulin [U+202E]esod rotpecer" in texts
        assert not any(RLO in text for text in texts)


@pytest.mark.browser
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_the_sticky_row_column_keeps_its_dividers_on_a_phone(themed_pages, viewport, browser):
    """Separate borders: a sticky first cell draws its own divider, so scrolling a row leaves no gap
    (with collapsed borders the divider belongs to the table and the sticky cell paints over it)."""
    with _opened(browser, themed_pages["tool"], VIEWPORTS[viewport]) as page:
        for table in page.locator("table.rows, table.all-pairs").all():
            table.evaluate("t => { t.closest('.scroll').scrollLeft = 60; }")
            cells = table.evaluate("""t => [...t.querySelectorAll('tbody tr')].slice(0, -1).map(row => {
                const cell = row.children[0], style = getComputedStyle(cell);
                return [getComputedStyle(t).borderCollapse, style.borderBottomStyle, parseFloat(style.borderBottomWidth),
                        style.position]; })""")
            for collapse, style, width, position in cells:
                assert collapse == "separate" and style == "solid" and width >= 1, (collapse, style, width)
                assert position == ("sticky" if viewport == "390" else "static")


@pytest.mark.browser
def test_the_decisions_query_set_is_the_open_tab_and_the_other_a_click_away(tmp_path, make_project, monkeypatch,
                                                                            capsys, browser):
    from tests.render.test_tables_follow_decisions import _nfcorpus_like

    root = make_project(tmp_path / "p")
    _nfcorpus_like(root)
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    for viewport in VIEWPORTS.values():
        page = browser.new_page(viewport=viewport)
        page.goto((root / "outputs" / "readout.html").resolve().as_uri(), wait_until="load")
        results = page.locator("#section-results")
        shown = results.locator("table.rows caption .sample")
        visible = [text for text, seen in zip(shown.all_inner_texts(),
                                              [item.is_visible() for item in shown.all()]) if seen]
        assert visible == ["(every test query, 20 queries)"], visible
        found = page.evaluate(_BLOCK_PROBLEMS, {"floor": FLOOR_PX, "aa": AA})
        assert found["problems"] == [], found["problems"][:10]
        results.locator(".set-tabs label").nth(1).click()
        visible = [text for text, seen in zip(shown.all_inner_texts(),
                                              [item.is_visible() for item in shown.all()]) if seen]
        assert visible == ["(release sample, 20 queries)"], visible
        page.close()


@pytest.mark.browser
def test_a_page_of_the_projects_own_says_so_first(tmp_path, make_project, monkeypatch, capsys, browser):
    """The unverified path: the project's own template hides the decision table; the page it gets
    opens with the notice that it is not the tool's page (and `render --check` fails, test_shell.py)."""
    from tests.conftest import REPOSITORY_ROOT

    root = post_hoc_project(make_project, tmp_path)
    own = templates(root) / "readout.html.j2"
    own.write_text((REPOSITORY_ROOT / "templates" / "readout.html.j2").read_text(encoding="utf-8").replace(
        "{% if decisions %}{{ tool.decisions(decisions) }}{% endif %}",
        '<div hidden>{% if decisions %}{{ tool.decisions(decisions) }}{% endif %}</div>'), encoding="utf-8")
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    with _opened(browser, root / "outputs" / "readout.html", VIEWPORTS["390"]) as page:
        notice = page.locator('[data-readout="unverified"]')
        assert notice.is_visible() and notice.bounding_box()["y"] < 10
        assert "Not verified" in notice.inner_text() and "templates/readout.html.j2" in notice.inner_text()


# Each hiding technique of issue 45 applied to the page in the browser, past every check of the
# tool: the probe above must see each one. (The supported customisation cannot apply any of them:
# test_shell.py refuses them or they cannot be written; this proves the probe would see them.)
ATTACKS = {
    "closed-details": "const d = document.createElement('details'); const t = document.querySelector('[data-readout=decisions]');"
                      " t.parentNode.insertBefore(d, t); d.appendChild(t);",
    "div-hidden": "const d = document.createElement('div'); d.hidden = true; const t = document.querySelector('[data-readout=post-hoc-lines]');"
                  " t.parentNode.insertBefore(d, t); d.appendChild(t);",
    "near-white-text": "document.querySelector('[data-readout=decisions]').style.color = '#fafafa';",
    "compounding-font-size": "for (const e of document.querySelectorAll('[data-readout=provenance] table, [data-readout=provenance] tbody,"
                             " [data-readout=provenance] tr')) e.style.fontSize = '50%';",
    "offset-out-of-its-scroll-box": "const t = document.querySelector('[data-readout=decisions] table'); t.style.position = 'relative';"
                                    " t.style.left = '5000px';",
    "max-height-overflow-hidden": "const t = document.querySelector('[data-readout=amendments]'); t.style.maxHeight = '1px';"
                                  " t.style.overflow = 'hidden';",
    "covered-by-an-overlay": "const o = document.createElement('div'); o.style.cssText = 'position:fixed;inset:0;background:#fff;z-index:9';"
                             " document.body.appendChild(o);",
    "post-hoc-mark-ground-equals-ink": "for (const m of document.querySelectorAll('mark.post-hoc')) m.style.background = getComputedStyle(m).color;",
}


@pytest.mark.browser
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_probe_sees_every_hiding_technique(themed_pages, attack, browser):
    with _opened(browser, themed_pages["tool"], VIEWPORTS["1280"]) as page:
        assert page.evaluate(_BLOCK_PROBLEMS, {"floor": FLOOR_PX, "aa": AA})["problems"] == []
        page.evaluate("() => { " + ATTACKS[attack] + " }")
        assert page.evaluate(_BLOCK_PROBLEMS, {"floor": FLOOR_PX, "aa": AA})["problems"] != [], attack


@pytest.mark.browser
def test_the_authors_words_look_apart_from_the_tools_sentences_under_every_theme(themed_pages, browser):
    """A theme sets colours and sizes only: the author's words keep their marker and their double
    bar, the tool's sentences have neither, whatever the theme."""
    from tests.render.test_origins import ORIGINS, _rendered_with_origins

    for theme, path in sorted(themed_pages.items()):
        root = path.parent.parent
        page_path = root / "origins.html"
        page_path.write_text(_rendered_with_origins(root, ORIGINS)["readout.html"], encoding="utf-8")
        for viewport in VIEWPORTS.values():
            page = browser.new_page(viewport=viewport)
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            looks = page.evaluate("""() => ['.prose.origin-author', '.prose.origin-frame'].map(s => {
                const p = document.querySelector(s), mark = p.querySelector('.origin-mark');
                return [getComputedStyle(p).borderLeftStyle, mark ? mark.checkVisibility() && mark.innerText : null];
            })""")
            assert looks == [["double", "AUTHOR'S WORDS"], ["none", None]], (theme, looks)
            page.close()
