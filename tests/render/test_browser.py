"""Open the rendered readout.html from disk in headless Chromium: it shows the title, the four rows
and the trace score, and attempts no request other than the file itself.

Needs Debian's chromium at /usr/bin/chromium (CI installs it; `apt-get install chromium`) and the
PyPI package playwright. A missing browser FAILS this test: it is never skipped.
Screenshots (desktop and phone width) are saved next to the test's temporary project, or under
$READOUT_SCREENSHOTS when that is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.cli import main

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


def _shots_dir(tmp_path: Path) -> Path:
    target = Path(os.environ.get("READOUT_SCREENSHOTS", tmp_path / "screenshots"))
    target.mkdir(parents=True, exist_ok=True)
    return target


@pytest.mark.browser
def test_readout_opens_from_disk_shows_rows_and_score_and_requests_nothing(rendered, tmp_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the test extra installs it
        pytest.fail("the PyPI package playwright is not installed (pip install -e '.[test]')", pytrace=False)

    url = rendered.resolve().as_uri()
    shots = _shots_dir(tmp_path)
    with sync_playwright() as playwright:
        browser = _browser(playwright)
        try:
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
                rows = page.locator("#section-results table tbody th[scope=row]")
                assert rows.all_inner_texts() == ["dense", "sparse", "hybrid", "hybrid+rerank"]
                for index in range(4):
                    rows.nth(index).scroll_into_view_if_needed()
                    assert rows.nth(index).is_visible()
                score = page.get_by_text("First-draft trace score: untraceable claims / total claims = 4/7")
                assert score.is_visible()
                assert page.get_by_text("Current trace score: untraceable claims / total claims = 0/7").is_visible()
                assert page.locator("svg.chart").count() == 2
                assert requests == [url], f"unexpected requests: {requests}"
                assert errors == [], f"console errors (a CSP violation would show here): {errors}"
                if name == "phone":
                    # the page itself never scrolls sideways on a phone: only tables and charts do
                    width = page.evaluate("document.documentElement.scrollWidth")
                    assert width <= PHONE["width"], width
                page.screenshot(path=str(shots / f"readout-{name}.png"), full_page=True)
                page.close()
        finally:
            browser.close()
    assert (shots / "readout-desktop.png").stat().st_size > 10_000
    assert (shots / "readout-phone.png").stat().st_size > 10_000


@pytest.mark.browser
def test_missing_browser_fails_with_a_clear_message(monkeypatch, tmp_path):
    """The guard itself: pointing at a browser that does not exist fails, it does not skip."""
    import test_browser

    monkeypatch.setattr(test_browser, "CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.fail.Exception, match="Chromium not found at .*never skips"):
        _browser(object())

