"""viewlint works from a built wheel in a fresh venv, and the static path never imports torch."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_installed_wheel_lints_a_fixture_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    created = _run([sys.executable, "-m", "venv", str(venv)])
    assert created.returncode == 0, created.stderr
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    installed = _run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)])
    assert installed.returncode == 0, installed.stdout + installed.stderr
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
