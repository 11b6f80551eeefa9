"""The README's install commands, the `verify` extra and the pre-commit verify hook give torch's
CPU build, never CUDA's, on a plain machine.

A plain machine is modelled with two local package indexes that pip reads as it reads the real
ones: a PyPI whose torch 2.13.0 needs an `nvidia-*` package (as PyPI's Linux wheel does) and
PyTorch's CPU index with `torch 2.13.0+cpu`. Each command is run with `pip install --dry-run
--report`, its download.pytorch.org URL pointed at the local CPU index, and this machine's pip
configuration switched off, and what pip would install is read from the report.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from readme_blocks import checked_block

CPU_INDEX = "https://download.pytorch.org/whl/cpu"

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def _wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    """A minimal pure-Python wheel of ``name`` ``version`` in ``folder/<name>/`` (a simple index's layout)."""
    project = folder / name
    project.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = "".join([f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                        *(f"Requires-Dist: {requirement}\n" for requirement in requires)])
    with zipfile.ZipFile(project / f"{dist}-{version}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{dist}/__init__.py", "")
        archive.writestr(f"{info}/METADATA", metadata)
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: viewlint-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", f"{dist}/__init__.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    # pip reads a file: index as it reads a served one: each project's page lists its files (PEP 503).
    links = "".join(f'<a href="{wheel.name}">{wheel.name}</a>\n' for wheel in sorted(project.glob("*.whl")))
    (project / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n")


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(PyPI, the CPU index), as local simple indexes."""
    root = tmp_path_factory.mktemp("indexes")
    pypi, cpu = root / "pypi", root / "cpu"
    _wheel(pypi, "torch", "2.13.0", ("nvidia-cublas-cu12",))
    _wheel(pypi, "nvidia-cublas-cu12", "12.8.4.1")
    _wheel(cpu, "torch", "2.13.0+cpu")
    return pypi, cpu


def would_install(pip_arguments: list[str], indexes: tuple[Path, Path], tmp_path: Path) -> dict[str, str]:
    """name -> version that `pip install ARGUMENTS` would install on the plain machine."""
    pypi, cpu = indexes
    arguments = [argument.replace(CPU_INDEX, cpu.as_uri()) for argument in pip_arguments]
    assert arguments[:1] == ["install"], pip_arguments
    env = {name: value for name, value in os.environ.items() if not name.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip.conf: no local mirrors, find-links or constraints
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "pip", *arguments, "--index-url", pypi.as_uri(), "--dry-run", "--ignore-installed",
         "--no-cache-dir", "--disable-pip-version-check", "--quiet", "--report", str(report)],
        env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())["install"]}


def _pip_install_of_torch(command: str) -> list[str]:
    """The `pip install torch…` step of a shell command line, as pip's arguments."""
    (step,) = [part.strip() for part in command.split("&&") if part.strip().startswith("pip install torch")]
    return shlex.split(step)[1:]


def test_the_model_of_a_plain_machine_pulls_cuda_without_the_cpu_index(indexes: tuple[Path, Path], tmp_path: Path) -> None:
    """What the README used to say, `pip install torch==2.13.0`, brings an nvidia package."""
    assert would_install(["install", "torch==2.13.0"], indexes, tmp_path) == {"torch": "2.13.0", "nvidia-cublas-cu12": "12.8.4.1"}


def test_the_readme_test_command_installs_the_cpu_build(indexes: tuple[Path, Path], tmp_path: Path) -> None:
    arguments = _pip_install_of_torch(checked_block("setup-test"))
    assert would_install(arguments, indexes, tmp_path) == {"torch": "2.13.0+cpu"}


def test_the_verify_install_line_installs_the_cpu_build(indexes: tuple[Path, Path], tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [line for line in readme.splitlines() if "viewlint[verify]" in line and CPU_INDEX in line]
    command = line[line.index("`pip install") + 1:line.rindex("`")]
    arguments = [argument for argument in shlex.split(command)[1:] if "viewlint" not in argument]
    assert would_install(arguments, indexes, tmp_path) == {"torch": "2.13.0+cpu"}


def test_the_verify_hook_installs_the_cpu_build(indexes: tuple[Path, Path], tmp_path: Path) -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    dependencies = hooks["viewlint-verify"]["additional_dependencies"]
    # pre-commit runs `pip install . <additional_dependencies>`; `.` (viewlint) is left out here.
    assert would_install(["install", *dependencies], indexes, tmp_path) == {"torch": "2.13.0+cpu"}


def test_no_extra_pulls_torch_but_the_test_one() -> None:
    """`pip install "viewlint[verify]"` alone must not pick a torch build (on Linux, CUDA's)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, requirements in extras.items():
        pulls_torch = any(requirement.split(">")[0].split("=")[0].split("<")[0].strip() == "torch" for requirement in requirements)
        # The test extra keeps torch for the suite: the README's command installs the CPU build before it.
        assert pulls_torch == (extra == "test"), extra
