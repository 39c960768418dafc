"""`readout render` on a fixture project checked by the real checker: escaping, struck claims,
refusal and --draft, staleness (--check), self-containment and determinism."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from generator.commands.cli import main
from tests.conftest import cli_in_fresh_interpreter

REPOSITORY = Path(__file__).resolve().parents[2]

OUTPUT_NAMES = ("readout.html", "TEACHBACK.md", "AAR.md")
MAX_HTML_BYTES = 200 * 1024


@pytest.fixture
def project(tmp_path, monkeypatch, make_project):
    root = make_project(tmp_path / "p")
    monkeypatch.chdir(root)
    return root


def render(capsys, *argv):
    code = main(["render", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _line_of(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def write_outputs_block(root: Path, outputs_block: dict) -> None:
    """Replace readout.yaml's `outputs:` block after the fixture project was made (and frozen)."""
    config = yaml.safe_load((root / "readout.yaml").read_text())
    config["outputs"] = outputs_block
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def outputs(root: Path) -> dict[str, str]:
    return {name: (root / "outputs" / name).read_text(encoding="utf-8") for name in OUTPUT_NAMES
            if (root / "outputs" / name).exists()}


def test_render_writes_three_outputs_and_reports_sizes(project, capsys):
    code, out, err = render(capsys)
    assert code == 0, err
    assert [line.split(" (")[0] for line in out.splitlines()] == [
        "wrote outputs/readout.html", "wrote outputs/TEACHBACK.md", "wrote outputs/AAR.md"]
    assert err == ""
    texts = outputs(project)
    assert set(texts) == set(OUTPUT_NAMES)
    for text in texts.values():
        assert "\ue000" not in text and "\ue001" not in text
        assert text.startswith("# The reranker that has to pay for itself\n") or "<title>The reranker that has" in text


def test_html_unsafe_claim_text_comes_out_escaped(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", extra_claims="""\
        - id: unsafe
          output: readout
          section: limits
          kind: factual
          text: "<script>alert('x')</script> <img src=x onerror=alert('y')> nothing enters or leaves."
          sources:
            - design: {document: decisions.md, quote: "The cross-encoder reorders the same 50 candidates; nothing enters or leaves."}
        - id: unsafe-md
          output: aar
          section: why
          kind: factual
          text: "<script>alert('x')</script> nothing enters or leaves."
          sources:
            - design: {document: decisions.md, quote: "The cross-encoder reorders the same 50 candidates; nothing enters or leaves."}
        """)
    monkeypatch.chdir(root)
    code, _, err = render(capsys)
    assert code == 0, err
    html = outputs(root)["readout.html"]
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert('x')&lt;/script&gt; &lt;img src=x onerror=alert('y')&gt; nothing" in html
    aar = outputs(root)["AAR.md"]
    assert "<script" not in aar
    assert "&lt;script&gt;alert('x')&lt;/script&gt; nothing enters or leaves.[^" in aar


def test_struck_claim_renders_struck_and_omitted_claim_is_absent(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", extra_claims="""\
        - id: struck-in-aar
          output: aar
          section: surprise
          kind: evaluative
          text: "The lift was a big surprise."
          status: struck
          strike_reason: "no measured comparison supports it"
        """)
    monkeypatch.chdir(root)
    code, _, err = render(capsys)
    assert code == 0, err
    texts = outputs(root)
    assert '<del>Reranking adds 12 ms per query.</del>' in texts["readout.html"]
    assert "struck: the rerank row was not measured" in texts["readout.html"]
    # Struck without a display: withdrawn, listed at the end with its reason, not in the prose.
    withdrawn = texts["AAR.md"].split("## Withdrawn claims", 1)
    assert len(withdrawn) == 2 and "The lift was a big surprise." not in withdrawn[0]
    assert "- ~~The lift was a big surprise.~~ Withdrawn: no measured comparison supports it" in withdrawn[1]
    for name, text in texts.items():
        assert "should never be printed" not in text, name
        assert "omitted-guess" not in text, name


def test_claims_show_their_sources(project, capsys):
    assert render(capsys)[0] == 0
    html = outputs(project)["readout.html"]
    note = re.search(r'<li id="note-rrf-constant">(.*?)</li>', html).group(1)
    assert re.sub(r"<[^>]+>", "", note) == ("2from the design decisions.md line 5 § Fusion: Hybrid uses RRF with "
                                            "constant 60 over both top-50 lists.")
    note = re.search(r'<li id="note-verdict-hybrid">(.*?)</li>', html).group(1)
    hybrid = json.loads((project / "outputs" / "results.json").read_text())["table"][2]["nDCG@5"]
    # A sentence for people first, the path second.
    assert (f'<span class="say">from <code>results.json</code>: hybrid nDCG@5 on 20 queries = {hybrid:.4g} shown as '
            f'{hybrid:.3f}</span><span class="raw">path <code>table[search=hybrid].nDCG@5</code></span>') in note
    teachback = outputs(project)["TEACHBACK.md"]
    # The author's words are a quote of their own, marked (generator/render/shell.py).
    assert ("> **Author's words** The design: \"The cross-encoder reorders the *same* 50 candidates; nothing enters "
            "or leaves.\"[^1]\n\n"
            "[^1]: from the design `decisions.md` line 9 § Reranking: “The cross-encoder reorders the same 50 "
            "candidates; nothing enters or leaves.”\n") in teachback


def test_aar_carries_the_exact_first_draft_and_current_trace_score_lines(project, capsys):
    assert render(capsys)[0] == 0
    lines = outputs(project)["AAR.md"].splitlines()
    assert "First-draft trace score: untraceable claims / total claims = 4/7" in lines
    assert "Current trace score: untraceable claims / total claims = 0/7" in lines
    html = outputs(project)["readout.html"]
    assert ('<tr><th scope="row">First-draft trace score: untraceable claims / total claims</th><td>4/7</td></tr>'
            in html)
    # The page opens with the verdict, not with a checker's log.
    assert html.index('id="section-verdict"') < html.index('class="kv checked"')


def test_table_shows_four_rows_with_not_measured_reason_and_no_invented_numbers(project, capsys):
    assert render(capsys)[0] == 0
    html = outputs(project)["readout.html"]
    table = re.search(r'<section id="section-results">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    rows = re.findall(r'<tr[^>]*><th scope="row">(.*?)</th>(.*?)</tr>', table)
    assert [name for name, _ in rows] == ["dense", "sparse", "hybrid", "hybrid+rerank"]
    cells = dict((name, re.findall(r"<td[^>]*>(.*?)</td>", body)) for name, body in rows)
    results = json.loads((project / "outputs" / "results.json").read_text())
    hybrid = results["table"][2]
    assert cells["hybrid"][:3] == [f"{hybrid[key]:.3f}" for key in ("recall@5", "recall@50", "nDCG@5")]
    interval = results["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]
    assert cells["hybrid"][5] == (f'{hybrid["delta_nDCG@5_vs_dense"]:+.3f}<span class="ci">[{interval["ci95_low"]:+.3f}, '
                                  f'{interval["ci95_high"]:+.3f}]</span>')
    assert cells["hybrid"][6] == "—"   # the p95 column is the first reranker's alone
    assert cells["hybrid+rerank"] == ["Not measured: no cross-encoder offline"]
    assert '<tr class="unmeasured"><th scope="row">hybrid+rerank</th><td colspan="7">' in table


def test_p95_rerank_time_is_shown_when_measured(tmp_path, monkeypatch, capsys, make_project):
    times = {f"q{number:02d}": 100.0 + number for number in range(1, 21)}
    root = make_project(tmp_path / "p", results={"rerank_milliseconds": times})
    ledger = root / "claims" / "ledger.yaml"
    text = ledger.read_text()
    start = text.index("  - id: rerank-not-measured")
    ledger.write_text(text[:start] + text[text.index("  - id: struck-speed"):])  # that claim is now false
    monkeypatch.chdir(root)
    code, _, err = render(capsys)
    assert code == 0, err
    html = outputs(root)["readout.html"]
    results = json.loads((root / "outputs" / "results.json").read_text())
    rerank = results["table"][3]
    assert results["p95_rerank_milliseconds"] == pytest.approx(119.05)
    cells = "".join(f"<td>{rerank[key]:.3f}</td>" for key in ("recall@5", "recall@50", "nDCG@5"))
    assert f'<tr><th scope="row">hybrid+rerank</th>{cells}' in html
    assert "<td>119.0</td></tr>" in html or "<td>119.1</td></tr>" in html
    p95 = results["rerank_costs"]["hybrid+rerank"]["p95_milliseconds"]
    assert p95 == results["p95_rerank_milliseconds"]
    assert f">{p95:,.0f}</text>" in html  # the time chart (its own axis, in ms)
    assert f">{rerank['delta_nDCG@5_vs_dense']:+.3f} [" in html  # the deltas chart, with its interval


def test_render_refuses_when_the_check_fails(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", extra_claims="""\
        - id: unsupported
          output: readout
          section: verdict
          kind: recommendation
          text: "Ship the reranker."
        """)
    monkeypatch.chdir(root)
    code, out, err = render(capsys)
    assert code == 1
    assert out == ""
    line = next(n for n, text in enumerate((root / "claims" / "ledger.yaml").read_text().splitlines(), 1)
                if text.strip() == "- id: unsupported")
    assert err.splitlines()[0].startswith(f"claims/ledger.yaml:{line}: claim unsupported (recommendation): [source-present] no source")
    assert err.splitlines()[-1].startswith("Render refused: the claim check failed (1 of 8 claims untraceable)")
    assert outputs(root) == {}


def test_draft_renders_anyway_with_every_failure_flagged(tmp_path, monkeypatch, capsys, make_project):
    root = make_project(tmp_path / "p", extra_claims="""\
        - id: unsupported
          output: readout
          section: verdict
          kind: recommendation
          text: "Ship the reranker."
        - id: unsupported-md
          output: teachback
          section: cost
          kind: recommendation
          text: "Always rerank."
        """)
    (root / "design" / "decisions.md").write_text("# changed after the freeze\n", encoding="utf-8")
    monkeypatch.chdir(root)
    code, _, err = render(capsys, "--draft")
    assert code == 0
    assert err.startswith("Draft: rendering with")
    texts = outputs(root)
    html = texts["readout.html"]
    assert 'Ship the reranker. <mark class="flag">UNTRACEABLE</mark><a class="ref"' in html
    assert 'class="draft-banner"' in html
    assert "Design freeze: design/decisions.md: changed since the freeze" in html
    assert re.search(r"UNTRACEABLE: no source", html)
    assert "Always rerank. **UNTRACEABLE**[^" in texts["TEACHBACK.md"]
    assert "> **Draft, not for release: the flagged failures**" in texts["TEACHBACK.md"]
    assert '"draft":true' in texts["AAR.md"]
    # a draft is never mistaken for a release: the plain check still refuses
    assert render(capsys, "--check")[0] == 1


def test_render_check_is_quiet_success_right_after_render(project, capsys):
    assert render(capsys)[0] == 0
    before = {name: (project / "outputs" / name).read_bytes() for name in OUTPUT_NAMES}
    code, out, err = render(capsys, "--check")
    assert (code, out, err) == (0, "3 outputs up to date.\n", "")
    assert before == {name: (project / "outputs" / name).read_bytes() for name in OUTPUT_NAMES}


def test_stale_output_makes_render_check_exit_1_naming_it(project, capsys):
    assert render(capsys)[0] == 0
    aar = project / "outputs" / "AAR.md"
    aar.write_text(aar.read_text().replace("0/7", "0/6"), encoding="utf-8")
    edited = aar.read_bytes()
    code, out, _ = render(capsys, "--check")
    assert code == 1
    assert out == ("outputs/AAR.md: stale: differs from a fresh render (edited by hand, the renderer changed, or git now "
                   "shows another order: once the design freeze is committed, render again)\n"
                   "Check failed: 1 of 3 outputs differ from a fresh render; run `readout render`.\n")
    assert aar.read_bytes() == edited  # --check writes nothing


def test_changed_results_make_every_output_stale_and_name_the_input(project, capsys, write_fixture_results):
    assert render(capsys)[0] == 0
    write_fixture_results(project / "outputs", hybrid_variant=1)  # a new, sealed evaluation
    code, out, _ = render(capsys, "--check")
    assert code == 1
    assert out.splitlines()[:3] == [f"outputs/{name}: stale: built from an older outputs/results.json"
                                    for name in OUTPUT_NAMES]


def test_missing_output_is_named_by_render_check(project, capsys):
    assert render(capsys)[0] == 0
    (project / "outputs" / "TEACHBACK.md").unlink()
    code, out, _ = render(capsys, "--check")
    assert code == 1
    assert out.splitlines()[0] == "outputs/TEACHBACK.md: missing"


def test_outputs_record_the_hashes_they_were_built_from(project, capsys):
    from generator.storage.fileio import sha256_file
    from generator.render.stamps import read_stamp

    assert render(capsys)[0] == 0
    for name, text in outputs(project).items():
        stamp = read_stamp(text)
        assert stamp["output"] == name
        assert stamp["ledger_sha256"] == sha256_file(project / "claims" / "ledger.yaml")
        assert stamp["design_freeze_sha256"] == sha256_file(project / "claims" / "design-freeze.json")
        assert stamp["results_sha256"] == {"results.json": sha256_file(project / "outputs" / "results.json")}
        assert stamp["templates_sha256"]["readout.html.j2"] == sha256_file(REPOSITORY / "templates" / "readout.html.j2")
        assert stamp["config_sha256"] == sha256_file(project / "readout.yaml")
    assert outputs(project)["AAR.md"].splitlines()[-1].startswith("<!-- readout-built-from {")


def test_rendering_is_deterministic(tmp_path, monkeypatch, capsys, make_project):
    first = make_project(tmp_path / "a")
    second = make_project(tmp_path / "b")
    assert render(capsys, str(first))[0] == 0
    assert render(capsys, str(second))[0] == 0
    assert outputs(first) == outputs(second)


class _Requests(HTMLParser):
    """Every attribute that could make a browser fetch something."""

    FETCHING = {"src", "href", "srcset", "action", "formaction", "data", "poster", "xlink:href", "background",
                "manifest", "ping", "cite", "longdesc"}

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self.meta: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "meta":
            self.meta.append(dict(attrs))
        for key, value in attrs:
            if key in self.FETCHING:
                self.found.append((tag, key, value or ""))

    handle_startendtag = handle_starttag


def test_html_requests_nothing_and_forbids_requests_by_csp(tmp_path, monkeypatch, capsys, make_project):
    project = make_project(tmp_path / "p", extra_claims="""\
        - id: addresses
          output: readout
          section: context
          kind: factual
          text: "See [the release](https://example.org/a), <https://example.org/b> and https://example.org/c; ![x](https://example.org/d.png) nothing enters or leaves."
          sources:
            - design: {document: decisions.md, quote: "The cross-encoder reorders the same 50 candidates; nothing enters or leaves."}
        """)
    monkeypatch.chdir(project)
    code, _, err = render(capsys)
    assert code == 1 and "remote reference in the text (image 'https://example.org/d.png')" in err
    # even a draft, which renders untraceable claims, fetches nothing: addresses stay readable as
    # text and links become "text (address)"
    assert render(capsys, "--draft")[0] == 0
    html = outputs(project)["readout.html"]
    assert ('See the release (<span class="addr">https://example.org/a</span>), https://example.org/b and '
            'https://example.org/c; x (<span class="addr">https://example.org/d.png</span>) nothing') in html
    assert 'href="https://' not in html and 'src="https://' not in html
    parser = _Requests()
    parser.feed(html)
    assert parser.found, "expected the in-page anchors and the data: icon"
    for tag, key, value in parser.found:
        assert value.startswith("#") or value.startswith("data:"), (tag, key, value)
    assert ("link", "href", "data:,") in parser.found
    # url(#pattern) names a fill inside the same SVG; any other url( could fetch something.
    assert not re.search(r"url\((?!#)|@import|<script|<iframe|<object|<embed|<img|<link rel=\"stylesheet",
                         html, re.IGNORECASE)
    csp = [m["content"] for m in parser.meta if m.get("http-equiv", "").lower() == "content-security-policy"]
    assert len(csp) == 1
    policy = {part.split()[0]: part.split()[1:] for part in csp[0].split(";") if part.strip()}
    assert policy["default-src"] == ["'none'"]
    assert policy["style-src"] == ["'unsafe-inline'"]
    assert policy["img-src"] == ["data:"]
    assert "script-src" not in policy
    assert len(html.encode("utf-8")) < MAX_HTML_BYTES


def test_html_is_responsive_and_prints_cleanly(project, capsys):
    assert render(capsys)[0] == 0
    html = outputs(project)["readout.html"]
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "@media print" in html and "@media (max-width: 40rem)" in html
    assert html.count('<div class="scroll" role="region"') >= 2  # tables scroll sideways on a phone
    assert "prefers-color-scheme: dark" in html and "@page" in html


def test_render_does_not_import_torch_or_sentence_transformers(project, tmp_path, monkeypatch):
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    main(["render", str(project)])
    code, heavy, output = cli_in_fresh_interpreter(["render", "--check", "."], cwd=project)
    assert code == 0, output
    # The render above remembered the fixture's re-derivation (generator.storage.memo), so the fresh
    # interpreter draws no interval again: not even NumPy is loaded, and never the model stack.
    assert heavy == [], output


def test_unknown_section_block_is_an_input_error_naming_the_field(tmp_path, monkeypatch, capsys, make_project):
    import yaml

    config = yaml.safe_load((REPOSITORY / "readout.yaml").read_text())["outputs"]
    config["readout"]["sections"][0]["show"] = ["pie"]
    root = make_project(tmp_path / "p")
    write_outputs_block(root, config)
    monkeypatch.chdir(root)
    code, _, err = render(capsys)
    assert code == 2
    line = _line_of(root / "readout.yaml", "pie") - 1  # the `show:` key above the list holding it
    assert "show:" in (root / "readout.yaml").read_text().splitlines()[line - 1]
    assert err == (f"Error: readout.yaml:{line}: outputs.readout.sections[0].show: unknown block 'pie'; choose from "
                   "table, quality_vs_time, deltas, provenance, claims_by_kind, decisions, rerank_cost, per_query, checked, "
                   "frontier, all_pairs, since_baseline\n")


def test_missing_results_is_an_input_error(project, capsys):
    (project / "outputs" / "results.json").unlink()
    code, _, err = render(capsys)
    assert code == 2
    assert "outputs/results.json" in err and "Traceback" not in err


def test_repository_templates_have_a_sentence_free_label_registry():
    from generator.render.labels import load_labels

    labels = load_labels(REPOSITORY / "templates" / "labels.yaml")
    assert labels["trace_score_first_draft"] == "First-draft trace score: untraceable claims / total claims ="


def test_claim_for_an_output_the_project_does_not_render_stops_the_render(tmp_path, monkeypatch, capsys, make_project):
    import yaml

    config = yaml.safe_load((REPOSITORY / "readout.yaml").read_text())["outputs"]
    del config["teachback"]
    root = make_project(tmp_path / "p")
    write_outputs_block(root, config)
    monkeypatch.chdir(root)
    code, _, err = render(capsys)
    assert code == 2
    assert err.startswith("Error: claims/ledger.yaml:")
    assert err.endswith(": output: claim same-candidates: output 'teachback' is not declared in readout.yaml "
                        "outputs; declared: readout, aar\n")


@pytest.mark.parametrize("text, expected", [
    ("# Not a heading", "\\# Not a heading"),
    ("- not a list item", "\\- not a list item"),
    ("2030. is a year", "2030\\. is a year"),
    ("> not a quote <b>", "&gt; not a quote &lt;b&gt;"),
    ("*emphasis* stays", "*emphasis* stays"),
])
def test_markdown_claim_text_cannot_become_block_syntax_or_raw_html(text, expected):
    from generator.render.orphans import strip_marks
    from generator.render.doors import MarkdownDoor

    assert strip_marks(MarkdownDoor().claim(text)) == expected


def test_chart_without_its_required_option_is_an_input_error(tmp_path, monkeypatch, capsys, make_project):
    import yaml

    config = yaml.safe_load((REPOSITORY / "readout.yaml").read_text())["outputs"]
    del config["readout"]["charts"]["quality_vs_time"]["time"]
    root = make_project(tmp_path / "p")
    write_outputs_block(root, config)
    monkeypatch.chdir(root)
    code, _, err = render(capsys)
    line = _line_of(root / "readout.yaml", "quality_vs_time:")
    assert (code, err) == (2, f"Error: readout.yaml:{line}: outputs.readout.charts.quality_vs_time.time: missing\n")
