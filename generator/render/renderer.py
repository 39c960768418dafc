"""Render readout.html, TEACHBACK.md and AAR.md from the checked ledger and results.json.

`render_project` runs the claim check first and refuses to render when it fails; with `draft` it
renders anyway and flags every failure where the reader sees it. Rendering happens in memory; the
orphan scan (generator.render.orphans) then proves that every word and number in the outputs came
from a ledger claim, a registered label or a data value, and only then are the files written
(atomically). With `check_only` nothing is written and each output that differs from a fresh
render is named (generator.render.stamps), like `cog --check`.

Every output is the package's page (generator.render.shell): what it contains is configured per
project in readout.yaml under `outputs:` (generator.project.outputs), its look by the project's
theme (generator.render.theme), what it receives by generator.render.context, and a team adds
content through slots. A page of the project's
own renders, marked, and fails `render --check`, as does any file under outputs/ the tool did
not write (generator.render.stamps.unwritten_files).
Determinism: no clock is read; every mapping is emitted in sorted or configured order.
"""

from __future__ import annotations

import re
from dataclasses import asdict, field
from pathlib import Path
from typing import Any, Iterable

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from generator.claims.tracing.checker import check_project
from generator.core.dataclass import dataclass
from generator.storage.memo import Memo, default_memo, save_books
from generator.claims.tracing.report import CheckReport, failure_lines
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_file, sha256_text, write_set
from generator.storage.paths import display_path, reading
from generator.project import Project, default_templates_dir
from generator.project.outputs import OutputSpec, TableSpec
from generator.render.bytecode import SignedBytecode
from generator.render.context import _context, _Shared
from generator.render.disclosure import OWN_DIR
from generator.render.doors import HtmlDoor, MarkdownDoor
from generator.render.labels import LABELS_NAME, Labels, load_labels
from generator.render.orphans import Orphan, scan
from generator.render.shell import (HTML_SLOTS, MARKDOWN_SLOTS, mark_unverified, own_templates_dir, page_source, slot,
                                    slot_module, unverified_lines)
from generator.render.stamps import (Rendered, manifest_files, stale_outputs, stamp_text, template_hashes,
                                     unwritten_files)
from generator.render.theme import load_theme
from generator.core.results import RESULTS_NAME, Results, read_results
from generator.core.results.seal import only_rederived, parsed_once


def _environment(*search_path: Path) -> Environment:
    return Environment(
        loader=FileSystemLoader([str(path) for path in search_path]),
        # Autoescape on for every HTML template (and any unknown kind); off for Markdown only.
        autoescape=select_autoescape(enabled_extensions=("html", "htm", "xml", "svg", "html.j2"),
                                     disabled_extensions=("md", "md.j2"),
                                     default_for_string=True, default=True),
        undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        bytecode_cache=SignedBytecode())


def load_project_results(project: Project, name: str = RESULTS_NAME) -> Results:
    """One results file the project declares (the release sample's by default)."""
    path = project.outputs_dir / name
    with reading(path):
        return read_results(path, name, missing="missing: run `readout evaluate` (or `readout build`) first"
                            if name == RESULTS_NAME else "missing: run `readout evaluate --queries all` to write it")


def render_outputs(project: Project, report: CheckReport, *, draft: bool = False) -> list[Rendered]:
    """Render every configured output in memory (nothing is written): the package's page
    (generator.render.shell), or a page of the project's own, marked as not verified."""
    specs = project.require_outputs()
    results = load_project_results(project)
    results_hashes = {Path(name).name: digest for name, digest in report.inputs_sha256.items()}
    results_hashes[RESULTS_NAME] = results.sha256
    own_dir = own_templates_dir(project)
    package_dir = default_templates_dir()
    labels_path = (own_dir or package_dir) / LABELS_NAME
    label_texts = load_labels(labels_path, display_path(labels_path))
    hashes = template_hashes(package_dir)
    if own_dir is not None:
        own_hashes = template_hashes(own_dir)
        _refuse_hidden_characters(own_dir, own_hashes)
        hashes.update({f"project/{name}": digest for name, digest in own_hashes.items()})
    _refuse_hidden_characters(package_dir, template_hashes(package_dir))
    theme = load_theme(own_dir)
    shared = _Shared(results, results_hashes, labels_path, label_texts, hashes, sha256_file(project.config_path),
                     draft and not report.ok, _queries_by_file(project, report, results),
                     _table_files(project, specs.values(), results, results_hashes, report))
    shell = _environment(package_dir, OWN_DIR)
    rendered = []
    for spec in specs.values():
        source = page_source(project, spec)
        door = HtmlDoor() if spec.is_html else MarkdownDoor()
        labels = Labels(label_texts, door, display_path(labels_path),
                        {f"section:{s.id}": s.title for s in spec.sections})
        stamp = {
            "output": spec.file, "draft": shared.flagged,
            "ledger_sha256": report.ledger_sha256,
            "design_freeze_sha256": report.design_freeze_sha256,
            "results_sha256": dict(sorted(results_hashes.items())),
            "config_sha256": shared.config_hash,
            "templates_sha256": hashes,
        }
        context = _context(project, report, spec, shared, door, labels, draft, stamp, theme)
        if own_dir is not None:
            _fill_slots(_environment(own_dir), project, spec, context, labels)
        _contents(context, labels)
        if source.unverified:
            stamp["unverified"] = [display_path(path) for path in source.unverified]
            context["stamp"] = stamp_text(stamp)
            if source.own_stylesheet is not None:
                with reading(source.own_stylesheet):
                    context["team_css"] = source.own_stylesheet.read_text(encoding="utf-8")
        env = _environment(own_dir, package_dir, OWN_DIR) if source.own_template is not None else shell
        marked = _render_template(env, source.own_template.parent if source.own_template else package_dir,
                                  spec.template, context)
        if not spec.is_html:   # the page's macros leave runs of blank lines; Markdown reads one as many
            marked = _BLANK_LINES.sub("\n\n", marked)
        output = Rendered(spec.name, project.outputs_dir / spec.file, marked, stamp)
        if source.unverified:
            notice = door.join([labels.unverified_page, door.join([door.code(display_path(path))
                                                                    for path in source.unverified], ", ")])
            output.marked = mark_unverified(marked, str(notice), spec.is_html)
            output.unverified = unverified_lines(output.path, source)
        rendered.append(output)
    return rendered


def _fill_slots(env: Environment, project: Project, spec: OutputSpec, context: dict[str, Any], labels: Labels) -> None:
    """The team's content slots (generator.render.shell), each checked, placed by the page."""
    module = slot_module(env, project, spec, {"L": labels, "title": context["title"]})
    if module is None:
        return
    shown = display_path((own_templates_dir(project) or project.root) / (HTML_SLOTS if spec.is_html else MARKDOWN_SLOTS))
    for section in [context["first"], *context["sections"], context["last"]]:
        if section is not None:
            section.slot = Markup(slot(module, "section", spec.is_html, shown,
                                       {"id": section.id, "title": section.title}))
    context["end_slot"] = Markup(slot(module, "end", spec.is_html, shown))


def _contents(context: dict[str, Any], labels: Labels) -> None:
    """The sections between the first and the last that hold anything (claims, blocks, a slot),
    and the page's contents: those, then what the shell adds after them, in the page's order."""
    sections = [s for s in context["sections"] if s.claims or s.set_blocks or s.other_blocks or s.slot]
    context["sections"] = sections
    contents = [{"anchor": s.anchor, "title": s.title} for s in sections]
    contents += [{"anchor": "section-decisions", "title": labels.decisions_computed}] if context["decisions"] else []
    contents += [{"anchor": "section-withdrawn", "title": labels.withdrawn}] if context["withdrawn"] else []
    contents += [{"anchor": "section-amendments", "title": labels.post_hoc_changes}] if context["amendments"] else []
    contents.append({"anchor": context["last"].anchor, "title": context["last"].title})
    context["contents"] = contents


def _render_template(env: Environment, templates_dir: Path, template: str, context: dict[str, Any]) -> str:
    try:
        marked = env.get_template(template).render(**context)
    except InputError:
        raise
    except Exception as error:  # jinja2 errors: name the template and line, never a traceback
        raise InputError(f"cannot render: {error}", path=display_path(templates_dir / template),
                         line=getattr(error, "lineno", None)) from None
    return marked if marked.endswith("\n") else marked + "\n"


def _queries_by_file(project: Project, report: CheckReport, results: Results) -> dict[str, Any]:
    """How many queries each cited results file was measured on, for the source notes."""
    counts = {RESULTS_NAME: results.model.queries}
    for name in report.inputs_sha256:
        if name not in counts and (project.outputs_dir / name).is_file():
            with reading(project.outputs_dir / name):
                counts[name] = read_results(project.outputs_dir / name, name).model.queries
    return counts


def _table_files(project: Project, specs: Iterable[OutputSpec], results: Results,
                 results_hashes: dict[str, str], report: CheckReport) -> dict[str, Results]:
    """The results files the tables and charts read, each read once: each output's `table.file`
    and every file a decision read (its tables follow the decision); a file other than the
    release sample's is stamped into the outputs like any other input."""
    files = {RESULTS_NAME: results}
    tables = [(spec.table or TableSpec()).file for spec in specs]
    # A decision's file is there whenever the decision was computed (a draft may lack one).
    decided = [row.trigger.file for row in report.decisions if (project.outputs_dir / row.trigger.file).is_file()]
    for name in tables + decided:
        if name not in files:
            files[name] = load_project_results(project, name)
            results_hashes.setdefault(name, files[name].sha256)
    return files


def _refuse_hidden_characters(templates_dir: Path, names: Iterable[str]) -> None:
    """A template holding private-use characters could forge the orphan scan's marks."""
    for name in names:
        path = templates_dir / name
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            hidden = _PRIVATE_USE.search(line)
            if hidden:
                raise InputError(f"holds the private-use character U+{ord(hidden.group(0)):04X}; templates may not "
                                 "use them (the render marks its own output with them)", path=display_path(path),
                                 line=number)


_BLANK_LINES = re.compile(r"\n{3,}")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")


def find_orphans(rendered: list[Rendered], memo: Memo | None = None) -> list[Orphan]:
    """Every orphan text of the outputs; the scan of a text already scanned is remembered
    (generator.storage.memo: an HTML5 parse of the readout is the slowest step of `render --check`)."""
    memo = memo if memo is not None else default_memo()
    found: list[Orphan] = []
    for output in rendered:
        name = display_path(output.path)
        inputs = {"name": name, "sha256": sha256_text(output.marked)}
        scanned = memo.remembered("orphan scan", inputs,
                                  lambda text=output.marked, name=name: [asdict(orphan) for orphan in scan(text, name)])
        found.extend(Orphan(**orphan) for orphan in scanned)
    return found


@dataclass
class RenderOutcome:
    """What `render_project` did. `refused` holds the check's failures when it would not render;
    `orphans` the unaccounted text when nothing was written; `stale` the outputs that differ
    (with `check_only`); `written` the files written."""

    report: CheckReport
    refused: list[str] = field(default_factory=list)
    # Files under outputs/ the tool did not write (a finding of `render --check`; `render` warns).
    foreign: list[str] = field(default_factory=list)
    # Outputs drawn from a page of the project's own: written, marked, never verified.
    unverified: list[str] = field(default_factory=list)
    check_only: bool = False
    drafted: list[str] = field(default_factory=list)
    orphans: list[Orphan] = field(default_factory=list)
    rendered: list[Rendered] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    written: list[tuple[Path, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        verified = not (self.check_only and (self.foreign or self.unverified))
        return not self.refused and not self.orphans and not self.stale and verified


def _written_here(project: Project, rendered: list[Rendered]) -> set[str]:
    """Every file under outputs/ the tool writes for this project, relative to outputs/: each
    report, each results file it knows of (declared, cited by a claim or a decision, or the
    regression baseline kept there) and every file each one's manifest lists beside it."""
    written = {output.path.name for output in rendered}
    names = set(project.results_files) | {Path(name).name for name in project_results_cited(project, rendered)}
    baseline = project.resolve(project.regression_baseline) if project.regression_baseline else None
    candidates = [project.outputs_dir / name for name in sorted(names)]
    if baseline is not None:
        candidates.append(baseline)
    outputs = project.outputs_dir.resolve()
    for path in candidates:
        try:
            relative = path.resolve().parent.relative_to(outputs)
        except ValueError:
            continue
        if not path.is_file() or path.is_symlink():
            continue
        with reading(path):
            results = read_results(path, display_path(path))
        written.add(str(relative / path.name))
        written.update(str(relative / name) for name in manifest_files(results))
    return written


def project_results_cited(project: Project, rendered: list[Rendered]) -> set[str]:
    """The results files the outputs were stamped with (cited by a claim, read by a table)."""
    return {name for output in rendered for name in output.stamp.get("results_sha256", {})}


def render_project(project: Project, *, draft: bool = False, check_only: bool = False,
                   report: CheckReport | None = None) -> RenderOutcome:
    """Check, render in memory, scan for orphans, then write (or compare with `check_only`)."""
    with parsed_once():   # the check, the pages and the files written read each results file
        return _render_project(project, draft=draft, check_only=check_only, report=report)


def _render_project(project: Project, *, draft: bool, check_only: bool, report: CheckReport | None) -> RenderOutcome:
    # The order in git is the gate's (`readout check`) to verify: a report cannot stamp the commit
    # it will be committed in, and must read the same in a shallow and a full clone.
    report = report or check_project(project, git_history=False)
    outcome = RenderOutcome(report=report, check_only=check_only)
    if not report.ok:
        if not draft:
            outcome.refused = failure_lines(report)
            return outcome
        outcome.drafted = failure_lines(report)
    with only_rederived(report.rederived):   # a report shows only what the check re-derived
        outcome.rendered = render_outputs(project, report, draft=draft)
    # What the render read for the first time (its table words, looked up in every lexicon) is
    # remembered as the check's reading is, or every render would compile the lexicons again.
    save_books()
    outcome.orphans = find_orphans(outcome.rendered)
    if outcome.orphans:
        return outcome
    outcome.unverified = [line for output in outcome.rendered for line in output.unverified]
    outcome.foreign = unwritten_files(project.outputs_dir, _written_here(project, outcome.rendered))
    if check_only:
        outcome.stale = stale_outputs(outcome.rendered)
        return outcome
    for output in outcome.rendered:
        if output.path.is_dir() or output.path.is_symlink():
            raise InputError("is a directory or a link; a report is written as a plain file here",
                             path=display_path(output.path))
    # The outputs are one set: each is written in full before any replaces its predecessor.
    encoded = [(output.path, output.text.encode("utf-8")) for output in outcome.rendered]
    write_set(encoded)
    outcome.written.extend((path, len(data)) for path, data in encoded)
    return outcome
