"""Classes imported from other modules of the same project: what their methods keep is read from their module."""

from __future__ import annotations

import textwrap
from pathlib import Path

from viewlint.engine import run
from viewlint.files import SourceFile
from viewlint.settings import Settings

CACHE_MODULE = """
    import torch
    from dataclasses import dataclass, replace


    @dataclass
    class Entry:
        embedding: torch.Tensor


    class EmbeddingCache:
        def __init__(self) -> None:
            self.entries = {}

        def set(self, key: int, entry: Entry) -> None:
            {body}
            self.entries[key] = entry
"""

USER_MODULE = """
    from typing import Optional

    import torch

    from pkg.cache import EmbeddingCache, Entry

    embedding_cache: Optional[EmbeddingCache] = None


    def admit(batch: torch.Tensor, counts: list[int], keys: list[int]) -> None:
        for key, piece in zip(keys, torch.split(batch, counts)):
            embedding_cache.set(key, Entry(embedding=piece))
"""

KEEPS = "pass"
CLONES = ("tensor = entry.embedding\n"
          "            if tensor.untyped_storage().nbytes() > tensor.numel() * tensor.element_size():\n"
          "                entry = replace(entry, embedding=tensor.clone())")


def _project(tmp_path: Path, body: str) -> Path:
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "cache.py").write_text(textwrap.dedent(CACHE_MODULE.replace("{body}", body)))
    user = package / "mm.py"
    user.write_text(textwrap.dedent(USER_MODULE))
    return user


def _codes(path: Path, cache: Path | None = None) -> list[tuple[int, str]]:
    settings = Settings(select=("VL1",))
    results = run([SourceFile(path, settings)], jobs=1, cache_directory=cache)
    return [(d.start.row, d.code) for r in results for d in r.diagnostics]


def test_a_cache_imported_from_the_project_that_keeps_its_argument_is_a_store(tmp_path):
    assert _codes(_project(tmp_path, KEEPS)) == [(13, "VL101")]


def test_a_cache_that_clones_what_it_admits_is_clean(tmp_path):
    # The SGLang shape after PR #39120: `set` clones an entry whose storage is larger than its payload.
    assert _codes(_project(tmp_path, CLONES)) == []


def test_a_cached_result_is_recomputed_when_the_imported_module_changes(tmp_path):
    cache = tmp_path / "cache"
    user = _project(tmp_path, CLONES)
    assert _codes(user, cache) == []
    _project(tmp_path, KEEPS)  # the user module is byte-identical; the cache module is not
    assert _codes(user, cache) == [(13, "VL101")]


def _forget_other_modules() -> None:
    from viewlint.analysis import project

    project._INDEXES.clear()
    project._PATHS.clear()
    project._WHOLE.clear()


UTIL_MODULE = """
    import torch


    def last_rows(h: torch.Tensor, n: int) -> torch.Tensor:
        return h[-n:]
"""

CALLER_MODULE = """
    import torch

    from pkg.util import last_rows


    class Head(torch.nn.Module):
        def forward(self, h):
            x = last_rows(h, 2)
            return x.sum().item()
"""


def test_a_linted_module_serves_the_files_linted_after_it_with_the_index_a_read_would_build(tmp_path):
    from viewlint.analysis import project
    from viewlint.engine import lint_path

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    util, caller = package / "util.py", package / "head.py"
    util.write_text(textwrap.dedent(UTIL_MODULE))
    caller.write_text(textwrap.dedent(CALLER_MODULE))
    util_path = str(util.resolve())
    settings = Settings(select=("VL4",))
    _forget_other_modules()
    alone = [(d.start.row, d.code) for d in lint_path(caller, str(caller), settings).diagnostics]
    assert alone == [(10, "VL401")]  # `last_rows` returns a tensor, as its module says

    _forget_other_modules()
    lint_path(util, util_path, settings)  # linted first, as a run over the package does
    kept = project._INDEXES[util_path]
    reads = []
    parse = project.ast.parse
    project.ast.parse = lambda source, *a, **k: reads.append(
        "last_rows" in (source.decode() if isinstance(source, bytes) else source)) or parse(source, *a, **k)
    try:
        after = [(d.start.row, d.code) for d in lint_path(caller, str(caller), settings).diagnostics]
    finally:
        project.ast.parse = parse
    assert after == alone
    assert reads.count(True) == 1  # the caller's own parse only: `util.py` was not read again
    _forget_other_modules()
    digest, read = project._read_index(util_path)
    assert (digest, read) == kept[1:]  # the same digest and the same index as reading the file builds
    assert read.function_names == {"last_rows"}
    _forget_other_modules()


def test_a_text_that_is_not_the_file_on_disk_is_not_kept_for_it(tmp_path):
    from viewlint.analysis import project
    from viewlint.engine import lint_text

    user = _project(tmp_path, KEEPS)
    cache_module = str((user.parent / "cache.py").resolve())
    _forget_other_modules()
    edited = (user.parent / "cache.py").read_text() + "\n\nclass Unsaved:\n    pass\n"  # an editor's unsaved buffer
    lint_text(edited, cache_module, Settings(select=("VL1",)))
    assert cache_module not in project._INDEXES
    _forget_other_modules()
