"""Identity: which model ran, and what a count counts. A model a sentence names is the manifest's
model of the row whose values it shows (a fine-tuned MiniLM's loss is never the design's
bge-reranker-v2-m3, which never ran), and the noun after a placed count is the unit the results
schema declares for it (400 optimiser steps are not "400 queries").

Limits: a model is recognised by the names the results files and the design documents hold (the
full `org/name`, the name after the slash, the family word of that name such as "MiniLM" or
"bge"); a model named by a nickname no file holds is not recognised.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from generator.core.text import lexicon
from generator.claims.tracing.naming import rows_of
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import BLANK, ClaimView
from generator.core.results import ResultsModel, path_text

# `org/name` the way model hubs spell a model.
_MODEL_ID = re.compile(r"(?<![\w./-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*[A-Za-z0-9])(?![\w/-])")
# Words of a model's name that say nothing of which model it is.
_GENERIC = frozenset({"all", "the", "cross", "encoder", "reranker", "rerank", "base", "large", "small", "mini",
                      "en", "v1", "v2", "v3", "models", "model", "sentence", "transformers", "titles", "ms", "marco",
                      "scifact", "multilingual", "uncased", "cased", "int8", "fp32", "onnx"})
# The nouns a unit may be said in besides its own: a candidate is a document.
_SAID_AS = {"candidates": ("candidates", "documents")}
_NOUNS = {name.split("_", 1)[1]: name for name in lexicon.classes(lexicon.ENGLISH) if name.startswith("noun_")}


def _aliases(model_id: str) -> set[str]:
    """How a sentence may name a model: `BAAI/bge-reranker-v2-m3`, `bge-reranker-v2-m3`, `bge`."""
    model_id = model_id.lower()
    base = model_id.rsplit("/", 1)[-1]
    family = {word for word in re.split(r"[-_.]", base)
              if len(word) >= 3 and word.isalpha() and word not in _GENERIC}
    return {model_id, base} | family


# Folders of a project and of a dataset: `outputs/results.json` and `data/scifact` are no models.
_NOT_ORGS = frozenset({"outputs", "data", "design", "claims", "docs", "runs", "templates", "generator", "tests",
                       "qrels", "examples", "bench", "scifact", "site-packages", "lib", "usr", "home", "tmp"})


def _ids(text: str) -> set[str]:
    """Every `org/name` of a text that can be a model (not a file with an extension, not a folder
    of a project or a dataset)."""
    found = set()
    for match in _MODEL_ID.finditer(text):
        model_id = match.group(1)
        org, _, name = model_id.partition("/")
        if org.lower() in _NOT_ORGS or re.search(r"\.[A-Za-z]{2,5}$", name) or "/" in name:
            continue
        found.add(model_id)
    return found


def row_models(model: ResultsModel, row: str) -> set[str]:
    """Every model id a row ran: its table entry's model (and the model it was fine-tuned from),
    the model `manifest.rows` asked for, the manifest's loaded model of its role, and, for a fusion
    row, the models of the rows it fuses."""
    found: set[str] = set()
    entry = model.row(row) or {}
    if isinstance(entry.get("model"), str):
        found |= _ids(entry["model"])
    # The manifest's models by role: `dense`, `rerank` (the decided reranker), `rerank:<row>`.
    for key, loaded in model.manifest_block("models").items():
        if isinstance(loaded, dict) and (key in (row, f"rerank:{row}") or (key == "rerank" and row == model.roles.rerank)):
            for name in (loaded.get("name"), loaded.get("requested"),
                         (loaded.get("training") or {}).get("base_model", {}).get("name")
                         if isinstance(loaded.get("training"), dict) else None):
                if isinstance(name, str):
                    found |= _ids(name)
    for spec in model.manifest.get("rows", []) if isinstance(model.manifest.get("rows"), list) else []:
        if not isinstance(spec, dict) or spec.get("name") != row:
            continue
        if isinstance(spec.get("model"), str):
            found |= _ids(spec["model"]) or {spec["model"]}
        for fused in spec.get("of", []) if isinstance(spec.get("of"), list) else []:
            if isinstance(fused, str) and fused != row:
                found |= row_models(model, fused)
    return found


@lru_cache(maxsize=64)
def _design_models(design_dir: str) -> frozenset[str]:
    """The models the design documents name, as code (`BAAI/bge-reranker-v2-m3`) or in a
    model hub's address."""
    found: set[str] = set()
    for path in sorted(Path(design_dir).glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"huggingface\.co/([\w.-]+/[\w.-]+)", text)
        found |= set().union(*(_ids(span) for span in spans)) if spans else set()
    return frozenset(found)


def _known_models(view: ClaimView) -> dict[str, set[str]]:
    """{alias: model ids it names}, over every model the cited files ran or the design names."""
    files = _cited_files(view)
    return view.context.shared(("known models", tuple(results.name for results in files)),
                               lambda: aliases_of_files(view.context.design_dir, files))


def _ran_by(results, row: str, context) -> set[str]:
    return context.shared(("row models", results.name, row),
                          lambda: {model_id.lower() for model_id in row_models(results.model, row)})


def aliases_of_files(design_dir, files: list) -> dict[str, set[str]]:
    """{alias: model ids it names} of every model `files` ran and the design names."""
    ids: set[str] = set(_design_models(str(design_dir)))
    for results in files:
        for row in results.model.row_names:
            ids |= row_models(results.model, row)
    aliases: dict[str, set[str]] = {}
    for model_id in ids:
        for alias in _aliases(model_id):
            aliases.setdefault(alias, set()).add(model_id.lower())
    return aliases


def _cited_files(view: ClaimView) -> list:
    names = {source.file for source in view.claim.measured_sources}
    return [results for name in sorted(names) if (results := view.results_of(name)) is not None]


@lru_cache(maxsize=64)
def _alias_pattern(aliases: frozenset[str]) -> re.Pattern | None:
    """Every alias as one alternation, longest first, so that the longest name is the one read."""
    if not aliases:
        return None
    return re.compile(r"(?<![\w+./-])(?:" + "|".join(re.escape(alias) for alias in sorted(aliases, key=len, reverse=True))
                      + r")(?![\w/]|-\w)")


def _mentions(text: str, aliases: dict[str, set[str]]) -> list[tuple[int, str, set[str]]]:
    """Each model the text names: (where, the words, the ids they could name), longest names first."""
    found: list[tuple[int, str, set[str]]] = []
    pattern = _alias_pattern(frozenset(aliases))
    for match in pattern.finditer(text.lower()) if pattern is not None else ():
        found.append((match.start(), text[match.start():match.end()], aliases[match.group(0)]))
    for match in _MODEL_ID.finditer(text):   # an `org/name` no file holds is a model too
        if match.group(1) in _ids(match.group(1)) and match.group(1).lower() not in aliases:
            found.append((match.start(), match.group(1), {match.group(1).lower()}))
    return sorted(found)


_NOT_RAN = lexicon.pattern("not_measured")
_CLAUSE = re.compile(r"[.;:!?,\u2014()]|\s-\s|\b(?:and|but|so|while|whereas|yet)\b")


def _clause_at(text: str, start: int) -> str:
    """The clause of `text` that holds offset `start`."""
    low = max((match.end() for match in _CLAUSE.finditer(text, 0, start)), default=0)
    high = next((match.start() for match in _CLAUSE.finditer(text, start)), len(text))
    return text[low:high]


@rule("model-named", "A model named is the model that ran")
def model_named(view: ClaimView) -> list[str]:
    """A model the sentence names (outside a quote of a design document) is the manifest's model of
    a row whose values the sentence shows (its table entry's model, the model it was
    fine-tuned from, the models a fusion row fuses). A sentence that shows no row's values names a
    model a measured row ran or its design quote names. A model that did not run is named only in a
    clause that says so ("cannot be loaded", "was not measured")."""
    text = view.own_words
    mentions = _mentions(text, _known_models(view))
    if not mentions:
        return []
    rows = set().union(*(rows_of(value) for value in view.shown))
    files = _cited_files(view)
    quoted = " ".join(view.quotes).lower()
    ran: dict[str, set[str]] = {}
    for results in files:
        for row in rows or set(results.model.measured_rows):
            if results.model.row(row) is not None:
                ran.setdefault(row, set()).update(_ran_by(results, row, view.context))
    found = []
    for start, words, ids in mentions:
        if any(ids & models for models in ran.values()):
            continue
        if _NOT_RAN.search(_clause_at(text, start)):
            continue    # "bge-reranker-v2-m3 cannot be loaded offline": said not to have run
        if not rows and words.lower() in quoted:
            continue    # the design's model, named as its quote names it
        if ran:
            ran_text = "; ".join(f"{row}: {', '.join(sorted(models)) or 'no model'}" for row, models in sorted(ran.items()))
            whose = "its values are of rows whose models are" if rows else "the measured rows of its files ran"
            found.append(f"the sentence names the model {words!r}, but {whose} {ran_text}: a model is named only for "
                         "the row it ran in, or in a clause that says it did not run")
        else:
            found.append(f"the sentence names the model {words!r}, but none of its sources ran it or quotes it: cite "
                         "a measured value of its row, or quote the design sentence that names it")
    return found


def _noun_after(text: str, start: int) -> str | None:
    """The unit noun right after `start` ("400 queries", "225 test queries"), or None."""
    position = start + len(text[start:]) - len(text[start:].lstrip())
    for unit, name in _NOUNS.items():
        if lexicon.pattern(name).match(text, position):
            return unit
    return None


@rule("count-noun", "A count is named by the unit it counts")
def count_noun(view: ClaimView) -> list[str]:
    """The noun right after a placed count (queries, documents, judgements, pairs, steps, tokens,
    candidates, layers, threads) is the unit the results schema declares for the value: 400
    optimiser steps are not "400 queries", and a value whose unit is not declared is named by no
    count noun."""
    filled = [placeholder.name for placeholder in view.claim.placeholders if placeholder.name in view.formatted]
    found = []
    for index, match in enumerate(re.finditer(re.escape(BLANK), view.authored)):
        if index >= len(filled):
            break
        value = view.declared.get(filled[index])
        if value is None or not isinstance(view.values.get(value.name), (int, float)) \
                or isinstance(view.values.get(value.name), bool):
            continue
        noun = _noun_after(view.authored, match.end())
        if noun is None:
            continue
        unit = value.location.unit if value.location is not None else ""
        if noun in _SAID_AS.get(unit, (unit,)):
            continue
        declared = f"counts {unit}" if unit else "has no unit declared in the results schema"
        found.append(f"{{{value.name}}} ({path_text(value.steps)}) {declared}, but the sentence "
                     f"counts it in {noun}: a count is named by what it counts")
    return found

