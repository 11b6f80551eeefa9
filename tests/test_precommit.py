"""The pre-commit hooks, through the real `pre-commit try-repo` against a throwaway git repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT
from project_copy import commit_all, copy_project
from readme_blocks import checked_block

pytest.importorskip("pre_commit")
if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)

CLEAN = "import torch\n\n\ndef f(buf: torch.Tensor, value: torch.Tensor) -> None:\n    buf[1:3].copy_(value)\n"


def test_hook_manifest_matches_what_users_are_told() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    lint = hooks["viewlint"]
    assert lint["entry"] == "viewlint check --force-exclude"
    assert lint["language"] == "python"
    assert lint["types_or"] == ["python", "pyi", "jupyter"]  # notebooks are linted too
    assert lint["require_serial"] is True
    verify = hooks["viewlint-verify"]
    assert verify["entry"] == "viewlint check --verify"
    assert verify["stages"] == ["manual"]
    assert verify["language"] == "python"
    assert verify.get("pass_filenames", True) is True


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed snapshot of this project (pre-commit installs hooks from a commit)."""
    repository = copy_project(tmp_path_factory.mktemp("hooks") / "viewlint")
    commit_all(repository)
    return repository


@pytest.fixture(scope="module")
def user_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository with one file that has findings and one that has none."""
    repository = tmp_path_factory.mktemp("user") / "project"
    repository.mkdir()
    shutil.copy(FIXTURES / "VL201" / "positive_inplace_on_gather.py", repository / "bad.py")
    (repository / "clean.py").write_text(CLEAN)
    commit_all(repository)
    return repository


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(hook_repository: Path, user_repository: Path, home: Path, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIEWLINT_OUTPUT_FORMAT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repository), "viewlint", "--files", *files],
        cwd=user_repository, env=env, capture_output=True, text=True, timeout=900,
    )


def test_try_repo_fails_on_a_finding_and_passes_on_a_clean_file(hook_repository: Path, user_repository: Path, pre_commit_home: Path) -> None:
    bad = try_repo(hook_repository, user_repository, pre_commit_home, "bad.py", "clean.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "bad.py:8:5: VL201" in bad.stdout
    assert "clean.py:" not in bad.stdout
    clean = try_repo(hook_repository, user_repository, pre_commit_home, "clean.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout


def test_readme_snippet_runs_once_repo_and_rev_are_filled_in(hook_repository: Path, user_repository: Path,
                                                             pre_commit_home: Path, tmp_path: Path) -> None:
    config = yaml.safe_load(checked_block("pre-commit"))
    (entry,) = config["repos"]
    manifest = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    hooks = {hook["id"]: hook for hook in entry["hooks"]}
    assert set(hooks) == manifest
    # --verify runs the code, so its hook environment needs torch: the manifest's default gives the
    # CPU build (tests/test_install_commands.py), which the snippet keeps by not overriding it.
    assert "additional_dependencies" not in hooks["viewlint-verify"]
    manifest_hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert manifest_hooks["viewlint-verify"]["additional_dependencies"][-1] == "torch"
    # No release is tagged: the README asks for a commit.
    assert re.fullmatch(r"[0-9a-f]{40}", str(entry["rev"]))

    entry["repo"] = str(hook_repository)
    entry["rev"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repository, capture_output=True, text=True,
                                  check=True).stdout.strip()
    path = tmp_path / "pre-commit-config.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIEWLINT_OUTPUT_FORMAT", None)

    def pre_commit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=user_repository, env=env,
                              capture_output=True, text=True, timeout=900)

    valid = pre_commit("validate-config", str(path))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    run = pre_commit("run", "viewlint", "--config", str(path), "--files", "bad.py", "clean.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "bad.py:8:5: VL201" in run.stdout
