"""viewlint works from a built wheel in a fresh venv, and the static path never imports torch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from project_copy import copy_project

FIXTURE = FIXTURES / "VL201" / "positive_inplace_on_gather.py"


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIEWLINT_OUTPUT_FORMAT", None)
    env.pop("PYTHONPATH", None)
    return subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the working tree (the checkout itself is left untouched)."""
    work = tmp_path_factory.mktemp("wheel")
    source = copy_project(work / "source")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(work / "dist"), str(source)])
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (work / "dist").glob("viewlint-*.whl")
    return found


def test_wheel_ships_the_rules_inside_the_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    rule_modules = sorted(name for name in names if name.startswith("viewlint/rules/vl") and name.endswith(".py"))
    shipped = sorted(f"viewlint/rules/{path.name}" for path in (ROOT / "rules").glob("vl*.py"))
    assert rule_modules == shipped
    assert "viewlint/flake8_plugin.py" in names
    assert not any(name.startswith("rules/") for name in names), "rules must not be a top-level package"
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "viewlint = viewlint.cli:main" in text
    assert "VL = viewlint.flake8_plugin:ViewlintChecker" in text


@pytest.fixture(scope="module")
def installed_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (not editable), and its dependencies."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    created = _run([sys.executable, "-m", "venv", str(venv)])
    assert created.returncode == 0, created.stderr
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    installed = _run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)])
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return venv


def test_installed_wheel_lints_a_fixture_in_a_fresh_venv(installed_venv: Path, tmp_path: Path) -> None:
    venv = installed_venv
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    # Run outside the checkout so nothing can be imported from the source tree.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = outside / FIXTURE.name
    target.write_bytes(FIXTURE.read_bytes())
    result = _run([str(bin_dir / "viewlint"), "--no-cache", "--isolated", target.name], cwd=outside)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{target.name}:8:5: VL201" in result.stdout
    where = _run([str(bin_dir / "python"), "-c", "import viewlint.rules, viewlint.registry as r; print(viewlint.rules.__file__); print(sorted(r.all_rules()))"], cwd=outside)
    assert where.returncode == 0, where.stderr
    location, codes = where.stdout.splitlines()
    assert Path(location).is_relative_to(venv), location
    assert "VL201" in codes
    module = _run([str(bin_dir / "python"), "-m", "viewlint", "rule", "VL201"], cwd=outside)
    assert module.returncode == 0 and module.stdout.startswith("# inplace-on-advanced-index (VL201)")


def test_a_source_tree_run_from_its_root_finds_its_rules_ahead_of_the_installed_copy(installed_venv: Path, wheel: Path) -> None:
    """From an unpacked sdist's root, `python -m viewlint` (as the tests run it) imports the source
    folder `viewlint/`, not the installed package; its rules are the `rules/` folder beside it."""
    source = wheel.parent.parent / "source"  # the copy the wheel was built from: the sdist's layout
    assert not (source / "viewlint" / "rules").exists() and (source / "rules" / "__init__.py").is_file()
    python = str(installed_venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    where = _run([python, "-c", "import viewlint.rules as r; print(r.__file__)"], cwd=source)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == source / "rules" / "__init__.py"
    result = _run([python, "-m", "viewlint", "--no-cache", "--isolated", f"fixtures/VL201/{FIXTURE.name}"], cwd=source)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"fixtures/VL201/{FIXTURE.name}:8:5: VL201" in result.stdout


def test_the_static_path_never_imports_torch(tmp_path: Path) -> None:
    """A whole lint (CLI, config, every rule, every output format) leaves torch unimported."""
    script = (
        "import sys\n"
        "from viewlint.cli import run_check\n"
        f"assert run_check(({str(FIXTURES)!r},), select=('ALL',), no_cache=True, jobs=1, quiet=True, output_file={str(tmp_path / 'all')!r}) == 1\n"
        "for fmt in ('full', 'json', 'json-lines', 'sarif', 'github', 'pylint', 'junit'):\n"
        f"    code = run_check(({str(FIXTURE)!r},), select=('ALL',), output_format=fmt, no_cache=True, jobs=1, quiet=True, output_file={str(tmp_path / 'out')!r})\n"
        "    assert code == 1, code\n"
        "print('torch' in sys.modules)\n"
    )
    result = _run([sys.executable, "-c", script], cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_wheel_ships_the_language_server_its_extra_and_the_license(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert {"viewlint/server.py", "viewlint/lsp/documents.py", "viewlint/lsp/positions.py"} <= set(names)
    metadata = archive.read(next(name for name in names if name.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: server" in metadata
    assert 'Requires-Dist: pygls<3,>=2; extra == "server"' in metadata
    assert "License-Expression: MIT" in metadata
    assert "License-File: LICENSE" in metadata
    assert "Project-URL" not in metadata  # no address we know to exist
    license_text = archive.read(next(name for name in names if name.endswith(".dist-info/licenses/LICENSE"))).decode()
    assert license_text.startswith("MIT License\n\nCopyright (c) the viewlint developers\n")


def test_wheel_metadata_names_authors_pythons_and_license(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    metadata = archive.read(next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))).decode()
    headers = [line for line in metadata.split("\n\n", 1)[0].splitlines()]
    classifiers = {line.split(": ", 1)[1] for line in headers if line.startswith("Classifier: ")}
    # Every Python CI tests (3.9-3.13), and nothing else.
    versions = sorted(c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert versions == ["3.10", "3.11", "3.12", "3.13", "3.9"]
    assert "Requires-Python: >=3.9" in headers
    assert "Author: the viewlint developers" in headers
    assert "License-Expression: MIT" in headers
    assert any(line.startswith("Keywords: ") and "pytorch" in line for line in headers)
    assert "Development Status :: 3 - Alpha" in classifiers


def _setuptools_for_the_backend() -> bool:
    """Whether this interpreter can run the build backend itself (then the build needs no index)."""
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


def test_sdist_carries_its_tests_and_they_collect_when_unpacked(tmp_path: Path) -> None:
    source = copy_project(tmp_path / "source")
    isolation = ["--no-isolation"] if _setuptools_for_the_backend() else []
    built = _run([sys.executable, "-m", "build", "--sdist", *isolation, "--outdir", str(tmp_path / "dist"), str(source)])
    assert built.returncode == 0, built.stdout + built.stderr
    (sdist,) = (tmp_path / "dist").glob("viewlint-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        archive.extractall(tmp_path / "unpacked")
    shipped = {str(path.relative_to(source)) for path in source.rglob("*")
               if path.is_file() and path.parts[len(source.parts)] in ("tests", "fixtures") and "__pycache__" not in path.parts}
    assert shipped <= names, sorted(shipped - names)
    assert {"LICENSE", "tests/conftest.py", ".pre-commit-hooks.yaml", "docs/rules.md"} <= names

    unpacked = tmp_path / "unpacked" / top
    collected = _run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=unpacked)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert "error" not in collected.stdout.splitlines()[-1], collected.stdout[-3000:]
    modules = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
    assert {"tests/test_readme.py", "tests/test_server.py", "tests/test_fixtures.py"} <= modules
