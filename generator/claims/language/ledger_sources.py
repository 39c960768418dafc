"""A claim's sources as the ledger writes them, each read by its kind: a design quote, measured
values with their paths and an optional predicate, a decision's computed state; and the value
names they declare, each declared once and every placeholder and predicate name among them.
"""

from __future__ import annotations

from functools import lru_cache

from generator.claims.language.ledger import (DECISION_FIELDS, DECISION_STATES, DESIGN_FIELDS, MAX_ID_CHARS,
                                              MAX_PATH_CHARS, MAX_REASON_CHARS, MAX_VALUES, MEASURED_FIELDS,
                                              SOURCE_KINDS, DecisionSource, DesignSource, MeasuredSource,
                                              Placeholder, Source)
from generator.claims.language.ledger_fields import _choices, _mapping, _text, _valid_document_name
from generator.claims.language.predicates import CONSTANT_NAMES, FUNCTIONS, PredicateSyntaxError, compile_predicate
from generator.core.results import RESULTS_NAME, PathSyntaxError, Step, clip, excerpt, parse_path
from generator.storage.errors import InputError
from generator.storage.safe_yaml import Node


@lru_cache(maxsize=8192)
def _parse_path_cached(text: str) -> tuple[Step, ...]:
    return parse_path(text)


def _design_source(node: Node, path: str, line: int, claim_id: str) -> DesignSource:
    fields = _mapping(node, path, "a design source", DESIGN_FIELDS, line=line, field_name="design")
    for required in DESIGN_FIELDS:
        if required not in fields:
            raise InputError(f"claim {claim_id}: a design source needs {required}", path=path, line=line,
                             field="design")
    document = _text(fields["document"], path, "document", claim_id=claim_id)
    quote = _text(fields["quote"], path, "quote", claim_id=claim_id)
    if not _valid_document_name(document):
        raise InputError(f"claim {claim_id}: document {excerpt(document)} must be a relative name inside design/ "
                         "(no '..', no absolute path, no hidden name)", path=path, line=fields["document"][0],
                         field="document")
    return DesignSource(document=document, quote=quote, line=line)


def _decision_source(node: Node, path: str, line: int, claim_id: str) -> DecisionSource:
    fields = _mapping(node, path, "a decision source", DECISION_FIELDS, line=line, field_name="decision")
    for required in DECISION_FIELDS:
        if required not in fields:
            raise InputError(f"claim {claim_id}: a decision source needs {required} (the decision id, and "
                             f"{' | '.join(DECISION_STATES)})", path=path, line=line, field="decision")
    trigger = _text(fields["trigger"], path, "trigger", claim_id=claim_id)
    state = _text(fields["state"], path, "state", claim_id=claim_id)
    if state not in DECISION_STATES:
        raise InputError(f"claim {claim_id}: state {excerpt(state, 40)}; choose one of {_choices(DECISION_STATES)}",
                         path=path, line=fields["state"][0], field="state")
    return DecisionSource(trigger=trigger, state=state, line=line)


def _measured_source(node: Node, path: str, line: int, claim_id: str) -> MeasuredSource:
    fields = _mapping(node, path, "a measured source", MEASURED_FIELDS, line=line, field_name="measured")
    file_name = RESULTS_NAME
    if "file" in fields:
        file_name = _text(fields["file"], path, "file", claim_id=claim_id)
        if not _valid_document_name(file_name):
            raise InputError(f"claim {claim_id}: file {excerpt(file_name)} must be a relative name inside outputs/",
                             path=path, line=fields["file"][0], field="file")
    if "values" not in fields:
        raise InputError(f"claim {claim_id}: a measured source needs values (name: path)", path=path, line=line,
                         field="measured")
    values_line, values_node = fields["values"]
    if not isinstance(values_node.value, dict) or not values_node.value:
        raise InputError(f"claim {claim_id}: values must be a non-empty mapping of name: path", path=path,
                         line=values_line, field="values")
    values: dict[str, str] = {}
    steps: dict[str, tuple[Step, ...]] = {}
    value_lines: dict[str, int] = {}
    for name, (name_line, path_node) in values_node.value.items():
        if len(name) > MAX_ID_CHARS or not name.isidentifier() or name in CONSTANT_NAMES or name in FUNCTIONS:
            raise InputError(f"claim {claim_id}: value name {excerpt(name)} must be a plain identifier "
                             f"of at most {MAX_ID_CHARS} characters "
                             f"(not {', '.join(sorted(set(CONSTANT_NAMES) | set(FUNCTIONS)))})",
                             path=path, line=name_line, field="values")
        path_text = _text((name_line, path_node), path, f"values.{name}", claim_id=claim_id)
        if len(path_text) > MAX_PATH_CHARS:
            raise InputError(f"claim {claim_id}: path longer than {MAX_PATH_CHARS} characters", path=path,
                             line=name_line, field=f"values.{name}")
        try:
            steps[name] = _parse_path_cached(path_text)
        except PathSyntaxError as error:
            raise InputError(f"claim {claim_id}: {clip(str(error), MAX_REASON_CHARS)}", path=path, line=name_line,
                             field=f"values.{name}") from None
        values[name] = path_text
        value_lines[name] = name_line
    predicate_text = None
    compiled = None
    if "predicate" in fields:
        predicate_text = _text(fields["predicate"], path, "predicate", claim_id=claim_id)
        try:
            compiled = compile_predicate(predicate_text)
        except PredicateSyntaxError as error:
            raise InputError(f"claim {claim_id}: {clip(str(error), MAX_REASON_CHARS)}", path=path,
                             line=fields["predicate"][0], field="predicate") from None
    return MeasuredSource(file=file_name, values=values, steps=steps, predicate=predicate_text, compiled=compiled,
                          line=line, value_lines=value_lines)


_SOURCE_PARSERS = {"design": _design_source, "decision": _decision_source, "measured": _measured_source}


def _sources(fields: dict[str, tuple[int, Node]], path: str, claim_id: str) -> list[Source]:
    if "sources" not in fields or fields["sources"][1].value is None:
        return []
    sources_line, sources_node = fields["sources"]
    if not isinstance(sources_node.value, list):
        raise InputError(f"claim {claim_id}: sources must be a list", path=path, line=sources_line,
                         field="sources")
    sources: list[Source] = []
    for source_node in sources_node.value:
        entry = _mapping(source_node, path, "a source", SOURCE_KINDS, field_name="sources")
        if len(entry) != 1:
            raise InputError(f"claim {claim_id}: each source has exactly one of design, measured or decision",
                             path=path, line=source_node.line, field="sources")
        (source_kind, (source_line, body)), = entry.items()
        sources.append(_SOURCE_PARSERS[source_kind](body, path, source_line, claim_id))
    return sources


def _check_value_names(sources: list[Source], placeholders: tuple[Placeholder, ...], path: str, claim_id: str,
                       claim_line: int, text_line: int) -> None:
    """Every value name declared once; every placeholder and predicate name declared."""
    declared: dict[str, int] = {}
    if sum(len(source.values) for source in sources if isinstance(source, MeasuredSource)) > MAX_VALUES:
        raise InputError(f"claim {claim_id}: more than {MAX_VALUES} values", path=path, line=claim_line,
                         field="values")
    for source in sources:
        if isinstance(source, MeasuredSource):
            for name, name_line in source.value_lines.items():
                if name in declared:
                    raise InputError(f"claim {claim_id}: value name {excerpt(name)} declared twice "
                                     f"(first at line {declared[name]})", path=path, line=name_line,
                                     field="values")
                declared[name] = name_line
    for placeholder in placeholders:
        if placeholder.name not in declared:
            raise InputError(f"claim {claim_id}: placeholder {{{clip(placeholder.name)}}} has no value; declare it "
                             "under a measured source's values", path=path, line=text_line, field="text")
    for source in sources:
        if isinstance(source, MeasuredSource) and source.compiled is not None:
            unknown = sorted(source.compiled.names - set(declared))
            if unknown:
                raise InputError(f"claim {claim_id}: predicate uses undeclared name(s) {clip(', '.join(unknown))}; "
                                 f"declared: {clip(', '.join(sorted(declared))) or '(none)'}", path=path,
                                 line=source.line, field="predicate")
