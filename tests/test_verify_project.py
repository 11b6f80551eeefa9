"""`--verify` on a project laid out like a real package: src/ layout, a cache class in one module,
a module that splits a batch and caches the pieces through it, a `python -m` entry point, and a
pytest suite. The project is written to a temporary folder by the test itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import OPT_IN_RULES, run_viewlint

pytest.importorskip("torch")

PYPROJECT = '''\
[project]
name = "embedserve"
version = "0.1.0"
dependencies = ["torch"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

CACHE = '''\
"""A byte-budgeted LRU cache of embeddings, shared by the whole server."""

from collections import OrderedDict
from typing import Optional

import torch


class EmbeddingCache:
    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self.entries: OrderedDict[int, torch.Tensor] = OrderedDict()

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: int) -> Optional[torch.Tensor]:
        return self.entries.get(key)

    def put(self, key: int, embedding: torch.Tensor) -> None:
        self.entries[key] = embedding
        self.entries.move_to_end(key)
        while len(self.entries) > 1 and sum(e.numel() * e.element_size() for e in self.entries.values()) > self.budget_bytes:
            self.entries.popitem(last=False)
'''

ENCODER = '''\
"""Encode a batch of images once, then cache each image's embedding under its hash."""

import torch

from embedserve.cache import EmbeddingCache


def cache_encoder_outputs(batch: torch.Tensor, token_counts: list[int], hashes: list[int],
                          cache: EmbeddingCache) -> None:
    pieces = torch.split(batch, token_counts)
    for mm_hash, piece in zip(hashes, pieces):
        cache.put(mm_hash, piece)
'''
ENCODER_ROW = 12  # `cache.put(mm_hash, piece)`

WARMUP = '''\
"""Warm the cache before serving: `python -m embedserve.warmup`."""

import json
from pathlib import Path

import torch

from .cache import EmbeddingCache
from .encoder import cache_encoder_outputs

_PREVIEWS: dict[str, torch.Tensor] = {}


def remember_preview(name: str, batch: torch.Tensor) -> None:
    _PREVIEWS[name] = batch[:1]


def main() -> None:
    cache = EmbeddingCache(budget_bytes=1 << 30)
    batch = torch.randn(1000, 4096, dtype=torch.bfloat16)
    cache_encoder_outputs(batch, [100] * 10, list(range(10)), cache)
    remember_preview("warmup", batch)
    Path("warmup-report.json").write_text(json.dumps({"cached": len(cache)}))


if __name__ == "__main__":
    main()
'''
WARMUP_ROW = 15  # `_PREVIEWS[name] = batch[:1]`

TEST = '''\
import torch

from embedserve.cache import EmbeddingCache
from embedserve.encoder import cache_encoder_outputs


def test_every_item_is_cached() -> None:
    cache = EmbeddingCache(budget_bytes=64 << 20)
    batch = torch.randn(1000, 4096, dtype=torch.bfloat16)
    cache_encoder_outputs(batch, [100] * 10, list(range(10)), cache)
    assert len(cache) == 10
    assert cache.get(3).shape == (100, 4096)
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "embedserve"
    files = {
        "pyproject.toml": PYPROJECT,
        "src/embedserve/__init__.py": '"""Serve multimodal embeddings."""\n',
        "src/embedserve/cache.py": CACHE,
        "src/embedserve/encoder.py": ENCODER,
        "src/embedserve/warmup.py": WARMUP,
        "tests/test_encoder.py": TEST,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (bytecode caches included) and its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def verdicts(stdout: str) -> dict[tuple[str, int], dict]:
    return {(Path(f["filename"]).name, f["location"]["row"]): f["verdict"] for f in json.loads(stdout)}


def viewlint(project: Path, *args: str) -> tuple[int, dict[tuple[str, int], dict], str]:
    completed = run_viewlint(*args, "--isolated", "--extend-select", ",".join(OPT_IN_RULES), "--no-cache", "--device", "cpu", "--output-format", "json", "src/",
                             cwd=project)
    return completed.returncode, verdicts(completed.stdout), completed.stderr


def test_the_lint_finds_the_split_pieces_and_the_preview(project: Path) -> None:
    completed = run_viewlint("check", "--isolated", "--extend-select", ",".join(OPT_IN_RULES), "--no-cache", "--output-format", "json", "src/", cwd=project)
    found = {(Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in json.loads(completed.stdout)}
    assert found == {("encoder.py", ENCODER_ROW, "VL101"), ("warmup.py", WARMUP_ROW, "VL101")}


def test_verify_run_pytest_confirms_the_cached_pieces_with_the_pinned_bytes(project: Path) -> None:
    code, found, stderr = viewlint(project, "verify", "--run", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    assert code == 1, stderr
    assert "1 passed" in stderr and "exited with status 0" in stderr
    encoder = found[("encoder.py", ENCODER_ROW)]
    assert encoder["status"] == "confirmed"
    assert encoder["evidence"] == "pins 7.81 MiB for a 0.78 MiB payload (10.0x) in 10/10 stores"
    warmup = found[("warmup.py", WARMUP_ROW)]
    assert (warmup["status"], warmup["evidence"]) == ("not reached", "the command never imported or ran src/embedserve/warmup.py")


def test_verify_run_python_m_confirms_the_entry_point_and_what_it_imports(project: Path) -> None:
    code, found, stderr = viewlint(project, "verify", "--run", f"{sys.executable} -m embedserve.warmup")
    assert code == 1 and "exited with status 0" in stderr, stderr
    assert found[("warmup.py", WARMUP_ROW)]["evidence"] == "pins 7.81 MiB for a 8.00 KiB payload (1000.0x)"
    assert found[("encoder.py", ENCODER_ROW)]["evidence"] == "pins 7.81 MiB for a 0.78 MiB payload (10.0x) in 10/10 stores"
    assert (project / "warmup-report.json").exists()  # the user's own command runs where the user is


def test_check_verify_runs_the_entry_point_as_a_package_module_and_says_how_to_verify_the_rest(project: Path) -> None:
    before = snapshot(project)
    code, found, stderr = viewlint(project, "check", "--verify")
    assert code == 1, stderr
    # Relative imports work: warmup.py runs as `python -m embedserve.warmup` from src/.
    assert found[("warmup.py", WARMUP_ROW)]["status"] == "confirmed"
    assert found[("encoder.py", ENCODER_ROW)] == {
        "status": "not reached",
        "evidence": 'nothing runs this code; verify through your tests with verify --run "pytest …"',
        "device": "cpu", "hits": 0}
    assert snapshot(project) == before, "check --verify wrote into the project (report, bytecode)"


def test_check_verify_runs_in_the_folder_it_is_told(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "run-here"
    elsewhere.mkdir()
    code, found, stderr = viewlint(project, "check", "--verify", "--verify-cwd", str(elsewhere))
    assert found[("warmup.py", WARMUP_ROW)]["status"] == "confirmed", stderr
    assert json.loads((elsewhere / "warmup-report.json").read_text()) == {"cached": 10}
    assert not (project / "warmup-report.json").exists()


def test_check_verify_imports_from_the_root_it_is_given(project: Path, tmp_path: Path) -> None:
    """A layout viewlint cannot read (code under lib/, no project file): --verify-root names the import root."""
    moved = tmp_path / "moved"
    (moved / "lib").mkdir(parents=True)
    (project / "src" / "embedserve").rename(moved / "lib" / "embedserve")
    (moved / "lib" / "embedserve" / "__init__.py").unlink()  # a namespace package: no __init__.py chain to follow
    completed = run_viewlint("check", "--isolated", "--extend-select", ",".join(OPT_IN_RULES), "--no-cache", "--device", "cpu", "--output-format", "json",
                             "--verify", "--verify-root", "lib", "lib/", cwd=moved)
    assert verdicts(completed.stdout)[("warmup.py", WARMUP_ROW)]["status"] == "confirmed", completed.stderr
    guessed = run_viewlint("check", "--isolated", "--extend-select", ",".join(OPT_IN_RULES), "--no-cache", "--device", "cpu", "--output-format", "json",
                           "--verify", "lib/", cwd=moved)
    failed = verdicts(guessed.stdout)[("warmup.py", WARMUP_ROW)]
    assert failed["status"] == "error" and "ImportError: attempted relative import" in failed["evidence"]


SERVE = '''\
"""Start serving after a warm-up in a fresh interpreter: `python -m embedserve.serve`."""

import subprocess
import sys

import torch

_LAST: dict[str, torch.Tensor] = {}

if __name__ == "__main__":
    subprocess.run([sys.executable, "-m", "embedserve.warmup"], check=True)
    batch = torch.randn(8, 16)
    _LAST["batch"] = batch[:1]
'''


def test_check_verify_gives_the_processes_a_file_starts_the_import_root(project: Path) -> None:
    """The entry point starts `python -m embedserve.warmup`: that process finds the package through PYTHONPATH."""
    (project / "src" / "embedserve" / "serve.py").write_text(SERVE, encoding="utf-8")
    code, found, stderr = viewlint(project, "check", "--verify")
    assert found[("serve.py", 13)]["status"] == "confirmed", stderr


def test_a_library_module_that_cannot_be_imported_here_is_not_reached_not_an_error(project: Path) -> None:
    """Missing dependencies of library code (sglang's kernels, say) are for its tests to meet."""
    encoder = project / "src" / "embedserve" / "encoder.py"
    encoder.write_text("import embedserve_kernels  # noqa: F401\n" + ENCODER, encoding="utf-8")
    code, found, stderr = viewlint(project, "check", "--verify")
    verdict = found[("encoder.py", ENCODER_ROW + 1)]
    assert verdict["status"] == "not reached", stderr
    assert verdict["evidence"] == ('nothing runs this code; verify through your tests with verify --run "pytest …" '
                                   "(importing it raised ModuleNotFoundError: No module named 'embedserve_kernels' (line 1))")


# ---------------------------------------------------------------------------------------------- layout
def write(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("", encoding="utf-8")


def target(path: Path, roots: tuple[str, ...] = ()) -> tuple[str, object]:
    from viewlint.verify.layout import import_target

    found = import_target(str(path), roots)
    return found.root, found.module


def test_an_init_chain_gives_the_package_name_and_its_parent_the_import_root(tmp_path: Path) -> None:
    write(tmp_path, "repo/timm/__init__.py", "repo/timm/layers/__init__.py", "repo/timm/layers/attention.py",
          "repo/pyproject.toml")
    repo = tmp_path / "repo"
    assert target(repo / "timm/layers/attention.py") == (str(repo), "timm.layers.attention")
    assert target(repo / "timm/layers/__init__.py") == (str(repo), "timm.layers")


def test_src_layout_and_namespace_packages_import_from_src(tmp_path: Path) -> None:
    write(tmp_path, "repo/setup.cfg", "repo/src/acme/serving/__init__.py", "repo/src/acme/serving/cache.py")
    src = tmp_path / "repo" / "src"
    # `acme` has no __init__.py: a namespace package, imported from src/.
    assert target(src / "acme/serving/cache.py") == (str(src), "acme.serving.cache")


def test_package_dir_in_pyproject_or_setup_cfg_names_the_source_root(tmp_path: Path) -> None:
    write(tmp_path, "a/lib/acme/mod.py", "b/python/acme/mod.py", "b/setup.py")
    (tmp_path / "a/pyproject.toml").write_text('[tool.setuptools.package-dir]\n"" = "lib"\n', encoding="utf-8")
    (tmp_path / "b/setup.cfg").write_text("[options]\npackage_dir =\n    =python\n", encoding="utf-8")
    assert target(tmp_path / "a/lib/acme/mod.py") == (str(tmp_path / "a/lib"), "acme.mod")
    assert target(tmp_path / "b/python/acme/mod.py") == (str(tmp_path / "b/python"), "acme.mod")


def test_a_loose_script_runs_from_its_folder_unless_a_root_is_given(tmp_path: Path) -> None:
    write(tmp_path, "repo/pyproject.toml", "repo/scripts/train.py", "repo/my-tools/run.py")
    repo = tmp_path / "repo"
    assert target(repo / "scripts/train.py") == (str(repo / "scripts"), None)
    assert target(repo / "scripts/train.py", (str(repo),)) == (str(repo), "scripts.train")
    assert target(repo / "my-tools/run.py", (str(repo),)) == (str(repo / "my-tools"), None)  # not a module name


@pytest.mark.parametrize("source, runs", [
    ('"""Doc."""\nimport torch\nX = 1\ndef f():\n    pass\nclass C:\n    pass\n', False),
    ("try:\n    import numpy\nexcept ImportError:\n    numpy = None\nif numpy:\n    Y = 2\n", False),
    ('def main():\n    pass\nif __name__ == "__main__":\n    main()\n', True),
    ("if '__main__' == __name__:\n    pass\n", True),
    ("import torch\ntorch.manual_seed(0)\n", True),
    ("for i in range(3):\n    pass\n", True),
    ("raise SystemExit(2)\n", True),
])
def test_runs_anything_tells_library_code_from_scripts(source: str, runs: bool) -> None:
    from viewlint.verify.layout import runs_anything

    assert runs_anything(source) is runs


def test_verify_run_says_when_the_command_imports_another_copy_of_a_flagged_module(project: Path, tmp_path: Path) -> None:
    """An installed (non-editable) copy shadows the source: the verdict says which file ran instead."""
    installed = tmp_path / "site-packages"
    installed.mkdir()
    (installed / "embedserve").mkdir()
    for module in ("__init__.py", "cache.py", "encoder.py"):
        (installed / "embedserve" / module).write_bytes((project / "src" / "embedserve" / module).read_bytes())
    completed = run_viewlint("verify", "--isolated", "--extend-select", ",".join(OPT_IN_RULES), "--no-cache", "--device", "cpu", "--output-format", "json",
                             "--run", f"{sys.executable} -m pytest -q -p no:cacheprovider", "src/",
                             cwd=project, env={"PYTHONPATH": str(installed)})
    verdict = verdicts(completed.stdout)[("encoder.py", ENCODER_ROW)]
    assert verdict["status"] == "not reached", completed.stderr
    assert verdict["evidence"] == (f"the command imported embedserve.encoder from {installed / 'embedserve' / 'encoder.py'}, "
                                   "not from src/embedserve/encoder.py")
