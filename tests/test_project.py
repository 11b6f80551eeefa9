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


def test_a_linted_module_serves_the_files_that_import_it_without_a_second_read(tmp_path, monkeypatch):
    import viewlint.analysis.project as project

    user = _project(tmp_path, KEEPS)
    read = []
    original = project.build_index_from_ast
    monkeypatch.setattr(project, "build_index_from_ast", lambda tree, text: read.append(text) or original(tree, text))
    settings = Settings(select=("VL1",))
    results = run([SourceFile(user.parent / "cache.py", settings), SourceFile(user, settings)], jobs=1,
                  cache_directory=None)
    assert [(d.start.row, d.code) for r in results for d in r.diagnostics] == [(13, "VL101")]
    assert read == []  # `pkg/cache.py` was indexed once, as the linted file


def test_an_editors_unsaved_text_is_not_taken_for_the_module_on_disk(tmp_path):
    from viewlint.analysis.project import _read_index
    from viewlint.engine import lint_text

    user = _project(tmp_path, CLONES)
    cache_module = user.parent / "cache.py"
    unsaved = textwrap.dedent(CACHE_MODULE.replace("{body}", KEEPS)).replace("EmbeddingCache", "RenamedCache")
    assert len(unsaved) < cache_module.stat().st_size
    lint_text(unsaved, str(cache_module), Settings(select=("VL1",)))
    digest, index = _read_index(str(cache_module))
    assert index is not None and "EmbeddingCache" in index.classes and "RenamedCache" not in index.classes
    assert _codes(user) == []  # the file on disk clones what it keeps; the buffer does not
