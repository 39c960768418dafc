"""`readout export`: a report's rows table as CSV or a LaTeX booktabs fragment, cell for cell the
table the committed reports show (the repository root and examples/l03 are only read here)."""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generator.storage import fileio, paths
from generator.storage.errors import InputError
from generator.project import load_project
from generator.render.export import (CsvDoor, LatexDoor, choose_output, configure_export, export_table, format_table,
                                     latex_escape, run_export,
                                     write_export)
from generator.core.results import read_results
from tests.conftest import REPOSITORY_ROOT, ROOT_CONFIG

L03 = REPOSITORY_ROOT / "examples" / "l03"
# Every character LaTeX reads as syntax, and the three OT1 prints as other glyphs.
WEIRD = r'a_b & c % {d} ~e^ \f # $g, "q" <x> |y| --z'


# --- helpers: read a table back out of a report, a CSV and a LaTeX fragment ---------------------


def parse_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def markdown_table(path: Path) -> tuple[list[list[str]], dict[str, str]]:
    """The rows table of a Markdown report (header first, separator dropped), unescaped, and the
    `Not measured: NAME: REASON` lines under it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Row |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [re.sub(r"\\(.)", r"\1", cell.strip()) for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        if not all(re.fullmatch(r"-+:?", cell) for cell in cells):
            rows.append(cells)
    reasons = {}
    for line in lines[start:]:
        match = re.fullmatch(r"Not measured: (.+?): (.+)", line)
        if match:
            reasons[re.sub(r"\\(.)", r"\1", match[1])] = re.sub(r"\\(.)", r"\1", match[2])
    return rows, reasons


class _HtmlRowsTable(HTMLParser):
    """The first HTML table whose header starts with `Row`: for each body row its name and its
    cells as (text, interval text, colspan)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self.cell: list | None = None
        self.in_ci = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append({"header": [], "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td") and self.tables and self.tables[-1]["rows"]:
            self.cell = [tag, attrs.get("scope"), "", "", int(attrs.get("colspan", 1))]
            self.tables[-1]["rows"][-1].append(self.cell)
        elif tag == "span" and attrs.get("class") == "ci":
            self.in_ci = True

    def handle_endtag(self, tag):
        if tag in ("th", "td"):
            self.cell = None
        elif tag == "span":
            self.in_ci = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[3 if self.in_ci else 2] += data

    def rows_table(self) -> list[list]:
        return next(t["rows"] for t in self.tables if t["rows"] and t["rows"][0][0][2] == "Row")


def html_table(path: Path) -> list[list]:
    parser = _HtmlRowsTable()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.rows_table()


_UNESCAPE = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^",
             r"\textless{}": "<", r"\textgreater{}": ">", r"\textbar{}": "|", "-{}": "-",
             **{"\\" + c: c for c in "&%$#_{}"}}
_UNESCAPE_PATTERN = re.compile("|".join(re.escape(k) for k in sorted(_UNESCAPE, key=len, reverse=True)))


def unlatex(text: str) -> str:
    return _UNESCAPE_PATTERN.sub(lambda m: _UNESCAPE[m.group(0)], text)


def latex_cells(line: str) -> list[str]:
    """A tabular line's cells: split on unescaped `&`, the closing `\\\\` dropped."""
    assert line.endswith(r" \\"), line
    return [cell.strip() for cell in re.split(r"(?<!\\)&", line[:-3])]


def latex_body(text: str) -> tuple[list[str], list[str]]:
    """(lines before \\begin{tabular}, the lines between \\midrule and \\bottomrule)."""
    lines = text.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.startswith(r"\begin{tabular}"))
    return lines[:begin], lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]


def project_with_rows(tmp_path: Path, make_project, **kwargs):
    return load_project(make_project(tmp_path / "p", **kwargs))


def renamed_table(tmp_path: Path, make_project, rename: dict[str, str], output: str, fmt: str) -> str:
    """The table of `output` with rows renamed, formatted as export formats it: a name no run file
    can carry (export itself refuses such a file, which no longer re-derives), so the doors are
    tested on the table alone."""
    project = project_with_rows(tmp_path, make_project)
    path = project.outputs_dir / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for row in data["table"]:
        row["search"] = rename.get(row["search"], row["search"])
    path.write_text(json.dumps(data), encoding="utf-8")
    return format_table(project, choose_output(project, output), read_results(path), fmt)


# --- the committed reports, read only -----------------------------------------------------------


@pytest.mark.parametrize("root", [REPOSITORY_ROOT, L03], ids=["scifact", "l03"])
def test_csv_is_the_aar_table_cell_for_cell(root):
    report, reasons = markdown_table(root / "outputs" / "AAR.md")
    exported = parse_csv(export_table(load_project(root), output="aar", fmt="csv"))
    if reasons:   # the last column holds the reason the report prints under the table
        assert exported[0][-1] == "Not measured"
        assert {row[0]: row[-1] for row in exported[1:] if row[-1]} == reasons
        exported = [row[:-1] for row in exported]
    assert exported == report
    assert len(report) == 1 + len(json.loads((root / "outputs" / "results.json").read_text())["table"])


def test_the_root_aar_table_says_which_row_was_not_measured_and_why():
    exported = parse_csv(export_table(load_project(REPOSITORY_ROOT), output="aar"))
    skipped = next(row for row in exported if row[0] == "hybrid+bge-v2-m3")
    (reason,) = [row.skip for row in load_project(REPOSITORY_ROOT).evaluate["rows"] if row.name == "hybrid+bge-v2-m3"]
    assert skipped == ["hybrid+bge-v2-m3", *["not measured"] * 4, reason]
    measured = next(row for row in exported if row[0] == "hybrid+rerank")
    assert "not measured" not in measured and measured[-1] == ""


def test_csv_of_the_readout_table_is_the_html_table_with_intervals_as_low_and_high_columns():
    project = load_project(REPOSITORY_ROOT)
    exported = parse_csv(export_table(project, output="readout", fmt="csv"))
    html = html_table(REPOSITORY_ROOT / "outputs" / "readout.html")
    columns = project.outputs["readout"].table.columns
    header = ["Row"]
    for column in columns:
        header += [column.label] + ([f"{column.label} low", f"{column.label} high"] if column.interval else [])
    assert exported[0] == header + ["Not measured"]
    assert [cell[2] for cell in html[0]] == ["Row"] + [column.label for column in columns]
    assert [row[0] for row in exported[1:]] == [row[0][2] for row in html[1:]]
    for line, row in zip(exported[1:], html[1:]):
        if row[1][4] > 1:   # not measured: one cell spanning the row, with the reason
            assert row[1][2] == f"Not measured: {line[-1]}"
            continue
        cells = iter(line[1:])
        for column, (_, _, text, interval, _) in zip(columns, row[1:]):
            assert next(cells) == text
            if column.interval:
                low, high = next(cells), next(cells)
                assert interval == (f"[{low}, {high}]" if low else "")
        assert next(cells) == ""   # the reason column, empty for a measured row
    bounds = [cell for line in exported[1:] for cell in line if re.fullmatch(r"[+-]\d\.\d{3}", cell)]
    rows = json.loads((REPOSITORY_ROOT / "outputs" / "results.json").read_text())["table"]
    assert len(bounds) >= 12 and len(exported) == 1 + len(rows)   # the comparison above compared intervals


def test_latex_of_the_readout_table_is_the_html_table():
    text = export_table(load_project(REPOSITORY_ROOT), output="readout", fmt="latex")
    html = html_table(REPOSITORY_ROOT / "outputs" / "readout.html")
    _, body = latex_body(text)
    assert len(body) == len(html) - 1
    for line, row in zip(body, html[1:]):
        cells = [unlatex(cell) for cell in latex_cells(line)]
        if row[1][4] > 1:
            assert cells == [row[0][2], r"\multicolumn{7}{l}{" + row[1][2] + "}"]
        else:
            assert cells == [row[0][2]] + [text + (" " + ci if ci else "") for _, _, text, ci, _ in row[1:]]


def test_latex_starts_with_the_results_sha256_and_is_a_booktabs_tabular_fragment():
    text = export_table(load_project(REPOSITORY_ROOT), output="readout", fmt="latex")
    digest = hashlib.sha256((REPOSITORY_ROOT / "outputs" / "results.json").read_bytes()).hexdigest()
    lines = text.split("\n")
    assert lines[0] == f"% generated by readout export from outputs/results.json sha256 {digest} (the readout table)"
    assert lines[1] == "% measured on: release sample, 20 queries"
    assert lines[2] == "% in brackets: the paired interval of the change"
    assert lines[3:7] == [r"\begin{tabular}{lrrrrrrr}", r"\toprule",
                          r"Row & Recall@5 & Recall@50 & nDCG@5 & Recall@5 change over dense & Recall@50 change over "
                          r"dense & nDCG@5 change over dense & p95 rerank time (ms) \\", r"\midrule"]
    assert lines[-3:] == [r"\bottomrule", r"\end{tabular}", ""]
    assert "documentclass" not in text and r"\begin{document}" not in text and r"\begin{table}" not in text


def test_latex_aligns_text_columns_left_and_numbers_right_and_escapes_underscores():
    text = export_table(load_project(L03), fmt="latex")
    assert r"\begin{tabular}{llrr}" in text.split("\n")
    _, body = latex_body(text)
    assert body[1] == r"opaque & supplied opaque run (model\_identity: none) & 1.000000 & 0.880035 \\"
    assert r"% in brackets" not in text   # no column of the L03 table has an interval
    assert r"\multicolumn" not in text


def test_csv_quotes_a_cell_that_holds_a_comma():
    text = export_table(load_project(L03), fmt="csv")
    assert 'hybrid,"min-max hybrid, alpha on BM25",1.000000,0.888438\n' in text
    assert parse_csv(text)[3][1] == "min-max hybrid, alpha on BM25"


def test_the_default_output_is_the_first_with_a_table_readout_before_aar():
    project = load_project(REPOSITORY_ROOT)
    assert export_table(project) == export_table(project, output="readout", fmt="csv")
    assert export_table(project) != export_table(project, output="aar")


# --- escaping and quoting of a row name LaTeX and CSV would read as syntax ----------------------


def test_a_row_name_with_latex_specials_is_escaped_and_reads_back(tmp_path, make_project):
    text = renamed_table(tmp_path, make_project, {"sparse": WEIRD}, "readout", "latex")
    _, body = latex_body(text)
    line = body[1]
    assert line.startswith(r"a\_b \& c \% \{d\} \textasciitilde{}e\textasciicircum{} \textbackslash{}f \# \$g, "
                           r'"q" \textless{}x\textgreater{} \textbar{}y\textbar{} -{}-z & ')
    assert len(latex_cells(line)) == 8   # the name's `&` is no column separator
    assert unlatex(latex_cells(line)[0]) == WEIRD
    # No special character is left bare anywhere in the fragment's rows.
    for row in body:
        bare = re.sub(r"\\(?:textbackslash|textasciitilde|textasciicircum|textless|textgreater|textbar){}"
                      r"|\\[&%$#_{}]|\\multicolumn\{\d+\}\{l\}\{|\\\\$", "", row)
        assert not re.search(r"[\\%$#_~^<>|]", bare), row


def test_a_row_name_with_a_comma_and_quotes_parses_back_from_csv(tmp_path, make_project):
    rows = parse_csv(renamed_table(tmp_path, make_project, {"sparse": WEIRD}, "aar", "csv"))
    assert [row[0] for row in rows] == ["Row", "dense", WEIRD, "hybrid", "hybrid+rerank"]
    assert {len(row) for row in rows} == {6}


@pytest.mark.parametrize("name", ['=HYPERLINK("http://example.org/x","click")', "@SUM(A1)", "+cmd|' /C calc'!A0"])
def test_a_cell_a_spreadsheet_would_run_as_a_formula_is_neutralised(tmp_path, make_project, name):
    rows = parse_csv(renamed_table(tmp_path, make_project, {"sparse": name}, "aar", "csv"))
    assert rows[2][0] == "'" + name
    # Signed numbers stay numbers: a change column keeps its "+0.125", and nothing else is prefixed.
    cells = [cell for row in rows[1:] for cell in row[1:]]
    assert any(re.fullmatch(r"\+\d+\.\d+", cell) for cell in cells), cells
    assert not any(cell.startswith("'") for cell in cells), cells


def test_latex_escape_covers_every_special_character():
    assert latex_escape("&%$#_{}~^\\") == (r"\&\%\$\#\_\{\}\textasciitilde{}\textasciicircum{}"
                                          r"\textbackslash{}")
    assert latex_escape("plain text, 0.5 [x]") == "plain text, 0.5 [x]"
    assert latex_escape("a--b") == "a-{}-b"


def test_doors_provide_what_a_view_asks_for():
    for door in (CsvDoor(), LatexDoor()):
        assert door.join([door.data("a"), door.code("b")]).count(" ") == 1
        assert "c" in door.quote("c") and "d" in door.claim("d")
    assert CsvDoor().interval("-0.1", "+0.2") == ("-0.1", "+0.2")
    assert LatexDoor().interval("-0.1", "+0.2") == "[-0.1, +0.2]"
    assert LatexDoor().code("x_y") == r"\texttt{x\_y}"
    assert CsvDoor().data("a\n  b\ue000") == "a b"


# --- variants: measured rerank row, text columns, other results files ----------------------------


def test_a_measured_rerank_row_shows_its_p95_with_the_column_format(tmp_path, make_project):
    times = {f"q{number:02d}": 100.0 + number for number in range(1, 21)}
    project = project_with_rows(tmp_path, make_project, results={"rerank_milliseconds": times})
    results = json.loads((project.outputs_dir / "results.json").read_text(encoding="utf-8"))
    rows = parse_csv(export_table(project, output="readout"))
    assert rows[0][-1] == "p95 rerank time (ms)"   # no reason column: every row was measured
    # The column reads one results value, so it belongs to the first reranker's row alone.
    assert [row[-1] for row in rows[1:]] == ["—"] * 3 + [f"{results['p95_rerank_milliseconds']:.1f}"]
    latex = export_table(project, output="readout", fmt="latex")
    assert r"\multicolumn" not in latex
    assert latex_body(latex)[1][3].endswith(f" & {results['p95_rerank_milliseconds']:.1f} \\\\")


def test_a_text_column_aligns_left_and_an_unmeasured_row_spans_it(tmp_path, make_project):
    outputs = json.loads(json.dumps(ROOT_CONFIG["outputs"]))
    outputs["aar"]["table"]["columns"].insert(0, {"key": "model", "label": "Model"})
    project = project_with_rows(tmp_path, make_project, outputs=outputs)
    text = export_table(project, output="aar", fmt="latex")
    assert r"\begin{tabular}{llrrrr}" in text
    assert latex_body(text)[1][-1] == (r"hybrid+rerank & \multicolumn{5}{l}{Not measured: no cross-encoder "
                                       r"offline} \\")
    assert parse_csv(export_table(project, output="aar"))[1][:2] == ["dense", "dense-model"]


def test_a_results_file_other_than_results_json_is_named_in_the_comment(tmp_path, make_project):
    project = project_with_rows(tmp_path, make_project)
    other = project.outputs_dir / "results-300.json"
    other.write_bytes((project.outputs_dir / "results.json").read_bytes())   # re-derives from the same runs
    dense = read_results(other).model.row("dense")["nDCG@5"]
    text = export_table(project, output="aar", fmt="latex", results_file="results-300.json")
    digest = hashlib.sha256(other.read_bytes()).hexdigest()
    assert text.startswith(f"% generated by readout export from outputs/results-300.json sha256 {digest} ")
    assert latex_body(text)[1][0].startswith("dense & ") and f" & {dense:.3f} & " in latex_body(text)[1][0]
    with pytest.raises(InputError, match="missing"):
        export_table(project, results_file="results-999.json")


def test_the_command_exports_any_results_file_and_names_it_when_results_json_is_missing(
        tmp_path, make_project, capsysbinary):
    project = project_with_rows(tmp_path, make_project)
    main_file = project.outputs_dir / "results.json"
    (project.outputs_dir / "results-300.json").write_bytes(main_file.read_bytes())
    dense = read_results(main_file).model.row("dense")["nDCG@5"]
    main_file.unlink()   # as after `readout evaluate --queries all` alone
    with pytest.raises(InputError) as caught:
        run_export(_args(str(project.root)))
    assert caught.value.reason == "missing; outputs/ holds results-300.json: export it with --results results-300.json"
    assert str(caught.value).count("\n") == 0 and "results.json" in str(caught.value)
    assert run_export(_args(str(project.root), "--results", "results-300.json")) == 0
    out = capsysbinary.readouterr().out.decode("utf-8")
    assert out == export_table(project, results_file="results-300.json") and f",{dense:.3f}," in out


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,field,message", [
    ({"fmt": "xlsx"}, "--format", "unknown format 'xlsx'; choose from csv, latex"),
    ({"output": "summary"}, "--output", "no output 'summary'; this project declares readout, teachback, aar"),
    ({"output": "teachback"}, "--output", "output 'teachback' has no table (outputs.teachback.table); outputs "
                                          "with a table: readout, aar"),
])
def test_errors_name_the_option(kwargs, field, message):
    with pytest.raises(InputError) as caught:
        export_table(load_project(REPOSITORY_ROOT), **kwargs)
    assert caught.value.field == field
    assert caught.value.reason == message
    assert "\n" not in str(caught.value)


def test_a_project_whose_outputs_have_no_table_is_refused(tmp_path, make_project):
    outputs = {"teachback": json.loads(json.dumps(ROOT_CONFIG["outputs"]["teachback"]))}
    project = project_with_rows(tmp_path, make_project, outputs=outputs)
    with pytest.raises(InputError) as caught:
        export_table(project)
    assert caught.value.field == "--output" and "no output declares a table" in caught.value.reason


# --- determinism and the command ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "latex"])
def test_the_same_inputs_give_the_same_bytes_from_any_directory(fmt, tmp_path, monkeypatch):
    first = export_table(load_project(REPOSITORY_ROOT), fmt=fmt)
    monkeypatch.chdir(tmp_path)
    second = export_table(load_project(REPOSITORY_ROOT), fmt=fmt)
    assert first == second
    assert first.endswith("\n") and "\r" not in first


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="readout export")
    configure_export(parser)
    return parser.parse_args(list(argv))


def test_the_command_prints_the_export_as_utf8(capsysbinary):
    assert run_export(_args(str(L03), "--format", "latex")) == 0
    out = capsysbinary.readouterr().out
    assert out == export_table(load_project(L03), fmt="latex").encode("utf-8")


def test_the_command_defaults_to_csv_of_the_current_project(capsysbinary, monkeypatch):
    monkeypatch.chdir(L03)
    args = _args()
    assert (args.project, args.format, args.output_name, args.to) == (Path("."), "csv", None, None)
    assert run_export(args) == 0
    assert capsysbinary.readouterr().out.decode("utf-8").startswith("Row,What,Recall@3,NDCG@3 (exponential in grade)\n")


def test_to_writes_the_file_atomically(tmp_path, capsys, monkeypatch):
    target = tmp_path / "table.tex"
    assert run_export(_args(str(L03), "--format", "latex", "--to", str(target))) == 0
    written = target.read_bytes()
    assert written == export_table(load_project(L03), fmt="latex").encode("utf-8")
    assert capsys.readouterr().out == f"wrote {paths.display_path(target)} ({len(written)} bytes)\n"
    # A write that fails at the rename leaves the old file whole and no temporary beside it.
    target.write_text("old\n", encoding="utf-8")

    def failing(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio, "_replace", failing)
    with pytest.raises(OSError):
        run_export(_args(str(L03), "--format", "latex", "--to", str(target)))
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["table.tex"]


@pytest.mark.parametrize("name,fmt", [("results.json", "csv"), ("table.csv", "latex"), ("table.tex", "csv")])
def test_to_writes_only_a_file_of_its_format(tmp_path, name, fmt):
    with pytest.raises(InputError) as caught:
        write_export("x\n", tmp_path / name, fmt)
    assert caught.value.field == "--to"
    assert not (tmp_path / name).exists()


def test_to_refuses_a_directory(tmp_path):
    (tmp_path / "table.csv").mkdir()
    with pytest.raises(InputError, match="directory"):
        write_export("x\n", tmp_path / "table.csv", "csv")


def test_results_are_read_not_written(tmp_path, make_project):
    project = project_with_rows(tmp_path, make_project)
    before = {path.name: path.read_bytes() for path in project.outputs_dir.iterdir() if path.is_file()}
    export_table(project, fmt="latex")
    export_table(project, fmt="csv")
    assert {path.name: path.read_bytes() for path in project.outputs_dir.iterdir() if path.is_file()} == before
    assert read_results(project.outputs_dir / "results.json").data["table"][0]["search"] == "dense"


@pytest.mark.parametrize("only", [None, ["hybrid+rerank", "hybrid+rerank-int8"], []])
def test_a_path_column_belongs_to_exactly_one_row(only):
    # One results value shown in several rows' cells would give a second reranker the first's p95.
    from generator.storage.errors import InputError
    from generator.project.outputs import parse_outputs

    column = {"path": "p95_rerank_milliseconds", "label": "p95 (ms)", **({"only": only} if only is not None else {})}
    outputs = {"readout": {"file": "readout.html", "template": "readout.html.j2",
                           "sections": [{"id": "results", "title": "Results", "show": ["table"]}],
                           "table": {"columns": [column]}}}
    with pytest.raises(InputError, match=r"columns\[0\]\.only.*belongs to one row"):
        parse_outputs(outputs, "readout.yaml")
    column["only"] = ["hybrid+rerank"]
    assert parse_outputs(outputs, "readout.yaml")["readout"].table.columns[0].only == ("hybrid+rerank",)
