"""What the checker reads and what a reader sees are the same characters (issue 39): every
default-ignorable, format, control, private-use or unassigned character (generator.core.text.characters,
one list from the Unicode data) is refused in every text channel a reader sees or the checker
reads, with the character named; and on a clean input the checker's canonical text of a claim is
the text the renderer writes for it."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generator.claims.tracing.checker import check_project
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.project import load_project
from tests.conftest import (BUDGET_REQUIREMENTS, FUSION, _make_project, claim, d5_record, edit_config, ledger_text,
                            measured, set_label)

# One of every class: soft hyphen, zero-width space and joiner, word joiner, bidi isolates and the
# Arabic letter mark, the Mongolian vowel separator, a variation selector, tag characters (an
# invisible "0" and "9", the cancel tag), the byte order mark, a bidi override, a control
# character, a private-use character and an unassigned code point.
CHARACTERS = ["\u00ad", "\u200b", "\u200d", "\u2060", "\u2066", "\u2069", "\u061c", "\u180e", "\ufe0f",
              "\U000e0030", "\U000e0039", "\U000e007f", "\ufeff", "\u202e", "\u0007", "\ue000", "\u0378"]


def _code(char: str) -> str:
    return f"U+{ord(char):04X}"


def _ledger(root: Path, *claims: str) -> None:
    (root / "claims" / "ledger.yaml").write_text(ledger_text("".join(claims)), encoding="utf-8")


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# Each channel: (what to change in a fresh copy of the fixture project, given the hidden
# character; the command that must refuse it). `hide(word)` puts the character inside a word.

def _claim_text(root, hide):
    _ledger(root, claim("c", f"Hybrid {hide('fuses')} both lists.", FUSION))
    return ["check", "--no-record"]


def _claim_id(root, hide):
    _ledger(root, claim("c", "Hybrid fuses both lists.", FUSION).replace("- id: c", f"- id: {_quoted(hide('fusion'))}"))
    return ["check", "--no-record"]


def _strike_reason(root, hide):
    _ledger(root, claim("c", "Hybrid fuses both lists.", kind="factual",
                        extra=f"status: struck\nstrike_reason: {_quoted('no ' + hide('source'))}"))
    return ["check", "--no-record"]


def _strike_display(root, hide):
    _ledger(root, claim("c", "Hybrid fuses both lists.",
                        extra=f"status: struck\nstrike_reason: no source\nstrike_display: {_quoted(hide('strike'))}"))
    return ["check", "--no-record"]


def _design_quote(root, hide):
    quote = f"Hybrid uses RRF with {hide('constant')} 60 over both top-50 lists."
    _ledger(root, claim("c", "Hybrid fuses both lists.", "- design: " + json.dumps(
        {"document": "decisions.md", "quote": quote}, ensure_ascii=False)))
    return ["check", "--no-record"]


def _config(change):
    def channel(root, hide):
        edit_config(root, lambda data: change(data, hide))
        return ["check", "--no-record"]
    return channel


def _label(root, hide):
    shutil.copytree(Path(__file__).resolve().parent.parent / "templates", root / "templates")
    set_label(root, "contents", hide("Contents"))
    return ["render"]


def _freeze_reason(root, hide):
    path = root / "design" / "decisions.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nA note on the fusion.\n", encoding="utf-8")
    return ["freeze", "--reason", f"the design {hide('grows')}"]


def _trigger(replace):
    def channel(root, hide):
        (root / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
        path = root / "design" / "decisions.md"
        path.write_text(path.read_text(encoding="utf-8") + replace(d5_record(), hide), encoding="utf-8")
        return ["freeze", "--reason", "the design grows", "--post-hoc", "D5"]
    return channel


CHANNELS = {
    "claim text": _claim_text,
    "claim id": _claim_id,
    "strike_reason": _strike_reason,
    "strike_display": _strike_display,
    "design quote": _design_quote,
    "label": _label,
    "title": _config(lambda data, hide: data.update(title=f"The {hide('reranker')} that has to pay")),
    "section title": _config(lambda data, hide: data["outputs"]["readout"]["sections"][0].update(
        title=hide("Verdict"))),
    "column label": _config(lambda data, hide: data["outputs"]["aar"]["table"]["columns"][0].update(
        label=hide("Recall") + "@5")),
    "skip_rerank_reason": _config(lambda data, hide: data.update(evaluate={
        "skip_rerank": True, "skip_rerank_reason": f"no {hide('model')} offline"})),
    "row name": _config(lambda data, hide: data.update(evaluate={"rows": [{"name": hide("dense"), "kind": "dense"}]})),
    "row skip": _config(lambda data, hide: data.update(evaluate={"rows": [
        {"name": "dense", "kind": "dense"}, {"name": "sparse", "kind": "sparse"},
        {"name": "hybrid", "kind": "fusion", "of": ["dense", "sparse"]},
        {"name": "hybrid+rerank", "kind": "rerank", "over": "hybrid", "model": "m",
         "skip": f"no {hide('model')} offline"}]})),
    "freeze --reason": _freeze_reason,
    "trigger fires": _trigger(lambda record, hide: record.replace(
        "fires: ship the reranker", f"fires: {_quoted('ship the ' + hide('reranker'))}")),
    "trigger otherwise": _trigger(lambda record, hide: record.replace(
        "otherwise: do not ship the reranker", f"otherwise: {_quoted('do not ship the ' + hide('reranker'))}")),
    "trigger heading": _trigger(lambda record, hide: record.replace(
        "A reranker ships", f"A {hide('reranker')} ships")),
}


@pytest.fixture(scope="module")
def fixture_project(tmp_path_factory) -> Path:
    """One fixture project, copied for each case (writing a fresh one per case costs its results)."""
    return _make_project(tmp_path_factory.mktemp("invisible") / "project")


def _middle(char: str):
    return lambda word: word[:len(word) // 2] + char + word[len(word) // 2:]


def _refused(capsys, argv: list[str], char: str) -> str:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert _code(char) in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("char", CHARACTERS, ids=_code)
@pytest.mark.parametrize("channel", CHANNELS)
def test_a_hidden_character_is_refused_in_every_channel(fixture_project, tmp_path, monkeypatch, capsys, channel, char):
    root = tmp_path / "p"
    shutil.copytree(fixture_project, root)
    argv = CHANNELS[channel](root, _middle(char))
    monkeypatch.chdir(root)
    _refused(capsys, [*argv, str(root)], char)


@pytest.mark.parametrize("char", CHARACTERS, ids=_code)
@pytest.mark.parametrize("option", ["--title", "--run-name"])
def test_a_hidden_character_is_refused_by_init(tmp_path, monkeypatch, capsys, option, char):
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "team.trec"
    run.write_text("q1 Q0 d1 1 1.0 team\n", encoding="utf-8")
    extra = ["--run", str(run)] if option == "--run-name" else []
    _refused(capsys, ["init", "new", *extra, option, _middle(char)("teamrun")], char)
    assert not (tmp_path / "new" / "readout.yaml").exists()


def test_alone_with_a_soft_hyphen_is_refused_for_the_hidden_character_not_read_as_one(fixture_project, tmp_path,
                                                                                      monkeypatch, capsys):
    root = tmp_path / "p"
    shutil.copytree(fixture_project, root)
    _ledger(root, claim("c", "Hybrid works al\u00adone over both lists.", FUSION))
    with pytest.raises(InputError) as raised:
        check_project(load_project(root))
    message = str(raised.value)
    assert "U+00AD SOFT HYPHEN" in message and "text" in message
    assert "'one'" not in message and "number" not in message
    monkeypatch.chdir(root)
    line = _refused(capsys, ["check", "--no-record", str(root)], "\u00ad")
    assert "number" not in line


# --- on a clean input, the checker reads what the reader sees ----------------------------------

CLEAN = {
    "plain": ("Hybrid uses RRF with lists.", FUSION),
    "emphasis": ("Hybrid *uses* **RRF** with lists.", FUSION),
    "code": ("Hybrid uses `rrf` with lists.", FUSION),
    "accents": ("The fusion rule is a na\u00efve caf\u00e9 rule.", FUSION),
    "markup": ("The fusion rule takes <both> lists & more.", FUSION),
    "placeholder": ("Hybrid reached nDCG@5 {h:.3f} on the sample.",
                    measured({"h": "table[search=hybrid].nDCG@5"})),
}


class _ClaimSpans(HTMLParser):
    """The text of every `<span class="claim" id="claim-ID">`, without its source reference."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.texts: dict[str, str] = {}
        self.stack: list[tuple[str, str | None, bool]] = []    # (tag, claim id, inside a reference)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        claim_id, in_ref = (self.stack[-1][1], self.stack[-1][2]) if self.stack else (None, False)
        if tag == "span" and attributes.get("class") == "claim":
            claim_id = (attributes.get("id") or "").removeprefix("claim-")
            self.texts[claim_id] = ""
        in_ref = in_ref or (claim_id is not None and tag == "a")
        self.stack.append((tag, claim_id, in_ref))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self.stack and self.stack[-1][1] is not None and not self.stack[-1][2]:
            self.texts[self.stack[-1][1]] += data


def test_on_a_clean_input_the_canonical_text_is_the_rendered_text(make_project, tmp_path, monkeypatch, capsys):
    claims = "".join(claim(f"clean-{name}", text, sources, section="results",
                           kind="performance" if "{" in text else "factual")
                     for name, (text, sources) in CLEAN.items())
    root = make_project(tmp_path / "p", extra_claims=claims)
    report = check_project(load_project(root))
    monkeypatch.chdir(root)
    assert main(["render", str(root)]) == 0, capsys.readouterr().err
    parser = _ClaimSpans()
    parser.feed((root / "outputs" / "readout.html").read_text(encoding="utf-8"))
    for name in CLEAN:
        result = report.result(f"clean-{name}")
        assert result.traceable, (name, result.findings)
        assert " ".join(parser.texts[f"clean-{name}"].split()) == result.canonical_text, name


@pytest.mark.parametrize("char", ["\u00ad", "\U000e0039"], ids=_code)
def test_a_hidden_character_in_a_stored_freeze_reason_is_refused(fixture_project, tmp_path, monkeypatch, capsys, char):
    root = tmp_path / "p"
    shutil.copytree(fixture_project, root)
    path = root / "claims" / "design-freeze.json"
    log = json.loads(path.read_text(encoding="utf-8"))
    log["freezes"][-1]["reason"] = _middle(char)("grows")
    path.write_text(json.dumps(log), encoding="utf-8")
    monkeypatch.chdir(root)
    assert "design-freeze.json" in _refused(capsys, ["check", "--no-record", str(root)], char)


def test_a_design_document_holding_a_hidden_character_is_named_as_the_cause(tmp_path, capsys):
    """The quote a reader copies from the page misses the document's invisible soft hyphen: the
    finding names the character and the line, instead of showing two identical-looking texts."""
    from generator.commands.cli import main
    from tests.conftest import _make_project, claim, design

    quote = "Hybrid uses RRF with constant 60 over both top-50 lists."
    root = _make_project(tmp_path / "p", extra_claims=claim("quoted", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."',
                                                            design(quote)))
    path = root / "design" / "decisions.md"
    text = path.read_text(encoding="utf-8")
    assert quote in text
    path.write_text(text.replace(quote, quote.replace("both", "bo\u00adth")), encoding="utf-8")
    main(["check", "--no-record", str(root)])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "claim quoted" in line)
    assert "U+00AD SOFT HYPHEN" in line and "delete it from the document" in line


def test_the_hidden_table_is_the_regex_tables_on_every_code_point():
    import sys

    from generator.core.text.characters import HiddenCharacters, hidden_ranges, regex_hidden_pattern

    table, tables = HiddenCharacters(hidden_ranges()), regex_hidden_pattern()
    disagree = [f"U+{point:04X}" for point in range(sys.maxunicode + 1)
                if table.hides(chr(point)) != bool(tables.match(chr(point)))]
    assert disagree == []


def test_the_hidden_table_finds_and_replaces_what_the_regex_pattern_does():
    from generator.core.text.characters import HiddenCharacters, hidden_ranges, regex_hidden_pattern

    table, tables = HiddenCharacters(hidden_ranges()), regex_hidden_pattern()
    text = "tab\there, line\nend, é and ü, " + "x".join(CHARACTERS) + " \u2028 done"
    assert [m.span() for m in table.finditer(text)] == [m.span() for m in tables.finditer(text)] != []
    shown = lambda match: f"[{ord(match.group(0)):X}]"   # noqa: E731
    assert table.sub(shown, text) == tables.sub(shown, text) != text


def test_with_memos_the_gate_reads_the_table_and_without_them_the_regex_tables(monkeypatch, tmp_path):
    from generator.core.text import characters

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for memos_off, expected in (("", "HiddenCharacters"), ("1", "Pattern")):
        monkeypatch.setenv("READOUT_NO_MEMO", memos_off)
        characters.hidden_pattern.cache_clear()
        try:
            assert type(characters.hidden_pattern()).__name__ == expected
            assert characters.hidden_character("soft\u00adhyphen é") == "\u00ad"
        finally:
            characters.hidden_pattern.cache_clear()
