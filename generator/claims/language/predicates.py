"""A tiny, safe expression language for claim predicates (`hybrid > dense`, `abs(d) < 0.01`).

A predicate is parsed with `ast` and evaluated by walking the tree here; nothing is passed to
`eval`. Allowed:

* numbers, strings, `true`/`True`, `false`/`False`, `null`/`None` constants;
* names, each bound to a value the claim declares (`values:` of its measured sources);
* comparisons `== != < <= > >=` (chains such as `0 < x <= 1` too);
* `and`, `or`, `not`; unary `-` and `+`; binary `+ - * /`;
* calls to `abs`, `min` and `max` with positional arguments.

Everything else (attributes, subscripts, other calls, lambdas, comprehensions, `**`, `//`, `%`,
bit operations, f-strings) is refused when the ledger is loaded, and so is a predicate longer
than MAX_SOURCE characters or nested deeper than MAX_DEPTH.

A predicate must be able to fail: `can_fail` evaluates it at perturbed inputs (each value moved,
negated, zeroed, pushed far away; pairs swapped; booleans flipped; text changed) and the checker
refuses one that stays true at all of them (`x == x`, `s > s - 1`, `a >= 0 or a < 0`,
`max(a, b) >= a`). Its constants account for no number in the claim's text.
"""

from __future__ import annotations

import ast
import math
import operator
from functools import lru_cache
from typing import Any, Mapping

from generator.core.dataclass import dataclass

FUNCTIONS = {"abs": abs, "min": min, "max": max}
MAX_SOURCE = 500
MAX_DEPTH = 32
CONSTANT_NAMES = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}


class PredicateSyntaxError(ValueError):
    """The predicate is not valid in the language described in this module's docstring."""


class PredicateEvaluationError(ValueError):
    """The predicate could not be evaluated on these values (for example None > 1, x / 0)."""


@dataclass(frozen=True)
class Predicate:
    source: str
    tree: ast.Expression
    names: frozenset[str]

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        return _evaluate(self.tree.body, values)


def _shown(source: str) -> str:
    return repr(source) if len(source) <= 60 else repr(source[:57] + "...")


@lru_cache(maxsize=4096)
def compile_predicate(source: str) -> Predicate:
    if not isinstance(source, str) or not source.strip():
        raise PredicateSyntaxError("empty predicate")
    if len(source) > MAX_SOURCE:
        raise PredicateSyntaxError(f"predicate longer than {MAX_SOURCE} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        raise PredicateSyntaxError(f"cannot parse predicate {_shown(source)}: {error.msg}") from None
    except (RecursionError, MemoryError):
        raise PredicateSyntaxError(f"predicate nested more than {MAX_DEPTH} levels deep") from None
    if _depth(tree) > MAX_DEPTH:
        raise PredicateSyntaxError(f"predicate nested more than {MAX_DEPTH} levels deep")
    names: set[str] = set()
    for node in ast.walk(tree):
        _check_node(node, source)
        if isinstance(node, ast.Name) and node.id not in CONSTANT_NAMES and not _is_function_name(tree, node):
            names.add(node.id)
    return Predicate(source=source, tree=tree, names=frozenset(names))


def _depth(tree: ast.AST) -> int:
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _is_function_name(tree: ast.AST, name: ast.Name) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.func is name:
            return True
    return False


_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
            ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Compare, ast.Eq, ast.NotEq, ast.Lt,
            ast.LtE, ast.Gt, ast.GtE, ast.Name, ast.Load, ast.Constant, ast.Call)


def _check_node(node: ast.AST, source: str) -> None:
    if not isinstance(node, _ALLOWED):
        raise PredicateSyntaxError(f"{type(node).__name__} is not allowed in a predicate ({_shown(source)}); "
                                   "use names, numbers, comparisons, and/or/not, + - * /, abs, min, max")
    if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool, type(None))):
        raise PredicateSyntaxError(f"constant {node.value!r} is not allowed in a predicate ({_shown(source)})")
    if isinstance(node, ast.Constant) and isinstance(node.value, float) and not math.isfinite(node.value):
        raise PredicateSyntaxError(f"constant {node.value!r} is not a finite number: a comparison with it cannot "
                                   f"fail ({_shown(source)})")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise PredicateSyntaxError(f"only {', '.join(sorted(FUNCTIONS))} may be called in a predicate "
                                       f"({_shown(source)})")
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args) or not node.args:
            raise PredicateSyntaxError(f"{node.func.id}() takes positional arguments only ({_shown(source)})")


def _evaluate(node: ast.AST, values: Mapping[str, Any]) -> Any:
    try:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in CONSTANT_NAMES:
                return CONSTANT_NAMES[node.id]
            if node.id not in values:
                raise PredicateEvaluationError(f"name {node.id!r} has no value")
            return values[node.id]
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                result: Any = True
                for operand in node.values:
                    result = _evaluate(operand, values)
                    if not result:
                        return result
                return result
            result = False
            for operand in node.values:
                result = _evaluate(operand, values)
                if result:
                    return result
            return result
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](_evaluate(node.operand, values))
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
        if isinstance(node, ast.Compare):
            left = _evaluate(node.left, values)
            for op, comparator in zip(node.ops, node.comparators):
                right = _evaluate(comparator, values)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            return FUNCTIONS[node.func.id](*[_evaluate(arg, values) for arg in node.args])
    except PredicateEvaluationError:
        raise
    except (TypeError, ZeroDivisionError, ValueError, OverflowError) as error:
        raise PredicateEvaluationError(str(error)) from None
    raise PredicateEvaluationError(f"{type(node).__name__} is not allowed")  # unreachable after compile


class _Unknown:
    """A value that was not measured. Kleene's three-valued logic: a comparison or sum with it is
    unknown, `False and unknown` is False, `True or unknown` is True."""

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("an unknown value has no truth value; use evaluate_three_valued")


UNKNOWN = _Unknown()


def evaluate_three_valued(predicate: Predicate, values: Mapping[str, Any]) -> Any:
    """Evaluate with UNKNOWN standing for values that were not measured: True, False or UNKNOWN
    (or a non-boolean, which the caller refuses). A decision that does not depend on the unknown
    values is still decided: `p95 <= budget and lift > 0` is False once p95 is over budget."""
    return _evaluate3(predicate.tree.body, values)


def _evaluate3(node: ast.AST, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.BoolOp):
        outcomes = [_evaluate3(operand, values) for operand in node.values]
        decisive, other = (False, True) if isinstance(node.op, ast.And) else (True, False)
        if any(outcome is decisive for outcome in outcomes):
            return decisive
        if any(outcome is UNKNOWN for outcome in outcomes):
            return UNKNOWN
        for outcome in outcomes:
            if not isinstance(outcome, bool):
                raise PredicateEvaluationError(f"{'and' if decisive is False else 'or'} needs true or false, "
                                               f"got {outcome!r}")
        return other
    if isinstance(node, ast.Compare):
        operands = [_evaluate3(node.left, values), *(_evaluate3(c, values) for c in node.comparators)]
        outcomes = []
        for op, left, right in zip(node.ops, operands, operands[1:]):
            if left is UNKNOWN or right is UNKNOWN:
                outcomes.append(UNKNOWN)
                continue
            try:
                outcomes.append(bool(_COMPARE[type(op)](left, right)))
            except TypeError as error:
                raise PredicateEvaluationError(str(error)) from None
        if any(outcome is False for outcome in outcomes):
            return False
        return UNKNOWN if any(outcome is UNKNOWN for outcome in outcomes) else True
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate3(node.operand, values)
        if operand is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not) and not isinstance(operand, bool):
            raise PredicateEvaluationError(f"not needs true or false, got {operand!r}")
        return _evaluate(ast.UnaryOp(op=node.op, operand=ast.Constant(operand)), values)
    if isinstance(node, (ast.BinOp, ast.Call)):
        children = [node.left, node.right] if isinstance(node, ast.BinOp) else list(node.args)
        evaluated = [_evaluate3(child, values) for child in children]
        if any(value is UNKNOWN for value in evaluated):
            return UNKNOWN
        constants = [ast.Constant(value) for value in evaluated]
        rebuilt = (ast.BinOp(left=constants[0], op=node.op, right=constants[1]) if isinstance(node, ast.BinOp)
                   else ast.Call(func=node.func, args=constants, keywords=[]))
        return _evaluate(rebuilt, values)
    return _evaluate(node, values)


def _alternatives(value: Any, constants: tuple[Any, ...]) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, (int, float)):
        v = float(value)
        near = [float(c) + delta for c in constants if isinstance(c, (int, float)) and not isinstance(c, bool)
                for delta in (-1.0, 0.0, 1.0)]
        return [v + 1.0, v - 1.0, -v, 0.0, 2.0 * v + 1.0, v / 2.0 - 1.0, v + 1e6, v - 1e6, -abs(v) - 1.0,
                abs(v) + 1.0, 0.5, -0.5, *near]
    if isinstance(value, str):
        return [value + "~", "", "~" + value, *(c for c in constants if isinstance(c, str))]
    if isinstance(value, list):
        return [value[::-1], [], [*value, "~"]]
    if isinstance(value, dict):
        return [{}, {**value, "~": "~"}]
    return []


def constants_of(predicate: Predicate) -> tuple[Any, ...]:
    return tuple(node.value for node in ast.walk(predicate.tree) if isinstance(node, ast.Constant))


def perturbations(values: Mapping[str, Any], constants: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """Deterministic neighbouring inputs: one value changed at a time (including to each constant
    the predicate compares with), pairs of same-typed values swapped, and every number set to one
    common value."""
    names = sorted(values)
    found: list[dict[str, Any]] = []
    for name in names:
        for alternative in _alternatives(values[name], constants):
            found.append({**values, name: alternative})
    for index, first in enumerate(names):
        for second in names[index + 1:]:
            if type(values[first]) is type(values[second]) and values[first] != values[second]:
                found.append({**values, first: values[second], second: values[first]})
    numeric = [name for name in names if isinstance(values[name], (int, float)) and not isinstance(values[name], bool)]
    for common in (0.0, 1.0, -1.0):
        if len(numeric) > 1:
            found.append({**values, **{name: common for name in numeric}})
    for sign in (1.0, -1.0):
        if len(numeric) > 1:
            found.append({**values, **{name: sign * (index + 1) * 1e3 for index, name in enumerate(numeric)}})
    return found


def can_fail(predicate: Predicate, values: Mapping[str, Any]) -> bool:
    """Whether the predicate is false at some perturbed input (a predicate that cannot fail is a
    tautology and supports nothing). Inputs it cannot evaluate are skipped."""
    relevant = {name: values[name] for name in predicate.names if name in values}
    if not relevant:
        return False
    key = (predicate.source, repr(sorted((name, type(value).__name__, repr(value)) for name, value in relevant.items())))
    if key not in _CAN_FAIL:
        if len(_CAN_FAIL) > 8192:
            _CAN_FAIL.clear()
        _CAN_FAIL[key] = _can_fail(predicate, relevant)
    return _CAN_FAIL[key]


_CAN_FAIL: dict[tuple[str, str], bool] = {}


def _can_fail(predicate: Predicate, values: Mapping[str, Any]) -> bool:
    for assignment in perturbations(values, constants_of(predicate)):
        try:
            if predicate.evaluate(assignment) is False:
                return True
        except PredicateEvaluationError:
            continue
    return False


def idle_predicate(tree: ast.Expression, names: frozenset[str]) -> str | None:
    """Why a predicate names values without comparing them, or None. A predicate that names two or
    more values must compare two of them with each other, or hold one against zero (the sign of a
    change, an interval that clears zero), an exact count or a category: `h > -1 and d > -1` names
    both values and holds neither (nDCG is never below -1), and passes whatever the results say."""
    if len(names) < 2:
        return None
    compares = [node for node in ast.walk(tree) if isinstance(node, ast.Compare)]
    compared = set().union(*(_names_in(node) for node in compares)) if compares else set()
    # A value tested for truth outside any comparison (`not measured`) is a flag, read as it is.
    if not compares or names - compared or any(_holds(node, names) for node in compares):
        return None
    return (f"the predicate names {', '.join(sorted(names))} but compares none of them with another, nor with "
            "zero, an exact count or a category: it holds whatever the results say")


def _holds(node: ast.Compare, names: frozenset[str]) -> bool:
    """Whether one comparison says something of the results: two values against each other, a value
    against zero, or an exact value or category (== and !=)."""
    operands = [node.left, *node.comparators]
    if len(set().union(*(_names_in(operand) for operand in operands)) & names) >= 2:
        return True
    if all(isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
        return True
    for operand in operands:
        value = _constant(operand)
        if value is not None and (isinstance(value, str) or value == 0):
            return True
    return False


def _constant(node: ast.AST):
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand,
                                                                                                     ast.Constant):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    return None


def _names_in(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}
