"""The package's shape: no import cycles (between modules or between stages), sibling modules
imported at the top of a module except the evaluation stage, which only the CLI and `build`
import late so that `check`, `render` and `sandbox` start without numpy, torch or bm25s."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "generator"
# (module, function) pairs allowed to import a sibling inside a function, and what they may import.
LATE_IMPORTS_ALLOWED = {("generator.cli", "_run_evaluate"): "generator.evaluate",
                        ("generator.cli", "_run_cost"): "generator.evaluate",
                        ("generator.build", "refresh_results"): "generator.evaluate"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(path): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        # `from generator.render import charts` imports a module; `from generator.x import name` the module x.
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def _top_level_graph(modules: dict[str, ast.Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in modules.items():
        for node in tree.body:
            for target in _imported(node):
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _stage(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def test_no_import_cycle_between_modules():
    assert _cycle(_top_level_graph(_modules())) is None


def test_no_import_cycle_between_stages():
    graph: dict[str, set[str]] = {}
    for name, targets in _top_level_graph(_modules()).items():
        graph.setdefault(_stage(name), set()).update(_stage(t) for t in targets if _stage(t) != _stage(name))
    for targets in list(graph.values()):
        for target in targets:
            graph.setdefault(target, set())
    assert _cycle(graph) is None


def test_a_cycle_is_found_when_there_is_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_sibling_modules_are_imported_at_the_top_except_the_evaluation_stage():
    late = []
    for name, tree in _modules().items():
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                for target in _imported(node):
                    if target.startswith("generator"):
                        allowed = LATE_IMPORTS_ALLOWED.get((name, function.name))
                        if allowed is None or not target.startswith(allowed):
                            late.append(f"{name}.{function.name} imports {target}")
    assert late == []


@pytest.mark.parametrize("argv", [["check", "--no-record"], ["render", "--check"], ["sandbox", "examples/l03"],
                                  ["selftest"], ["ceiling"]])
def test_light_commands_never_import_heavy_libraries(argv, tmp_path):
    code = ("import sys; from generator.cli import main; rc = main(sys.argv[1:]); "
            "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'bm25s', 'numpy', 'scipy', 'transformers') "
            "if m in sys.modules); print(heavy); sys.exit(rc)")
    project = PACKAGE.parent
    if argv[0] == "sandbox":
        shutil.copytree(project / "examples" / "l03", tmp_path / "l03")
        argv = ["sandbox", str(tmp_path / "l03")]
    completed = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=project)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "[]"
