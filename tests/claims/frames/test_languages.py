"""Every language's phrasing file writes every sentence of the English one, with the same figures.

A phrasing file is data (generator/claims/frames/phrasings/LANG.yaml): a translation that drops a
figure, a case or a fact's words would make the package write a sentence that says less, or
nothing, in that language. These tests build readings the way generator.claims.frames.readings
does (each case with the figures and facts it computes, over every combination of its facts) and
render each in every language and phrasing; a snapshot per language keeps each template as it was
reviewed, so a change to a sentence is a change a test shows.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from generator.claims.frames import phrasing
from generator.claims.frames.figures import Figure, Reading
from generator.claims.frames.spec import Frame

TRANSLATIONS = ("de", "es", "fr", "nl")
ENGLISH = phrasing.ENGLISH
SLOT = re.compile(r"\{(\w+)\}")

# The facts each threshold prefix is read with (readings.Reader.threshold_figures).
FIXED = ("before", "after", "unfrozen")


def _threshold(prefix: str, fixed: str, *, ms: bool = False, value: float = 0.01) -> dict[str, Figure]:
    figures = {prefix: Figure("ms", value) if ms else Figure("number", value),
               prefix + "_name": Figure("text", f"{prefix}.threshold")}
    if fixed != "unfrozen":
        figures[prefix + "_freeze"] = Figure("count", 3, noun="")
    return figures


def _scope(queries: int = 20) -> dict[str, Figure]:
    return {"n": Figure("count", queries, noun="query"), "n_plain": Figure("count", queries)}


def _undecidable() -> dict[str, Figure]:
    return {"n": Figure("count", 1, noun="query"), "minimum": Figure("count", 2, noun="query")}


def _shape() -> dict[str, Figure]:
    return {"layers": Figure("count", 24, noun="layer"), "timed": Figure("count", 2, noun="")}


def _rows() -> dict[str, Figure]:
    return {"row": Figure("text", "hybrid+rerank"), "against": Figure("text", "hybrid"),
            "metric": Figure("text", "nDCG@5")}


SCOPES = ("sample", "all", "set")
DIRECTIONS = ("higher", "lower", "same")


def _record(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    return {**_scope(), "file": Figure("text", "results.json"),
            "records": Figure("records", [("same_50_rows_after_rerank", True), ("queries", 1234),
                                          ("weights_sha256", "9f2c"), ("alpha", 0.05)])}


def _value(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), "metric": Figure("text", "nDCG@5")}
    if case == "means":
        figures["values"] = Figure("pairs", [("hybrid", 0.6125), ("dense", 0.5871), ("sparse", 0.4433)])
    else:
        figures.update(row=Figure("text", "hybrid"), value=Figure("score", 0.6125))
    if case == "query":
        figures["query"] = Figure("text", "q13")
    return figures


def _comparison(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), **_rows()}
    if case == "query":
        figures.update(query=Figure("text", "q13"), value=Figure("score", 0.7), other=Figure("score", 0.5))
    elif case == "share":
        figures.update(wins=Figure("count", 14), ties=Figure("count", 4), losses=Figure("count", 2),
                       total=Figure("count", 20, noun="query"), total_plain=Figure("count", 20))
    elif case == "undecidable":
        figures.update(_undecidable(), change=Figure("change", 0.04))
    else:
        figures.update(change=Figure("change", 0.0423, (0.0, 0.01, -0.01)),
                       interval=Figure("interval", (0.0161, 0.0712), (0.0, 0.01, -0.01)),
                       p=Figure("p", 0.0032))
        if facts["size"] != "unstated":
            figures.update(_threshold("effect", facts["effect_fixed"]))
        if facts["correction"] == "holm":
            figures["family"] = Figure("count", 3, noun="pair")
        if facts["relative"] == "shown":
            figures["relative"] = Figure("relative", 0.0741)
    return figures


def _margin_test(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), **_rows(), **_threshold("margin", facts["margin_fixed"])}
    if case == "undecidable":
        return {**figures, **_undecidable()}
    figures.update(change=Figure("change", -0.0012, (0.0, 0.01, -0.01)), confidence=Figure("percent", 0.9),
                   p=Figure("p", 0.0171))
    if case == "equivalence":
        figures["interval"] = Figure("interval", (-0.0071, 0.0047), (0.01, -0.01, 0.0))
    else:
        figures["bound"] = Figure("change", -0.0071, (-0.01, 0.0))
    return figures


def _budget(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), **_threshold("limit", facts["limit_fixed"], ms=True, value=150.0),
               "row": Figure("text", "hybrid+rerank"), "p95": Figure("ms", 182.4, (150.0,))}
    return {**figures, **_shape()} if case == "shape" else figures


def _power(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), **_rows(), "power": Figure("number", 0.8), "alpha": Figure("number", 0.05)}
    if case == "undecidable":
        return {**figures, **_undecidable()}
    if case == "no_mde":
        return {**figures, "why": Figure("text", "the differences do not vary")}
    figures["mde"] = Figure("score", 0.0377)
    if facts["needed"] != "unstated":
        figures.update(_threshold("effect", facts["effect_fixed"]))
    if facts["needed"] in ("enough", "more"):
        figures["needed"] = Figure("count", 57, noun="query")
    return figures


def _since_baseline(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_threshold("margin", facts["margin_fixed"]), "row": Figure("text", "hybrid"),
               "metric": Figure("text", "nDCG@5"), "n": Figure("count", 20, noun="query"),
               "change": Figure("change", -0.0188, (0.0, -0.01)),
               "interval": Figure("interval", (-0.0301, -0.0113), (0.0, -0.01))}
    return {**figures, **_undecidable()} if case == "undecidable" else figures


def _decision(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {"decision": Figure("text", "D5"), "outcome": Figure("text", "keep the reranker"),
               "rule": Figure("text", "delta >= 0.01")}
    if facts["fixed"] != "unfrozen":
        figures["freeze"] = Figure("count", 2, noun="")
    if case == "needs_queries":
        figures.update(n=Figure("count", 20, noun="query"), needed=Figure("count", 61, noun="query"))
    return figures


def _ceiling(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    return {**_scope(), "row": Figure("text", "hybrid"), "metric": Figure("text", "nDCG@5"),
            "ceiling": Figure("score", 0.8312), "value": Figure("score", 0.6125), "headroom": Figure("score", 0.2187)}


def _diagnosis(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), "row": Figure("text", "hybrid")}
    if case == "counted":
        return {**figures, "missed": Figure("count", 5), "ordering": Figure("count", 9), "neither": Figure("count", 6),
                "total": Figure("count", 20, noun="query")}
    # a query's documents: listed, or none (the book's word for an empty list)
    documents = ["4983", "10608"] if facts["documents"] == "listed" else []
    return {**figures, "query": Figure("text", "q13"), "missed": Figure("documents", documents),
            "below": Figure("documents", documents[:1])}


def _cost(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), "row": Figure("text", "hybrid+bge"), "model": Figure("text", "BAAI/bge-reranker-v2-m3"),
               "p50": Figure("ms", 96.2), "p95": Figure("ms", 131.7)}
    return {**figures, **_shape()} if case == "shape" else figures


def _frontier(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    figures = {**_scope(), **_threshold("limit", facts["limit_fixed"], ms=True, value=150.0),
               "fitting": Figure("count", 7), "total": Figure("count", 48)}
    if case == "cheapest":
        figures.update(_shape(), model=Figure("text", "ms-marco-MiniLM-L-6-v2"), depth=Figure("count", 50, noun=""),
                       max_length=Figure("count", 256, noun="token"), precision=Figure("text", "int8"),
                       p95=Figure("ms", 41.3, (150.0,)))
    return figures


def _quote(case: str, facts: dict[str, str]) -> dict[str, Figure]:
    return {"document": Figure("text", "requirements.md"),
            "quote": Figure("text", "Retrieval on public scientific claims."),
            "heading": Figure("text", "Scope")}


# kind -> (figures of a case under some facts, {case: {fact: its values}}): every case of en.yaml,
# each with every value its facts can take (readings.py computes them).
CASES: dict[str, tuple[Any, dict[str, dict[str, tuple[str, ...]]]]] = {
    "record": (_record, {"record": {"scope": SCOPES}}),
    "value": (_value, {"mean": {"scope": SCOPES}, "means": {"scope": SCOPES}, "query": {"scope": SCOPES}}),
    "comparison": (_comparison, {
        "mean": {"scope": SCOPES, "direction": DIRECTIONS, "significance": ("distinguished", "not_distinguished"),
                 "correction": ("none", "holm"), "size": ("unstated", "cleared", "not_cleared"),
                 "relative": ("shown", "hidden"), "effect_fixed": FIXED},
        "share": {"scope": SCOPES, "quantifier": ("all", "most", "some", "none")},
        "query": {"scope": SCOPES, "direction": DIRECTIONS},
        "undecidable": {"scope": SCOPES, "direction": DIRECTIONS}}),
    "equivalence": (_margin_test, {
        "equivalence": {"scope": SCOPES, "margin_fixed": FIXED, "verdict": ("equivalent", "not_shown")},
        "undecidable": {"scope": SCOPES, "margin_fixed": FIXED}}),
    "noninferiority": (_margin_test, {
        "noninferiority": {"scope": SCOPES, "margin_fixed": FIXED,
                           "verdict": ("noninferior", "not_shown", "inferior")},
        "undecidable": {"scope": SCOPES, "margin_fixed": FIXED}}),
    "budget": (_budget, {
        "timed": {"scope": SCOPES, "limit_fixed": FIXED, "fit": ("within", "over")},
        "shape": {"scope": SCOPES, "limit_fixed": FIXED, "fit": ("within", "over"), "extrapolated": ("yes", "no")}}),
    "power": (_power, {
        "mde": {"scope": SCOPES, "needed": ("unstated", "enough", "more", "uncountable"), "effect_fixed": FIXED},
        "no_mde": {"scope": SCOPES},
        "undecidable": {"scope": SCOPES}}),
    "since_baseline": (_since_baseline, {
        case: {"scope": ("set",), "margin_fixed": FIXED, "direction": DIRECTIONS}
        for case in ("regression", "noninferior", "inconclusive", "undecidable")}),
    "decision": (_decision, {case: {"fixed": FIXED} for case in ("fires", "does_not_fire", "undecided",
                                                                   "needs_queries")}),
    "ceiling": (_ceiling, {"ceiling": {"scope": SCOPES}}),
    "diagnosis": (_diagnosis, {
        "counted": {"scope": SCOPES},
        **{case: {"scope": SCOPES, "documents": ("listed", "empty")}
           for case in ("query_none", "query_ordering", "query_order", "query_miss")}}),
    "cost": (_cost, {
        "timed": {"scope": SCOPES, "quality": ("measured", "not_measured")},
        "shape": {"scope": SCOPES, "quality": ("not_measured",), "extrapolated": ("yes", "no")}}),
    "frontier": (_frontier, {
        "cheapest": {"scope": SCOPES, "limit_fixed": FIXED, "extrapolated": ("yes", "no")},
        "none_fits": {"scope": SCOPES, "limit_fixed": FIXED}}),
    "quote": (_quote, {"quote": {}}),
}


def reading(kind: str, case: str, facts: dict[str, str], figures: dict[str, Figure] | None = None) -> Reading:
    build = CASES[kind][0]
    return Reading(frame=Frame(kind, ("hybrid+rerank",)), case=case, facts=dict(facts),
                   figures=figures if figures is not None else build(case, facts))


def readings_of(kind: str, case: str) -> list[Reading]:
    domains = CASES[kind][1][case]
    names = sorted(domains)
    return [reading(kind, case, dict(zip(names, values))) for values in itertools.product(*(domains[name]
                                                                                            for name in names))]


def rendered(reading_: Reading, language: str, name: str | None = None) -> str:
    template, shown = phrasing.sentence(reading_, language, name)
    return SLOT.sub(lambda match: shown[match.group(1)], template)


def _english() -> dict[str, Any]:
    return phrasing.phrasebook(ENGLISH)


def _every_case() -> list[tuple[str, str]]:
    return [(kind, case) for kind, entry in _english()["kinds"].items() for case in entry["sentences"]]


# --- (a) the same structure as the English file ------------------------------------------------------

def test_every_language_has_a_phrasing_file():
    assert set(TRANSLATIONS) <= set(phrasing.languages())


def test_every_english_case_has_readings_here():
    """A case the English file gains needs its readings here, or the languages go unchecked for it."""
    missing = [f"{kind}.{case}" for kind, case in _every_case() if case not in CASES.get(kind, (None, {}))[1]]
    assert not missing, f"add the figures and facts of {', '.join(missing)} to CASES"


def _words_tables(book: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tables = {f"words.{name}": table for name, table in book.get("words", {}).items()}
    for kind, entry in book["kinds"].items():
        tables.update({f"{kind}.words.{name}": table for name, table in entry.get("words", {}).items()})
    return tables


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_same_kinds_cases_phrasings_and_words(language):
    english, book = _english(), phrasing.phrasebook(language)
    assert book["language"] == language
    assert set(book) == set(english)
    assert set(book["nouns"]) == set(english["nouns"])
    assert all(isinstance(forms, list) and len(forms) == 2 and all(forms) for forms in book["nouns"].values())
    assert set(book["list"]) == set(english["list"])
    assert isinstance(book["none"], str) and book["none"]
    assert set(book["flag"]) == set(english["flag"]) == {True, False}
    assert set(book["numbers"]) == set(english["numbers"])
    assert set(book["kinds"]) == set(english["kinds"])
    for kind, entry in english["kinds"].items():
        cases = book["kinds"][kind]["sentences"]
        assert set(cases) == set(entry["sentences"]), kind
        for case, templates in entry["sentences"].items():
            assert set(cases[case]) == set(templates), f"{kind}.{case}"
    english_tables, tables = _words_tables(english), _words_tables(book)
    assert set(tables) == set(english_tables)
    for name, table in english_tables.items():
        assert set(tables[name]) == set(table), name
        assert tables[name].get("of") == table.get("of"), name


@pytest.mark.parametrize("language", TRANSLATIONS)
@pytest.mark.parametrize("kind,case", _every_case())
def test_every_sentence_names_the_english_figures(language, kind, case):
    """Under every combination of the case's facts and in every phrasing, the sentence places the
    same figures as the English one, each shown in the output, and no slot is left unexpanded."""
    for name in phrasing.phrasings(kind):
        for each in readings_of(kind, case):
            _, english_shown = phrasing.sentence(each, ENGLISH, name)
            template, shown = phrasing.sentence(each, language, name)
            assert set(shown) == set(english_shown), (kind, case, name, each.facts)
            text = rendered(each, language, name)
            assert "{" not in text and "}" not in text, text
            for figure in english_shown:
                assert shown[figure] in text, (figure, text)
            assert not re.search(r"  | [,.;)]|\( |,,|\.\.|\s$", text), text
            assert text[0] == text[0].upper() or template.startswith("{"), text


@pytest.mark.parametrize("kind,case", _every_case())
def test_french_punctuation_takes_no_break_spaces(kind, case):
    """French sets a no-break space before ":" and ";" and inside « »: an ordinary space there lets
    a line break orphan the mark. Read on the template, so a figure's own characters do not count."""
    for name in phrasing.phrasings(kind):
        for each in readings_of(kind, case):
            template, _ = phrasing.sentence(each, "fr", name)
            assert not re.search(r"(?<![\u00a0\u202f])[:;»]|«(?!\u00a0)", template), template


# --- (b) snapshots: each template as it was reviewed -------------------------------------------------

def _snapshot_readings() -> dict[str, tuple[Reading, str]]:
    def make(kind: str, case: str, phrasing_name: str = "standard", **facts: str) -> tuple[Reading, str]:
        return reading(kind, case, facts), phrasing_name

    return {
        "comparison distinguished, effect cleared": make(
            "comparison", "mean", scope="sample", direction="higher", significance="distinguished",
            correction="none", size="cleared", relative="hidden", effect_fixed="before"),
        "comparison not distinguished": make(
            "comparison", "mean", scope="all", direction="higher", significance="not_distinguished",
            correction="holm", size="unstated", relative="shown"),
        "share, most": make("comparison", "share", scope="sample", quantifier="most"),
        "equivalence not shown": make("equivalence", "equivalence", scope="sample", margin_fixed="before",
                                      verdict="not_shown"),
        "noninferiority": make("noninferiority", "noninferiority", scope="set", margin_fixed="after",
                               verdict="noninferior"),
        "budget over": make("budget", "timed", scope="sample", limit_fixed="before", fit="over"),
        "budget by shape, brief": make("budget", "shape", "brief", scope="sample", limit_fixed="before", fit="within",
                                       extrapolated="yes"),
        "decision does not fire, post hoc": make("decision", "does_not_fire", fixed="after"),
        "power, queries needed": make("power", "mde", scope="sample", needed="more", effect_fixed="before"),
    }


# Each sentence as it was reviewed, per language: a change to a template shows here.
SNAPSHOTS: dict[str, dict[str, str]] = {
    'budget by shape, brief': {
        'en': 'hybrid+rerank, priced by shape, extrapolated from 2 of its 24 layers: 182 ms per query at p95 on the release sample (20 queries), within the 150 ms budget (limit.threshold, fixed before any results); quality not measured.',
        'de': 'hybrid+rerank, nach Bauform bepreist, hochgerechnet aus 2 von 24 Schichten: 182 ms pro Anfrage im p95 auf der Release-Stichprobe (20 Anfragen), innerhalb des Budgets von 150 ms (limit.threshold, vor jedem Ergebnis festgelegt); Qualität nicht gemessen.',
        'es': 'hybrid+rerank, coste según la forma, por extrapolación a partir de 2 de sus 24 capas: 182 ms por consulta en el p95 en la muestra de publicación (20 consultas), dentro del presupuesto de 150 ms (limit.threshold, valor fijado antes de cualquier resultado); calidad no medida.',
        'fr': "hybrid+rerank, chiffrage d'après la forme, par extrapolation à partir de 2 de ses 24 couches\xa0: 182\xa0ms par requête au p95 sur l'échantillon de publication (20 requêtes), dans le budget de 150\xa0ms (limit.threshold, valeur fixée avant tout résultat)\u202f; qualité non mesurée.",
        'nl': 'hybrid+rerank, geprijsd naar vorm, geëxtrapoleerd uit 2 van de 24 lagen: 182 ms per zoekvraag bij p95 op de releasesteekproef (20 zoekvragen), binnen het budget van 150 ms (limit.threshold, vastgelegd vóór enig resultaat); kwaliteit niet gemeten.',
    },
    'budget over': {
        'en': 'On the release sample (20 queries), hybrid+rerank takes 182 ms per query at p95, over the 150 ms budget (limit.threshold, fixed before any results).',
        'de': 'Auf der Release-Stichprobe (20 Anfragen) braucht hybrid+rerank im p95 182 ms pro Anfrage und liegt damit oberhalb des Budgets von 150 ms (limit.threshold, vor jedem Ergebnis festgelegt).',
        'es': 'En la muestra de publicación (20 consultas), hybrid+rerank tarda 182 ms por consulta en el p95, por encima del presupuesto de 150 ms (limit.threshold, valor fijado antes de cualquier resultado).',
        'fr': "Sur l'échantillon de publication (20 requêtes), hybrid+rerank prend 182\xa0ms par requête au p95, au-delà du budget de 150\xa0ms (limit.threshold, valeur fixée avant tout résultat).",
        'nl': 'Op de releasesteekproef (20 zoekvragen) kost hybrid+rerank 182 ms per zoekvraag bij p95, boven het budget van 150 ms (limit.threshold, vastgelegd vóór enig resultaat).',
    },
    'comparison distinguished, effect cleared': {
        'en': "On the release sample (20 queries), hybrid+rerank's mean nDCG@5 is significantly higher than hybrid's: a change of +0.042 (paired 95% interval +0.016 to +0.071, sign-flip p = 0.0032), a change the test tells from no change; its interval clears the smallest change that matters, 0.01 (effect.threshold, fixed before any results).",
        'de': 'Auf der Release-Stichprobe (20 Anfragen) ist der Mittelwert von nDCG@5 für hybrid+rerank signifikant höher als für hybrid: eine Änderung um +0,042 (gepaartes 95%-Intervall von +0,016 bis +0,071, p = 0,0032 im Vorzeichen-Permutationstest), eine Änderung, die der Test vom Fall ohne Änderung unterscheidet; das Intervall liegt ganz jenseits der kleinsten Änderung, auf die es ankommt, 0,01 (effect.threshold, vor jedem Ergebnis festgelegt).',
        'es': 'En la muestra de publicación (20 consultas), la media de nDCG@5 con hybrid+rerank es significativamente mayor que con hybrid: una variación de +0,042 (intervalo pareado del 95% entre +0,016 y +0,071, p = 0,0032 en la prueba de permutación de signos), una variación que la prueba distingue de la ausencia de variación; el intervalo queda por completo más allá de la menor variación que importa, 0,01 (effect.threshold, valor fijado antes de cualquier resultado).',
        'fr': "Sur l'échantillon de publication (20 requêtes), pour hybrid+rerank, la moyenne de nDCG@5 est significativement supérieure à celle obtenue pour hybrid\xa0: une variation de +0,042 (intervalle apparié à 95% entre +0,016 et +0,071, p = 0,0032 au test de permutation des signes), une variation que le test distingue d'une absence de variation\u202f; l'intervalle se situe entièrement au-delà de la plus petite variation qui compte, 0,01 (effect.threshold, valeur fixée avant tout résultat).",
        'nl': 'Op de releasesteekproef (20 zoekvragen) is het gemiddelde van nDCG@5 bij hybrid+rerank significant hoger dan bij hybrid: een verandering van +0,042 (gepaard 95%-interval van +0,016 tot +0,071, p = 0,0032 in de tekenpermutatietoets), een verandering die de toets onderscheidt van geen verandering; het interval ligt volledig voorbij de kleinste verandering die ertoe doet, 0,01 (effect.threshold, vastgelegd vóór enig resultaat).',
    },
    'comparison not distinguished': {
        'en': "On all 20 test queries, hybrid+rerank's mean nDCG@5 is higher than hybrid's: a change of +0.042 (paired 95% interval +0.016 to +0.071, sign-flip p = 0.0032 after Holm's correction over 3 pairs); the test does not tell this change from no change; +7.4% relative to hybrid's mean.",
        'de': 'Auf allen 20 Testanfragen ist der Mittelwert von nDCG@5 für hybrid+rerank höher als für hybrid: eine Änderung um +0,042 (gepaartes 95%-Intervall von +0,016 bis +0,071, p = 0,0032 im Vorzeichen-Permutationstest nach Holm-Korrektur über 3 Paare); der Test unterscheidet diese Änderung nicht vom Fall ohne Änderung; +7,4% relativ zum Mittelwert für hybrid.',
        'es': 'En el conjunto de las 20 consultas de prueba, la media de nDCG@5 con hybrid+rerank es mayor que con hybrid: una variación de +0,042 (intervalo pareado del 95% entre +0,016 y +0,071, p = 0,0032 en la prueba de permutación de signos tras la corrección de Holm sobre 3 pares); la prueba no distingue esta variación de la ausencia de variación; +7,4% respecto de la media con hybrid.',
        'fr': "Sur l'ensemble des 20 requêtes de test, pour hybrid+rerank, la moyenne de nDCG@5 est supérieure à celle obtenue pour hybrid\xa0: une variation de +0,042 (intervalle apparié à 95% entre +0,016 et +0,071, p = 0,0032 au test de permutation des signes après correction de Holm sur 3 paires)\u202f; le test ne distingue pas cette variation d'une absence de variation\u202f; +7,4% par rapport à la moyenne obtenue pour hybrid.",
        'nl': 'Op alle 20 zoekvragen van de testset is het gemiddelde van nDCG@5 bij hybrid+rerank hoger dan bij hybrid: een verandering van +0,042 (gepaard 95%-interval van +0,016 tot +0,071, p = 0,0032 in de tekenpermutatietoets na Holm-correctie over 3 paren); de toets onderscheidt deze verandering niet van geen verandering; +7,4% ten opzichte van het gemiddelde bij hybrid.',
    },
    'decision does not fire, post hoc': {
        'en': 'Decision D5 (its rule set in freeze 2, after the results: a post hoc verdict) does not fire: keep the reranker.',
        'de': 'Entscheidung D5 (ihre Regel in Freeze 2 gesetzt, nach den Ergebnissen: ein Post-hoc-Urteil) greift nicht: keep the reranker.',
        'es': 'La decisión D5 (su regla fijada en la congelación 2, después de los resultados: un veredicto post hoc) no se activa: keep the reranker.',
        'fr': 'La décision D5 (sa règle posée au gel 2, après les résultats\xa0: un verdict post hoc) ne se déclenche pas\xa0: keep the reranker.',
        'nl': 'Beslissing D5 (de regel vastgesteld in bevriezing 2, na de resultaten: een oordeel post hoc) slaat niet aan: keep the reranker.',
    },
    'equivalence not shown': {
        'en': "On the release sample (20 queries), hybrid+rerank's nDCG@5 is not shown to be equivalent to hybrid's within a margin of 0.01 (margin.threshold, fixed before any results): the 90% interval of the mean change, -0.007 to +0.005, reaches beyond ±0.01 (two one-sided tests, p = 0.017).",
        'de': 'Auf der Release-Stichprobe (20 Anfragen) sind nDCG@5 für hybrid+rerank und für hybrid innerhalb einer Marge von 0,01 (margin.threshold, vor jedem Ergebnis festgelegt) nicht als äquivalent nachgewiesen: das 90%-Intervall der mittleren Änderung, von -0,007 bis +0,005, reicht über ±0,01 hinaus (zwei einseitige Tests, p = 0,017).',
        'es': 'En la muestra de publicación (20 consultas), no se ha demostrado que el valor de nDCG@5 con hybrid+rerank sea equivalente al obtenido con hybrid dentro de un margen de 0,01 (margin.threshold, valor fijado antes de cualquier resultado): el intervalo del 90% de la variación media, entre -0,007 y +0,005, se extiende más allá de ±0,01 (dos pruebas unilaterales, p = 0,017).',
        'fr': "Sur l'échantillon de publication (20 requêtes), pour hybrid+rerank, la valeur de nDCG@5 n'est pas démontrée équivalente à celle obtenue pour hybrid à une marge de 0,01 près (margin.threshold, valeur fixée avant tout résultat)\xa0: l'intervalle à 90% de la variation moyenne, entre -0,007 et +0,005, s'étend au-delà de ±0,01 (deux tests unilatéraux, p = 0,017).",
        'nl': 'Op de releasesteekproef (20 zoekvragen) is nDCG@5 bij hybrid+rerank binnen een marge van 0,01 (margin.threshold, vastgelegd vóór enig resultaat) niet aantoonbaar equivalent aan de waarde bij hybrid: het 90%-interval van de gemiddelde verandering, van -0,007 tot +0,005, reikt voorbij ±0,01 (twee eenzijdige toetsen, p = 0,017).',
    },
    'noninferiority': {
        'en': "On 20 queries, hybrid+rerank's nDCG@5 is non-inferior to hybrid's within a margin of 0.01 (margin.threshold, set after the results: post hoc): the one-sided 90% lower bound of the mean change is -0.007, above minus the margin (p = 0.017).",
        'de': 'Auf 20 Anfragen ist hybrid+rerank bei nDCG@5 innerhalb einer Marge von 0,01 (margin.threshold, nach den Ergebnissen gesetzt: post hoc) gegenüber hybrid nicht unterlegen: die einseitige untere 90%-Schranke der mittleren Änderung beträgt -0,007, oberhalb der negativen Marge (p = 0,017).',
        'es': 'En 20 consultas, el valor de nDCG@5 con hybrid+rerank es no inferior al obtenido con hybrid dentro de un margen de 0,01 (margin.threshold, valor fijado después de los resultados: post hoc): la cota inferior unilateral del 90% de la variación media es -0,007, por encima de menos el margen (p = 0,017).',
        'fr': 'Sur 20 requêtes, pour hybrid+rerank, la valeur de nDCG@5 est non inférieure à celle obtenue pour hybrid avec une marge de 0,01 (margin.threshold, valeur fixée après les résultats\xa0: post hoc)\xa0: la borne inférieure unilatérale à 90% de la variation moyenne est de -0,007, au-dessus de moins la marge (p = 0,017).',
        'nl': 'Op 20 zoekvragen is nDCG@5 bij hybrid+rerank binnen een marge van 0,01 (margin.threshold, vastgesteld na de resultaten: post hoc) non-inferieur aan de waarde bij hybrid: de eenzijdige 90%-ondergrens van de gemiddelde verandering is -0,007, boven min de marge (p = 0,017).',
    },
    'power, queries needed': {
        'en': "On the release sample (20 queries), the paired test detects a change in hybrid+rerank's mean nDCG@5 against hybrid's of 0.038 or more (power 0.8, alpha 0.05); the smallest change that matters, 0.01 (effect.threshold, fixed before any results), would need about 57 queries.",
        'de': 'Auf der Release-Stichprobe (20 Anfragen) erkennt der gepaarte Test eine Änderung des Mittelwerts von nDCG@5 für hybrid+rerank gegenüber hybrid von 0,038 oder mehr (Teststärke 0,8, Alpha 0,05); für die kleinste Änderung, auf die es ankommt, 0,01 (effect.threshold, vor jedem Ergebnis festgelegt), wären etwa 57 Anfragen nötig.',
        'es': 'En la muestra de publicación (20 consultas), la prueba pareada detecta una variación de 0,038 o más en la media de nDCG@5 con hybrid+rerank frente a hybrid (potencia 0,8, alfa 0,05); la menor variación que importa, 0,01 (effect.threshold, valor fijado antes de cualquier resultado), necesitaría alrededor de 57 consultas.',
        'fr': "Sur l'échantillon de publication (20 requêtes), le test apparié détecte, dans la moyenne de nDCG@5 pour hybrid+rerank face à hybrid, une variation de 0,038 ou plus (puissance 0,8, alpha 0,05)\u202f; la plus petite variation qui compte, 0,01 (effect.threshold, valeur fixée avant tout résultat), exigerait environ 57 requêtes.",
        'nl': 'Op de releasesteekproef (20 zoekvragen) detecteert de gepaarde toets een verandering van 0,038 of meer in het gemiddelde van nDCG@5 bij hybrid+rerank tegenover hybrid (onderscheidend vermogen 0,8, alfa 0,05); de kleinste verandering die ertoe doet, 0,01 (effect.threshold, vastgelegd vóór enig resultaat), zou ongeveer 57 zoekvragen vergen.',
    },
    'share, most': {
        'en': "On the release sample (20 queries), hybrid+rerank's nDCG@5 is above hybrid's on most queries (14 of 20), the same on 4 and below on 2: a count of queries, not a test of the mean.",
        'de': 'Auf der Release-Stichprobe (20 Anfragen) liegt nDCG@5 für hybrid+rerank bei den meisten Anfragen (14 von 20) über dem Wert für hybrid, bei 4 gleichauf und bei 2 darunter: eine Zählung von Anfragen, kein Test des Mittelwerts.',
        'es': 'En la muestra de publicación (20 consultas), en la mayoría de las consultas (14 de 20) el valor de nDCG@5 con hybrid+rerank es mayor que con hybrid, en 4 es igual y en 2 es menor: un recuento de consultas, no una prueba de la media.',
        'fr': "Sur l'échantillon de publication (20 requêtes), pour hybrid+rerank, la valeur de nDCG@5 est supérieure à celle obtenue pour hybrid sur la plupart des requêtes (14 sur 20), égale sur 4 et inférieure sur 2\xa0: un décompte de requêtes, pas un test de la moyenne.",
        'nl': 'Op de releasesteekproef (20 zoekvragen) ligt nDCG@5 bij hybrid+rerank hoger dan bij hybrid op de meeste zoekvragen (14 van 20), gelijk op 4 en lager op 2: een telling van zoekvragen, geen toets van het gemiddelde.',
    },
}


@pytest.mark.parametrize("language", (ENGLISH, *TRANSLATIONS))
@pytest.mark.parametrize("name", sorted(_snapshot_readings()))
def test_snapshot(name, language):
    each, phrasing_name = _snapshot_readings()[name]
    assert rendered(each, language, phrasing_name) == SNAPSHOTS[name][language]


# --- (c) numbers in each language's style ------------------------------------------------------------

NUMBERS = {
    # language: (score 0.6125, a count of 1234 queries, the paired interval, 9.46 ms)
    ENGLISH: ("0.613", "1,234 queries", "+0.016 to +0.071", "9.5 ms"),
    "de": ("0,613", "1.234 Anfragen", "von +0,016 bis +0,071", "9,5 ms"),
    "fr": ("0,613", "1\u202f234 requêtes", "entre +0,016 et +0,071", "9,5\u00a0ms"),
    "es": ("0,613", "1.234 consultas", "entre +0,016 y +0,071", "9,5 ms"),
    "nl": ("0,613", "1.234 zoekvragen", "van +0,016 tot +0,071", "9,5 ms"),
}


@pytest.mark.parametrize("language", sorted(NUMBERS))
def test_numbers_take_the_language_style(language):
    book = phrasing.phrasebook(language)
    score, count, interval, time = NUMBERS[language]
    assert phrasing.show(Figure("score", 0.6125), book) == score
    assert phrasing.show(Figure("count", 1234, noun="query"), book) == count
    assert phrasing.show(Figure("interval", (0.0161, 0.0712), (0.0,)), book) == interval
    assert phrasing.show(Figure("ms", 9.46), book) == time


ENGLISH_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def _in_style(english_number: str, language: str) -> str:
    style = phrasing.style(language)
    return english_number.replace(",", "\0").replace(".", style.decimal).replace("\0", style.thousands)


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_every_figure_of_every_sentence_takes_the_language_style(language):
    """Each number the English sentence shows is shown in the language's own marks (a decimal
    comma in German and French): no figure slips into the English decimal point."""
    for kind, case in _every_case():
        for each in readings_of(kind, case):
            for name in phrasing.phrasings(kind):
                _, english_shown = phrasing.sentence(each, ENGLISH, name)
                _, shown = phrasing.sentence(each, language, name)
                for figure, english_value in english_shown.items():
                    for number in ENGLISH_NUMBER.findall(english_value):
                        assert _in_style(number, language) in shown[figure], (figure, english_value, shown[figure])


def test_german_and_french_decimal_comma():
    assert (phrasing.style("de").decimal, phrasing.style("de").thousands) == (",", ".")
    assert (phrasing.style("fr").decimal, phrasing.style("fr").thousands) == (",", "\u202f")
