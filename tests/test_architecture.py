"""The package's shape: no import cycles of any kind (between modules or between stages, type-only
imports included), stages that read the kernel (generator.core) and never the evaluation stage,
sibling modules imported at the top of a module except the evaluation stage, which only the CLI
and `build` import late so that `check`, `render` and `sandbox` start without numpy, torch or
bm25s, and package docstrings and ARCHITECTURE.md that name exactly the modules that exist."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import cli_in_fresh_interpreter, run_python

PACKAGE = Path(__file__).resolve().parents[1] / "generator"
# (module, function) pairs allowed to import a sibling inside a function, and what they may import.
# The commands import each command's modules inside that command's functions (any of the
# package); elsewhere only these late imports are allowed.
LATE_IMPORTS_ANYWHERE_IN = ("generator.commands.cli", "generator.commands.evaluation", "generator.commands.ledger",
                            "generator.commands.reports")
LATE_IMPORTS_ALLOWED = {("generator.commands.build", "refresh_results"): "generator.evaluate",
                        # NumPy and SciPy, only when a comparison is drawn (the evaluation stage, or
                        # check drawing a results file's comparisons again): never for the sandbox.
                        ("generator.core.results.builders", "draw_comparison"): "generator.core.comparisons",
                        ("generator.core.results.builders", "comparisons_block"): "generator.core.comparisons",
                        ("generator.core.results.builders", "score_rows"): "generator.core.comparisons",
                        # The derivation (NumPy, SciPy, the sandbox's pipeline), only when no memo answers.
                        ("generator.claims.tracing.measured", "_derive"): "generator.claims.tracing.rederive",
                        ("generator.claims.tracing.measured", "_problem"): "generator.claims.tracing.rederive",
                        # NumPy and SciPy (the interval and the verdict), only when a change since a
                        # baseline is drawn and no memo answers: a render that shows none starts without them.
                        ("generator.claims.record.noninferiority", "_measure"): "generator.core.",
                        # SciPy, only when a frame's margin test or queries needed is not remembered.
                        ("generator.claims.frames.paired_readings", "_margin_outcome"): "generator.core.power",
                        ("generator.claims.frames.paired_readings", "_queries_needed"): "generator.core.power",
                        ("generator.claims.frames.paired_readings", "compute"): "generator.core.power",
                        # SciPy, only for a results file with comparisons, or a rule that states its effect.
                        ("generator.core.results.builders", "power_block"): "generator.core",
                        ("generator.claims.record.triggers", "_detectable"): "generator.core.power",
                        ("generator.render.twins", "_both_tests"): "generator.core.power"}



def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Every module's syntax tree, parsed once per worker (a dozen tests read them; none changes one)."""
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


def _every_import_graph(modules: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Every import a module makes anywhere: at the top, under `if TYPE_CHECKING:`, inside a function."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in modules.items():
        for node in ast.walk(tree):
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


def _stage_graph(module_graph: dict[str, set[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, targets in module_graph.items():
        graph.setdefault(_stage(name), set()).update(_stage(t) for t in targets if _stage(t) != _stage(name))
    for targets in list(graph.values()):
        for target in targets:
            graph.setdefault(target, set())
    return graph


def test_no_import_cycle_between_modules():
    assert _cycle(_top_level_graph(_modules())) is None


def test_no_import_cycle_of_any_kind_type_only_and_late_imports_included():
    assert _cycle(_every_import_graph(_modules())) is None


def test_no_import_cycle_between_stages():
    assert _cycle(_stage_graph(_every_import_graph(_modules()))) is None


def test_a_type_only_import_counts_as_an_edge():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from generator.b import B\n")
    graph = _every_import_graph({"generator.a": tree, "generator.b": ast.parse("import generator.a")})
    assert _cycle(graph) == ["generator.a", "generator.b", "generator.a"]


# The stages that may read another stage besides the kernel and the shared top-level modules, and
# why; any other arrow between stages fails. The evaluation stage is read by nobody but the CLI
# and `build`, so no reader of results pulls in torch, models or caches.
STAGE_READS_ALLOWED = {
    ("generator.render", "generator.claims"): "the renderer shows the check report",
    ("generator.claims", "generator.sandbox"): "check re-derives the sandbox's stage_boundary.json",
    ("generator.claims", "generator.project"): "the checker reads the project model",
    ("generator.render", "generator.project"): "the renderer reads the project model",
    ("generator.project", "generator.sandbox"): "readout.yaml's sandbox: block is the sandbox's config",
}
STAGES = ("generator.claims", "generator.evaluate", "generator.project", "generator.render", "generator.sandbox")


def test_stages_read_the_kernel_and_never_the_evaluation_stage():
    found = []
    for name, targets in _every_import_graph(_modules()).items():
        if _stage(name) in ("generator.claims", "generator.project", "generator.sandbox", "generator.render",
                            "generator.core"):
            found += [f"{name} imports {t}" for t in sorted(targets) if t.startswith("generator.evaluate")]
    assert found == []


RESULTS_PACKAGE = "generator.core.results"


def _in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_kernel_reads_no_stage_no_results_file_and_nothing_heavy():
    found = []
    for name, tree in _modules().items():
        if _stage(name) != "generator.core":
            continue
        for node in ast.walk(tree):
            for target in _imported(node):
                # The results package reads the rest of the kernel, so the rest never reads it.
                if (_stage(target) in STAGES
                        or (_in_package(target, RESULTS_PACKAGE) and not _in_package(name, RESULTS_PACKAGE))
                        or target.split(".")[0] in ("torch", "sentence_transformers", "bm25s", "transformers")):
                    found.append(f"{name} imports {target}")
    assert found == []


def test_only_the_listed_stage_to_stage_arrows_exist():
    arrows = {(source, target) for source, targets in _stage_graph(_every_import_graph(_modules())).items()
              for target in targets if source in STAGES and target in STAGES}
    late = {("generator.commands", "generator.evaluate")}   # build and the CLI, late
    assert arrows - set(STAGE_READS_ALLOWED) - late == set()


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
                    if target.startswith("generator") and name not in LATE_IMPORTS_ANYWHERE_IN:
                        allowed = LATE_IMPORTS_ALLOWED.get((name, function.name))
                        if allowed is None or not target.startswith(allowed):
                            late.append(f"{name}.{function.name} imports {target}")
    assert late == []


# Never imported by the light commands; NumPy and SciPy only where a results file holds paired
# comparisons that check draws again (the SciFact review), never for the sandbox or the calculator.
MODEL_STACK = ["bm25s", "sentence_transformers", "torch", "transformers"]


@pytest.mark.parametrize("argv, allowed", [(["check", "--no-record"], ["numpy", "scipy"]),
                                           (["render", "--check"], ["numpy", "scipy"]),
                                           (["check", "--no-record", "examples/l03"], []),
                                           (["render", "--check", "examples/l03"], []),
                                           (["sandbox", "examples/l03"], []), (["selftest"], []), (["ceiling"], [])])
def test_light_commands_never_import_heavy_libraries(argv, allowed, tmp_path):
    project = PACKAGE.parent
    if argv[0] == "sandbox":
        shutil.copytree(project / "examples" / "l03", tmp_path / "l03")
        argv = ["sandbox", str(tmp_path / "l03")]
    code, heavy, output = cli_in_fresh_interpreter(argv, cwd=project)
    assert code == 0, output
    assert heavy is not None and not set(heavy) & set(MODEL_STACK), output
    assert set(heavy) <= set(allowed), output


# What each gate command must not import once its memos are warm (generator.storage.memo): the
# renderer, Jinja and NumPy stay out of `check`; the evaluation stage out of `render --check`;
# PyYAML out of both (what each YAML text parses to is remembered: generator.storage.safe_yaml),
# and markdown-it out of both (a claim's Markdown read or rendered is remembered).
NOT_IMPORTED = {
    ("check", "--no-record"): ["numpy", "scipy", "regex", "yaml", "jinja2", "html5lib", "markdown_it", "generator.render", "snowballstemmer",
                               "generator.evaluate",
                               "generator.commands.build", "generator.commands.scaffold", "generator.sandbox.runner", *MODEL_STACK],
    ("render", "--check"): ["numpy", "scipy", "regex", "yaml", "html5lib", "markdown_it", "generator.evaluate", "generator.commands.build",
                            "generator.commands.scaffold", "generator.sandbox.runner", *MODEL_STACK],
}
_MODULES_AFTER = ("import json, sys; from generator.commands.cli import main; rc = main(sys.argv[1:]); "
                  "print(json.dumps(sorted(sys.modules))); sys.exit(rc)")


def _imported_by(argv: list[str], cwd: Path, cache: Path) -> set[str]:
    completed = run_python("-c", _MODULES_AFTER, *argv, cwd=cwd,
                           env={**os.environ, "READOUT_CACHE": str(cache), "READOUT_NO_MEMO": ""})
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr
    return set(json.loads(completed.stdout.strip().splitlines()[-1]))


def _within(modules: set[str], names: list[str]) -> list[str]:
    return sorted(module for module in modules if any(module == name or module.startswith(name + ".")
                                                       for name in names))


@pytest.mark.parametrize("command", sorted(NOT_IMPORTED), ids=" ".join)
@pytest.mark.parametrize("project", [".", "examples/l03"])
def test_each_gate_command_imports_only_what_it_runs(command, project, tmp_path):
    root = PACKAGE.parent
    argv = [*command, project]
    cold = _imported_by(argv, root, tmp_path)
    warm = _imported_by(argv, root, tmp_path)
    assert _within(warm, NOT_IMPORTED[command]) == []
    if project == "." and command[0] == "check":
        # The memo is what keeps NumPy out: a cold check draws the SciFact intervals again with it.
        assert _within(cold, ["numpy", "scipy"]) != []


def test_the_import_set_rule_can_fail():
    assert _within({"generator.render.renderer", "jinja2", "json"}, ["generator.render", "jinja2"]) == [
        "generator.render.renderer", "jinja2"]
    assert _within({"generator.rendering"}, ["generator.render"]) == []


def _package_modules(package: Path) -> set[str]:
    """A package's modules and its subpackages, each by its own name."""
    return ({path.stem for path in package.glob("*.py") if path.stem != "__init__"}
            | {path.parent.name for path in package.glob("*/__init__.py")})


def _named_modules(text: str) -> set[str]:
    """The backquoted module names of a `Modules:` paragraph."""
    match = re.search(r"Modules:(.*?)(?:\n\s*\n|$)", text, re.S)
    return set(re.findall(r"`([a-z_][a-z0-9_]*)`", match.group(1))) if match else set()


@pytest.mark.parametrize("package", sorted(path.parent.relative_to(PACKAGE).as_posix()
                                            for path in PACKAGE.rglob("*/__init__.py")))
def test_every_package_docstring_names_exactly_its_modules(package):
    docstring = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert _named_modules(docstring) == _package_modules(PACKAGE / package), package


def _architecture_entries() -> dict[str, set[str]]:
    """ARCHITECTURE.md's "Who owns what": each bullet `generator/<package>/` (or "Top level")
    with the backquoted module names it gives."""
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Who owns what", 1)[1].split("\n## ", 1)[0]
    entries = {}
    for bullet in re.split(r"\n- ", "\n" + section.strip())[1:]:
        head = re.match(r"`generator/([a-z_/]+)/`|Top level", bullet)
        assert head, bullet[:60]
        names = set(re.findall(r"`([a-z_][a-z0-9_]*)(?:\.py)?`", bullet))
        entries[head.group(1) or "."] = names
    return entries


def test_architecture_names_exactly_the_modules_that_exist():
    """Every top-level package has its bullet; a subpackage may have one of its own (core/results),
    or be named in its parent's and name its modules in its docstring (core/text)."""
    entries = _architecture_entries()
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    top_level = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    assert set(entries) - {"."} >= packages
    assert entries.get(".", set()) == top_level, "top level"
    for package in set(entries) - {"."}:
        assert (PACKAGE / package / "__init__.py").is_file(), f"ARCHITECTURE.md names generator/{package}/"
        assert entries[package] == _package_modules(PACKAGE / package), package


def test_the_top_level_holds_only_subpackages_grouped_by_job():
    """A reader finds a module by its job's folder: no loose module beside the subpackages, and at
    most eight of them (issue 48): four stages, the kernel (with its text handling and the results
    file), the project model, storage and the commands."""
    assert sorted(path.stem for path in PACKAGE.glob("*.py")) == ["__init__"]
    assert len([path for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()]) <= 8


def test_a_missing_module_name_is_noticed():
    assert _named_modules("Modules: `a` (one), `b` (two).\n\nMore.") == {"a", "b"}
    assert _named_modules("Modules: `a` (one).") != {"a", "b"}


# test_install.py builds and installs the wheel on purpose, in an environment of its own.
CHILD_PROCESS_EXEMPT = ("conftest.py", "test_install.py")


def test_tests_start_python_only_through_run_python():
    """A child `python` started by hand imports `generator` only when the package happens to be
    installed (or the working directory happens to be the checkout): conftest.run_python puts the
    checkout on PYTHONPATH, so every subprocess test runs the same however the package was installed."""
    found = []
    for path in sorted((PACKAGE.parent / "tests").rglob("*.py")):
        if path.name in CHILD_PROCESS_EXEMPT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and (node.attr == "executable" or (
                    isinstance(node.value, ast.Name) and node.value.id == "subprocess")):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert found == []


def test_every_dataclass_of_the_package_is_the_kernels():
    """generator.core.dataclass shares comparison, hash and repr between classes, which the gate's
    start depends on; one class from the standard library's decorator would compile its own again.
    Storage sits below the kernel and defines one small class with the standard library's."""
    found = []
    for name, tree in _modules().items():
        if name == "generator.core.dataclass" or _stage(name) == "generator.storage":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "dataclasses" and any(
                    alias.name == "dataclass" for alias in node.names):
                found.append(f"{name}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr == "dataclass" and isinstance(
                    node.value, ast.Name) and node.value.id == "dataclasses":
                found.append(f"{name}:{node.lineno}")
    assert found == []


MAX_MODULE_LINES = 500


def test_no_module_is_over_five_hundred_lines():
    """A module a reader can hold at once (issue 48): one job each, split by job when it grows."""
    long = {path.relative_to(PACKAGE).as_posix(): lines for path in sorted(PACKAGE.rglob("*.py"))
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}
