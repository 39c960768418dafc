"""Open the rendered readout.html from disk in headless Chromium: it shows the title, the four rows
and the trace score, and attempts no request other than the file itself.

Needs Debian's chromium at /usr/bin/chromium (CI installs it; `apt-get install chromium`) and the
PyPI package playwright. A missing browser FAILS this test: it is never skipped.
Screenshots of the committed SciFact readout (desktop and phone width, light and dark) and of a
fresh render of it at phone width (its tables and deltas chart) are saved under build/screenshots
(ignored by git), or under $READOUT_SCREENSHOTS when that is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.commands.cli import main

CHROMIUM = Path(os.environ.get("READOUT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 900}


def _browser(playwright):
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install it (apt-get install chromium) or set "
                    f"READOUT_CHROMIUM; the browser test never skips", pytrace=False)
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


@pytest.fixture
def rendered(tmp_path, monkeypatch, capsys, make_project) -> Path:
    root = make_project(tmp_path / "p")
    assert main(["render", str(root)]) == 0, capsys.readouterr().err
    return root / "outputs" / "readout.html"


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the test extra installs it
        pytest.fail("the PyPI package playwright is not installed (pip install -e '.[test]')", pytrace=False)
    return sync_playwright()


@pytest.fixture(scope="module")
def _chromium():
    """One Chromium for a module's tests: launching it was most of a short browser test's time."""
    with _playwright() as playwright:
        chromium = _browser(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def browser(_chromium):
    """The module's Chromium, for one test. `browser.new_page` opens every page in a context of
    its own (no cookie, storage, cache or request log shared with another page), and whatever a
    test leaves open, passed or failed, is closed after it."""
    yield _chromium
    for context in list(_chromium.contexts):
        context.close()


@pytest.mark.browser
def test_readout_opens_from_disk_shows_rows_and_score_and_requests_nothing(rendered, tmp_path, browser):
    url = rendered.resolve().as_uri()
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = browser.new_page(viewport=viewport)
        requests: list[str] = []
        page.on("request", lambda request, seen=requests: seen.append(request.url))
        errors: list[str] = []
        page.on("console", lambda message, seen=errors: seen.append(message.text) if message.type == "error" else None)
        page.goto(url, wait_until="load")
        page.wait_for_timeout(200)

        assert page.title() == "The reranker that has to pay for itself"
        assert page.locator("h1").inner_text() == "The reranker that has to pay for itself"
        rows = page.locator("#section-results table:not(.per-query) tbody th[scope=row]")
        assert rows.all_inner_texts() == ["dense", "sparse", "hybrid", "hybrid+rerank"]
        checked = page.locator("table.checked")
        checked.scroll_into_view_if_needed()
        assert checked.locator("tr").nth(1).inner_text().split("\t")[-1].strip() == "4/7"
        assert checked.locator("tr").nth(0).inner_text().split("\t")[-1].strip() == "0/7"
        assert page.locator("svg.chart").count() == 3
        assert requests == [url], f"unexpected requests: {requests}"
        assert errors == [], f"console errors (a CSP violation would show here): {errors}"
        page.close()


REPOSITORY = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("READOUT_SCREENSHOTS", REPOSITORY / "build" / "screenshots"))


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    red, green, blue = (channel(v) for v in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def _contrast(first: tuple[float, ...], second: tuple[float, ...]) -> float:
    light, dark = sorted((_luminance(first[:3]), _luminance(second[:3])), reverse=True)
    return (light + 0.05) / (dark + 0.05)


_COLOURS = """(selector) => [...document.querySelectorAll(selector)].slice(0, 40).map(element => {
  const parse = text => text.match(/[0-9.]+/g).map(Number);
  let node = element, background = null;
  while (node) {
    const colour = getComputedStyle(node).backgroundColor;
    if (colour && !colour.endsWith(', 0)') && colour !== 'transparent') { background = colour; break; }
    node = node.parentElement;
  }
  return [parse(getComputedStyle(element).color), parse(background || 'rgb(255, 255, 255)')];
})"""

_OVERFLOWING = """(width) => [...document.querySelectorAll('table, svg.chart, figure, pre, img')].filter(element => {
  const box = element.getBoundingClientRect();
  if (box.right <= width + 1 && box.left >= -1) return false;
  for (let node = element.parentElement; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if ((style.overflowX === 'auto' || style.overflowX === 'scroll') && node.getBoundingClientRect().right <= width + 1)
      return false;
  }
  return true;
}).map(element => element.tagName + '.' + element.className)"""


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
def test_the_scifact_readout_reads_verdict_first_on_every_screen(name, viewport, scheme, browser):
    """The committed readout: verdict first, nothing wider than the screen outside its own scroll
    box, every chart titled and described, readable contrast, quiet sources that print expanded,
    and no request. Screenshots go to build/screenshots (or $READOUT_SCREENSHOTS)."""
    url = (REPOSITORY / "outputs" / "readout.html").resolve().as_uri()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport=viewport, color_scheme=scheme)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(url, wait_until="load")
    # Under the title the trace line, then the first paragraph of prose is the verdict.
    first = page.evaluate("""() => {
        const h1 = document.querySelector('h1');
        const all = [...document.querySelectorAll('p')];
        const after = all.filter(p => h1.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING);
        const prose = after.find(p => p.classList.contains('prose'));
        return [after[0].getAttribute('data-readout'), prose && prose.closest('section') && prose.closest('section').id];
    }""")
    assert first == ["trace", "section-verdict"]
    assert page.locator("#section-verdict table.decisions").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert page.evaluate(_OVERFLOWING, viewport["width"]) == []
    for chart in page.locator("svg.chart").all():
        assert chart.locator(":scope > title").text_content().strip()
        assert chart.locator(":scope > desc").text_content().strip()
        box = chart.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 1
    sizes = page.evaluate("[...document.querySelectorAll('svg.chart text')].map(t => parseFloat(getComputedStyle(t).fontSize))")
    assert sizes and min(sizes) >= 12
    for selector in ("p.prose", "td", "th", ".table-note", "td.missing", "svg.chart text.tick"):
        for colour, background in page.evaluate(_COLOURS, selector):
            assert _contrast(colour, background) >= 4.5, (selector, colour, background, scheme)
    notes = page.locator("ul.notes li")
    assert notes.count() > 20 and not notes.first.is_visible(), "sources are collapsed by default"
    page.locator("a.ref").first.click()
    assert notes.first.is_visible(), "following a source marker opens that source"
    page.screenshot(path=str(SCREENSHOTS / f"readout-{name}-{scheme}.png"), full_page=True)
    page.emulate_media(media="print")
    assert page.locator("ul.notes li").nth(5).is_visible(), "print shows every source"
    assert requests == [url], requests
    page.close()
    assert (SCREENSHOTS / f"readout-{name}-{scheme}.png").stat().st_size > 20_000


_DECISION_CELLS = """() => [...document.querySelectorAll('table.decisions th, table.decisions td')]
    .filter(cell => cell.closest('thead') === null)
    .map(cell => { const box = cell.getBoundingClientRect();
                   const label = cell.querySelector('span.card-label');
                   return [label ? label.innerText : cell.tagName, box.left, box.right, box.width]; })"""


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["390px", "1280px"])
def test_the_decisions_are_read_without_scrolling_and_the_page_opens_on_the_outcome(viewport, browser):
    """At 390 px every decision is a card: each column, "Decision now" and "Values read" among
    them, inside the screen with no horizontal scroll. At 1280 px and at 390 px the page's first
    sentence states the computed outcome."""
    from generator.claims.tracing.checker import check_project
    from generator.project import load_project

    report = check_project(load_project(REPOSITORY))
    outcome = next(row for row in report.decisions if row.trigger.decision == "D5").outcome
    url = (REPOSITORY / "outputs" / "readout.html").resolve().as_uri()
    page = browser.new_page(viewport=viewport)
    page.goto(url, wait_until="load")
    first = page.evaluate("""() => {
        const h1 = document.querySelector('h1');
        const p = [...document.querySelectorAll('p.prose')].find(
            p => h1.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING);
        return p.innerText.split(/(?<=[.!?])\\s/)[0];
    }""")
    assert outcome.lower() in first.lower(), first
    if viewport is PHONE:
        cells = page.evaluate(_DECISION_CELLS)
        labels = {label for label, *_ in cells}
        assert {"Decision now", "Trigger state", "Rule fixed", "Queries read", "Values read", "Trigger"} <= labels, labels
        for label, left, right, width in cells:
            assert left >= 0 and right <= viewport["width"] and width > 0, (label, left, right)
        for region in page.locator("div.scroll.cards").all():
            assert region.evaluate("el => el.scrollWidth <= el.clientWidth"), "the decision cards scroll sideways"
        page.screenshot(path=str(SCREENSHOTS / "readout-phone-decisions.png"), full_page=False)
    page.close()


@pytest.mark.browser
def test_missing_browser_fails_with_a_clear_message(monkeypatch, tmp_path):
    """The guard itself: pointing at a browser that does not exist fails, it does not skip."""
    import test_browser

    monkeypatch.setattr(test_browser, "CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.fail.Exception, match="Chromium not found at .*never skips"):
        _browser(object())



# --- a phone reads the tables' key columns and the charts' labels ----------------------------------

@pytest.fixture
def scifact_readout(tmp_path, capsys) -> Path:
    """The SciFact readout rendered now from the repository's project files into a copy, so the
    test sees these templates whether or not outputs/readout.html was re-rendered."""
    import shutil

    copy = tmp_path / "scifact"
    for name in ("outputs", "claims", "design", "templates"):
        shutil.copytree(REPOSITORY / name, copy / name)
    shutil.copy2(REPOSITORY / "readout.yaml", copy / "readout.yaml")
    assert main(["render", str(copy)]) == 0, capsys.readouterr().err
    return copy / "outputs" / "readout.html"


# Per row of a table: for each key column (1-based, in the markup's order) its text and where its
# cell stands against its scroll box. Rows table: the row and the first metric; all pairs (one
# matrix per metric): the row and its change against the first row, with p and p after Holm.
_KEY_CELLS = """(table) => {
  const box = table.closest('.scroll').getBoundingClientRect();
  const cells = [];
  for (const row of table.querySelectorAll('thead tr, tbody tr')) {
    for (const column of row.classList.contains('unmeasured') ? [1] : [1, 2]) {
      const cell = row.children[column - 1], at = cell.getBoundingClientRect();
      cells.push([column, cell.innerText.trim(), at.left - box.left, box.right - at.right, at.width]);
    }
  }
  return cells;
}"""

_CUES = """() => [...document.querySelectorAll('.scroll-frame')].filter(frame => frame.checkVisibility()).map(frame => {
  const region = frame.querySelector('.scroll'), cue = frame.querySelector('.scroll-cue span');
  const at = cue.getBoundingClientRect();
  return {table: region.querySelector('table').className, label: region.getAttribute('aria-label'),
          overflows: region.scrollWidth > region.clientWidth + 1,
          shown: getComputedStyle(cue).visibility === 'visible' && at.width > 0 && at.height > 0,
          inside: at.left >= 0 && at.right <= innerWidth};
})"""

# Each chart's texts as drawn: the value of each change (and "not measured") against the zero line,
# and the labels of the horizontal axis in the order they stand.
_CHART_TEXTS = """(svg) => {
  const shown = selector => [...svg.querySelectorAll(selector)].filter(t => getComputedStyle(t).display !== 'none')
    .map(t => { const at = t.getBoundingClientRect(); return [t.textContent, at.left, at.right]; });
  const zero = svg.querySelector('line.zero'), at = svg.getBoundingClientRect();
  return {zero: zero ? zero.getBoundingClientRect().left : null, left: at.left, right: at.right,
          values: shown('text.value, text.missing'),
          ticks: shown('text.tick[text-anchor="middle"]').sort((a, b) => a[1] - b[1])};
}"""


def _shot(page, locator, name: str) -> None:
    """A screenshot of the page around `locator` (with the cue that sits on its box's edge)."""
    locator.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -64)")   # the box's top in view: its cue sits on the edge, not pinned
    box, scrolled = locator.bounding_box(), page.evaluate("window.scrollY")
    width = page.viewport_size["width"]
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True,
                    clip={"x": 0, "y": max(0, box["y"] + scrolled - 24), "width": width, "height": box["height"] + 40})


@pytest.mark.browser
def test_a_phone_reads_the_key_columns_and_is_told_when_a_table_scrolls(scifact_readout, browser):
    """At 390 px the rows table shows each row's name and its first measure, and every all-pairs
    matrix the row and its change against the first row, with p and p after Holm, inside the
    table's box with no scrolling;
    every table wider than its box shows the scroll cue (and only those, and no more once scrolled
    to the end); the row's name stays while its row scrolls. A desktop keeps every column. The
    deltas chart's values stay clear of its zero line and no two tick labels touch, as drawn."""
    url = scifact_readout.resolve().as_uri()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport=PHONE)
    page.goto(url, wait_until="load")
    tables = page.locator("table.rows").all() + page.locator("table.all-pairs").all()
    assert len(tables) == 4, "the rows table and three all-pairs tables"
    for table in tables:
        for column, text, left, right, width in table.evaluate(_KEY_CELLS):
            assert text and width > 0, (column, text)
            assert left >= -0.5 and right >= -0.5, f"{text!r} (column {column}) needs a scroll on a phone"
            if "all-pairs" in table.get_attribute("class") and column == 2 and "\n" in text:
                assert "\np " in text and "\np after Holm " in text, text
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_timeout(50)
    cues = page.evaluate(_CUES)
    assert {"rows", "all-pairs", "frontier", "per-query"} <= {cue["table"] for cue in cues if cue["overflows"]}, cues
    for cue in cues:
        assert cue["shown"] == cue["overflows"], cue
        assert cue["inside"] or not cue["shown"], cue
    _shot(page, page.locator(".scroll-frame:has(table.rows)"), "readout-phone-tables.png")
    _shot(page, page.locator(".scroll-frame:has(table.all-pairs)").first, "readout-phone-all-pairs.png")
    for table in tables:
        region = table.locator("xpath=ancestor::div[contains(@class, 'scroll')][1]")
        first = table.locator("tbody th").first
        before = first.bounding_box()["x"]
        region.evaluate("region => { region.scrollLeft = 120; }")
        page.wait_for_timeout(50)
        assert abs(first.bounding_box()["x"] - before) < 1, "the row's name stays while its row scrolls"
        region.evaluate("region => { region.scrollLeft = region.scrollWidth; }")
    page.wait_for_timeout(100)
    assert not any(cue["shown"] for cue in page.evaluate(_CUES) if cue["table"] in ("rows", "all-pairs")), \
        "at the table's end the cue is gone"

    for viewport in (PHONE, {"width": 360, "height": 740}):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(50)
        for chart in page.locator("svg.chart").all():
            drawn = chart.evaluate(_CHART_TEXTS)
            for text, left, right in drawn["values"] if drawn["zero"] is not None else []:
                assert right <= drawn["zero"] - 1 or left >= drawn["zero"] + 1, \
                    (viewport["width"], text, left, right, drawn["zero"])
            ticks = drawn["ticks"]
            assert len(ticks) >= 2, ticks
            for (text, _, right), (following, left, _) in zip(ticks, ticks[1:]):
                assert left - right >= 2, (viewport["width"], text, following, right, left)
            assert ticks[0][1] >= drawn["left"] - 0.5 and ticks[-1][2] <= drawn["right"] + 0.5, ticks
    page.set_viewport_size(PHONE)
    deltas = page.locator("figure:has(svg[aria-labelledby^='chart-deltas'])")
    _shot(page, deltas, "readout-phone-deltas.png")

    page.set_viewport_size(DESKTOP)
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(50)
    for cue in page.evaluate(_CUES):
        assert cue["shown"] == cue["overflows"], cue
        if cue["table"] in ("rows", "all-pairs"):
            assert not cue["overflows"], cue
    pairs = page.locator("table.all-pairs").first
    rows = len(pairs.locator("tbody tr").all())
    assert pairs.locator("thead th").evaluate_all("cells => cells.filter(c => c.offsetWidth > 0).length") \
        == rows + 1, "a matrix: each row against every row above it"
    page.close()
    for name in ("readout-phone-tables.png", "readout-phone-all-pairs.png", "readout-phone-deltas.png"):
        assert (SCREENSHOTS / name).stat().st_size > 10_000, name


# --- what Chromium shows is what the checker accounted for -------------------------------------

def _accounted_numerals(marked: str) -> set[str]:
    """The numerals that stand inside marked spans of a rendered output: what a claim, a label or
    a data value emitted on purpose."""
    import html as html_module
    import re

    from generator.core.text.numerals import find_numerals
    from generator.render.orphans import CLOSE, OPEN

    spans, depth, current = [], 0, []
    for char in marked:
        if char == OPEN:
            depth += 1
        elif char == CLOSE:
            depth = max(0, depth - 1)
            if depth == 0:
                spans.append("".join(current))
                current = []
        elif depth:
            current.append(char)
    text = html_module.unescape(re.sub(r"<[^>]+>", " ", " \n ".join(spans)))
    return {numeral.normalized for numeral in find_numerals(text)}


# Every text node Chromium lays out (has a box on screen), one string each: innerText would glue a
# claim's last number to the superscript source marker after it ("60." and "2" read "60.2").
_SHOWN_TEXT = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const shown = [document.title];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    if (range.getClientRects().length && node.textContent.trim()) shown.push(node.textContent);
  }
  return shown;
}"""


def _shown_numerals(page) -> set[str]:
    from generator.core.text.numerals import find_numerals

    return {numeral.normalized for text in page.evaluate(_SHOWN_TEXT) for numeral in find_numerals(text)}


def _unaccounted(project: Path, page) -> set[str]:
    from generator.claims.tracing.checker import check_project
    from generator.project import load_project
    from generator.render.renderer import render_outputs

    project_model = load_project(project)
    marked = next(output.marked for output in render_outputs(project_model, check_project(project_model))
                  if output.path.name == "readout.html")
    page.goto((project / "outputs" / "readout.html").resolve().as_uri(), wait_until="load")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    return _shown_numerals(page) - _accounted_numerals(marked)


@pytest.mark.browser
def test_every_numeral_chromium_shows_was_emitted_on_purpose(rendered, repository, browser):
    page = browser.new_page(viewport=DESKTOP)
    for project in (rendered.parent.parent, repository, repository / "examples" / "l03"):
        assert _unaccounted(project, page) == set(), project


@pytest.mark.browser
def test_generated_ledgers_show_no_numeral_nobody_emitted(tmp_path, make_project, browser):
    """Hypothesis writes claims (words, values in several formats, names with digits) into the fixture
    project; whatever renders, Chromium shows no numeral the checker did not account for."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from generator.render.renderer import render_project
    from generator.project import load_project
    from tests.conftest import claim, measured

    words = st.sampled_from(["Hybrid", "reaches", "nDCG@5", "BM25", "p95", "on", "the", "sample", "Recall@50",
                             "dense", "sparse", "at", "of"])
    formats = st.sampled_from(["", ":.3f", ":.1%", ":+.3f", ":,"])
    page = browser.new_page(viewport=DESKTOP)
    counter = iter(range(10_000))

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.lists(words, min_size=1, max_size=6), formats), min_size=1, max_size=3))
    def check(parts):
        extra = "".join(claim(f"gen-{number}", " ".join(text) + f" {{h{spec}}}.", measured(
            {"h": "table[search=hybrid].nDCG@5"}), kind="performance") for number, (text, spec) in enumerate(parts))
        root = make_project(tmp_path / f"g{next(counter)}", extra_claims=extra)
        if render_project(load_project(root)).ok:
            assert _unaccounted(root, page) == set()

    try:
        check()
    finally:
        page.close()


# Template snippets a hand might add: some the scan must refuse, all the browser must agree with.
SNIPPETS = ['<p title="9 ms">{{ L.verdict }}</p>', "<!-->7 queries", "<!-- 3 -->", '<noscript>5</noscript>',
            '<template>6</template>', '<ul style="list-style: decimal"><li>{{ L.verdict }}</li></ul>',
            "<p>{{ L.verdict }} 2</p>", '<input value="8">', "<svg><text>0.5</text></svg>", "<p>{{ L.verdict }}</p>"]


@pytest.mark.browser
def test_generated_templates_show_no_numeral_nobody_emitted(tmp_path, make_project, browser):
    """Hypothesis adds snippets to the readout template; whenever the orphan scan lets the render
    through, Chromium shows no numeral the checker did not account for."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from generator.storage.errors import InputError
    from generator.project import load_project
    from generator.render.renderer import render_project

    page = browser.new_page(viewport=DESKTOP)
    counter = iter(range(10_000))

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=3))
    def check(snippets):
        root = make_project(tmp_path / f"t{next(counter)}", own_templates=True)
        template = root / "templates" / "readout.html.j2"
        text = template.read_text(encoding="utf-8")
        template.write_text(text.replace("</main>", "".join(snippets) + "\n</main>", 1), encoding="utf-8")
        try:
            outcome = render_project(load_project(root))
        except InputError:   # a template the renderer refuses outright renders nothing to compare
            return
        if outcome.ok:
            assert _unaccounted(root, page) == set(), snippets

    try:
        check()
    finally:
        page.close()
