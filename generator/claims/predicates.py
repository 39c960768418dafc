"""A tiny, safe expression language for claim predicates (`hybrid > dense`, `abs(d) < 0.01`).

A predicate is parsed with `ast` and evaluated by walking the tree here; nothing is passed to
`eval`. Allowed:

* numbers, strings, `true`/`True`, `false`/`False`, `null`/`None` constants;
* names, each bound to a value the claim declares (`values:` of its measured sources);
* comparisons `== != < <= > >=` (chains such as `0 < x <= 1` too);
* `and`, `or`, `not`; unary `-` and `+`; binary `+ - * /`;
* calls to `abs`, `min` and `max` with positional arguments.

Everything else (attributes, subscripts, other calls, lambdas, comprehensions, `**`, `//`, `%`,
bit operations, f-strings) is refused when the ledger is loaded.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

FUNCTIONS = {"abs": abs, "min": min, "max": max}
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


@lru_cache(maxsize=4096)
def compile_predicate(source: str) -> Predicate:
    if not isinstance(source, str) or not source.strip():
        raise PredicateSyntaxError("empty predicate")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        raise PredicateSyntaxError(f"cannot parse predicate {source!r}: {error.msg}") from None
    names: set[str] = set()
    for node in ast.walk(tree):
        _check_node(node, source)
        if isinstance(node, ast.Name) and node.id not in CONSTANT_NAMES and not _is_function_name(tree, node):
            names.add(node.id)
    return Predicate(source=source, tree=tree, names=frozenset(names))


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
        raise PredicateSyntaxError(f"{type(node).__name__} is not allowed in a predicate ({source!r}); "
                                   "use names, numbers, comparisons, and/or/not, + - * /, abs, min, max")
    if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool, type(None))):
        raise PredicateSyntaxError(f"constant {node.value!r} is not allowed in a predicate ({source!r})")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise PredicateSyntaxError(f"only {', '.join(sorted(FUNCTIONS))} may be called in a predicate "
                                       f"({source!r})")
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args) or not node.args:
            raise PredicateSyntaxError(f"{node.func.id}() takes positional arguments only ({source!r})")


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
