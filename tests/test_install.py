"""A real install: the wheel carries the templates, the label registry and the readout.yaml schema,
and, installed into a fresh virtual environment, renders the L03 example from an unrelated working
directory exactly as committed, and scaffolds, builds and renders a new project.

The wheel is built offline from a copy of the sources (`pip wheel --no-deps --no-build-isolation`,
with this environment's setuptools) and installed with `--no-deps` into a venv made without pip; a
`.pth` file then lends it this environment's site-packages for the dependencies (torch, the packaged
MiniLM), so nothing is downloaded. The `generator` package the venv imports is the wheel's.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest


REPOSITORY = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
# What a build needs from the repository; nothing else (no tests, examples, outputs) goes in.
SOURCES = ("pyproject.toml", "README.md", "generator", "templates")
L03 = REPOSITORY / "examples" / "l03"
REPORTS = ("readout.html", "TEACHBACK.md", "AAR.md")


def _copy_sources(target: Path) -> Path:
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        source = REPOSITORY / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    return target


def _run(argv: list, cwd: Path, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(part) for part in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _environment(home: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME",
                                                                          "VIRTUAL_ENV", "READOUT_DEBUG")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", READOUT_CACHE=str(home / "cache"),
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = _copy_sources(work / "src")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                  "-w", work / "dist", source], cwd=work, env=_environment(work))
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (work / "dist").glob("traced_readout-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding only the wheel, with this environment's site-packages lent for the
    dependencies (after the install, so pip never sees this environment's editable install)."""
    root = tmp_path_factory.mktemp("venv")
    env = _environment(root)
    made = _run([sys.executable, "-m", "venv", "--without-pip", root / "venv"], cwd=root, env=env)
    assert made.returncode == 0, made.stderr
    python = root / "venv" / "bin" / "python"
    installed = _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
                      wheel], cwd=root, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root, env=env)
    lent = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site.stdout.strip()) / "readout-test-dependencies.pth").write_text(
        "".join(f"{path}\n" for path in sorted(lent)), encoding="utf-8")
    return root / "venv"


def test_every_subpackage_is_listed_and_every_template_is_package_data():
    found = {".".join(path.parent.relative_to(REPOSITORY).parts)
             for path in (REPOSITORY / "generator").rglob("__init__.py")}
    # A directory of data files only is listed too, or setuptools warns at every install.
    data_only = {".".join(path.relative_to(REPOSITORY).parts)
                 for path in (REPOSITORY / "generator").rglob("*")
                 if path.is_dir() and path.name != "__pycache__" and not (path / "__init__.py").exists()}
    assert set(SETUPTOOLS["packages"]) == found | data_only | {"generator.templates"}
    assert SETUPTOOLS["package-dir"] == {"generator.templates": "templates"}
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["generator.templates"]
    for path in (REPOSITORY / "templates").iterdir():
        assert any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns), f"templates/{path.name} is not shipped"


def test_the_wheel_holds_the_templates_the_labels_and_the_schema_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (REPOSITORY / "templates").iterdir():
        assert f"generator/templates/{path.name}" in names
    assert "generator/project/config.schema.json" in names
    assert "generator/commands/scaffold.py" in names
    assert not [name for name in names if name.startswith(("tests/", "examples/", "outputs/", "claims/", "design/"))]
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_the_installed_wheel_builds_l03_from_an_unrelated_directory_exactly_as_committed(venv, tmp_path):
    project = tmp_path / "copy of l03"
    shutil.copytree(L03, project)
    shutil.rmtree(project / "outputs")   # every output must be made again, not left in place
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _environment(tmp_path)
    where = _run([venv / "bin" / "python", "-c", "import generator, generator.project as p; "
                  "print(generator.__file__); print(p.default_templates_dir())"], cwd=elsewhere, env=env)
    package, templates = where.stdout.split()
    assert Path(package).is_relative_to(venv) and Path(templates) == Path(package).parent / "templates"
    built = _run([venv / "bin" / "readout", "build", project], cwd=elsewhere, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    committed = sorted(path.relative_to(L03 / "outputs") for path in (L03 / "outputs").rglob("*") if path.is_file())
    rebuilt = sorted(path.relative_to(project / "outputs") for path in (project / "outputs").rglob("*")
                     if path.is_file())
    assert rebuilt == committed
    for name in committed:
        # A report reads no git: outside the repository it is the same, byte for byte.
        assert (project / "outputs" / name).read_bytes() == (L03 / "outputs" / name).read_bytes(), name
    checked = _run([venv / "bin" / "readout", "render", "--check", project], cwd=elsewhere, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert list(elsewhere.iterdir()) == []


@pytest.mark.model
def test_the_installed_wheel_inits_builds_and_renders_a_new_project(venv, tmp_path, make_small_dataset):
    env = _environment(tmp_path)
    readout = venv / "bin" / "readout"
    assert _run([readout, "init", "--help"], cwd=tmp_path, env=env).returncode == 0
    assert "--draft" in _run([readout, "build", "--help"], cwd=tmp_path, env=env).stdout
    data = make_small_dataset(tmp_path / "beir")
    made = _run([readout, "init", "new", "--data", data], cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stdout + made.stderr
    built = _run([readout, "build", "new", "--draft"], cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    for name in REPORTS:
        assert "UNTRACEABLE" in (tmp_path / "new" / "outputs" / name).read_text(encoding="utf-8")
    rendered = _run([readout, "render", "new", "--draft"], cwd=tmp_path, env=env)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    assert _run([readout, "check", "new", "--no-record"], cwd=tmp_path, env=env).returncode == 1
