"""Other modules of the same project, read on demand to follow a class imported from one.

`from pkg.cache import MultiModalStaticCache` and `cache.set(key, piece)`: whether `set` keeps
`piece` (or clones it first) is written in `pkg/cache.py`. When a rule needs what a method of
an imported class does, the module that defines it is found next to the linted file (up its
package directories), parsed with `ast` alone (once per process) and indexed like the linted
module. Each module read this way is a dependency of the linted file's result: the cache
keeps its path and hash and recomputes the result when it changes.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

import libcst as cst

from viewlint.analysis.annotations import annotation_value
from viewlint.analysis.module_index import ClassInfo, ModuleIndex, build_index_from_ast
from viewlint.analysis.values import Value
from viewlint.newer_syntax import parse_source

T = TypeVar("T")
# What a function of another module returns on one walk of its own there (its file, its class or None, its name),
# and the files that answer depends on: `elsewhere.walker`, handed to the project by whoever builds it (the project
# module cannot import the summaries that walk).
Walk = Callable[[str, Optional[str], str], "tuple[Optional[Value], dict[str, str]]"]
# Top-level packages that are never a module of the project being linted.
_NOT_PROJECT = frozenset({"torch", "numpy", "typing", "collections", "dataclasses", "queue"})

# Modules larger than this are not read for a dependency (generated code).
MAX_DEPENDENCY_BYTES = 2 * 1024 * 1024
# How many other modules one process keeps indexed (without their `ast`, an index takes about as much memory as
# its module's text: 1,024 of SGLang's take about 13 MiB).
_CACHE_SIZE = 1024
_INDEXES: dict[str, tuple[tuple[int, int], str, Optional[ModuleIndex]]] = {}
_PATHS: dict[int, str] = {}  # id() of an index kept above -> its file
# The last few small modules read, indexed whole (with their `ast` and text): path -> ((size, mtime), index).
MAX_WHOLE_BYTES = 256 * 1024
_WHOLE_KEPT = 8
_WHOLE: dict[str, tuple[tuple[int, int], ModuleIndex]] = {}


def whole_index(path: str) -> Optional[ModuleIndex]:
    """A module of the project indexed whole (with its `ast` and text), from the last few read when it has not
    changed since, else read again; None when it cannot be read or is larger than `MAX_WHOLE_BYTES`."""
    key, found = unchanged(_WHOLE, path)
    if found is not None:
        return found[1]
    if key is None or key[0] > MAX_WHOLE_BYTES:
        return None
    _INDEXES.pop(path, None)
    _read_index(path)
    found = _WHOLE.get(path)
    return found[1] if found is not None and found[0] == key else None


def unchanged(cache: dict[str, Any], path: str) -> tuple[Optional[tuple[int, int]], Any]:
    """(the file's (size, mtime), or None where it cannot be read; the entry `cache` keeps for it, `(that key, ...)`,
    while the file has not changed since, else None)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None, None
    key = (stat.st_size, stat.st_mtime_ns)
    found = cache.get(path)
    return key, found if found is not None and found[0] == key else None


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _read_index(path: str) -> tuple[Optional[str], Optional[ModuleIndex]]:
    """(content digest, index) of a module file, from the process cache when it has not changed."""
    key, found = unchanged(_INDEXES, path)
    if found is not None:
        _INDEXES[path] = _INDEXES.pop(path)  # the least recently read goes first
        return found[1], found[2]
    if key is None or key[0] > MAX_DEPENDENCY_BYTES:
        return None, None
    try:
        data = Path(path).read_bytes()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = data.decode("utf-8", "replace")
            try:
                tree = ast.parse(data)
            except SyntaxError:  # maybe syntax newer than this Python's
                tree = parse_source(text)
        index: Optional[ModuleIndex] = build_index_from_ast(tree, text)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None, None
    if index is not None and key[0] <= MAX_WHOLE_BYTES:
        # A small module is also kept whole for a while, as the reading that walks one of its functions
        # (`elsewhere`) most often comes next and needs it.
        if len(_WHOLE) >= _WHOLE_KEPT:
            _WHOLE.pop(next(iter(_WHOLE)))
        _WHOLE[path] = (key, index)
    return _keep(path, key, digest_of(data), index)


def _keep(path: str, key: tuple[int, int], digest: str, index: Optional[ModuleIndex]) -> tuple[str, Optional[ModuleIndex]]:
    """Keep another module's index in the process cache. It is read for its classes, imports and functions'
    annotations: its `ast` (a hundred times its text in memory, for each of the modules kept) goes."""
    if index is not None:
        index = dataclasses.replace(index, tree=None, source="", segment_nodes={}, class_segments={}, class_defs={},
                                    memo={})
    if len(_INDEXES) >= _CACHE_SIZE:
        dropped = _INDEXES.pop(next(iter(_INDEXES)))
        if dropped[2] is not None:
            _PATHS.pop(id(dropped[2]), None)
    _INDEXES[path] = (key, digest, index)
    if index is not None:
        _PATHS[id(index)] = path
    return digest, index


def remember_linted(path: Optional[str], text: str, index: ModuleIndex) -> None:
    """A linted module's own index, kept as `_read_index` keeps another module's: the files of a package import
    each other, and a run lints most of the modules its files import (on SGLang, 316 of the 360 modules one
    worker read for their imports). Only when the file on disk holds `text` exactly (not an editor's unsaved
    buffer, a notebook or a chunk of a large file): then `_read_index` would build this same index from it."""
    if path is None:
        return
    key, found = unchanged(_INDEXES, path)
    if found is not None or key is None or key[0] > MAX_DEPENDENCY_BYTES or key[0] < len(text):
        return
    try:
        data = Path(path).read_bytes()
    except OSError:
        return
    if data.decode("utf-8", "replace") == text:
        _keep(path, key, digest_of(data), index)


class Project:
    """The modules around one linted file, and which of them its findings depend on."""

    def __init__(self, path: Optional[str], walk: Optional[Walk] = None) -> None:
        self.path = os.path.abspath(path) if path and os.path.isfile(path) else None
        self.walk = walk
        # path -> content digest of every other module whose facts were used
        self.dependencies: dict[str, str] = {}
        self._returns: dict[tuple[int, str], Optional[Value]] = {}  # what `imported_return` found

    def module_file(self, module: str, level: int = 0, importer: Optional[str] = None) -> Optional[str]:
        """The file of `module` (`pkg.sub.mod`, or relative with `level` dots) next to the linted file (or next
        to `importer`, another module of the project that imports it)."""
        if self.path is None or not module and not level:
            return None
        parts = module.split(".") if module else []
        directory = os.path.dirname(importer or self.path)
        if level:
            for _ in range(level - 1):
                directory = os.path.dirname(directory)
            return _module_in(directory, parts)
        # Absolute: the package's top directory is one of the linted file's ancestors.
        current = directory
        for _ in range(12):
            found = _module_in(current, parts)
            if found is not None:
                return found
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        return None

    def imported_class(self, index: ModuleIndex, name: str) -> Optional[tuple[ClassInfo, ModuleIndex]]:
        """The class a name imported into `index`'s module refers to, read from its own module (following a
        module that imports it from another in turn, `from .downsampling import Downsample2D`, a few steps)."""
        return self._imported(index, name, lambda other, symbol: other.classes.get(symbol))

    def imported_return(self, index: ModuleIndex, reference: str) -> Optional[Value]:
        """What a function of another module of the project returns, as its return annotation says, read in its
        own module: `keep_last(h, n)` after `from .utils import keep_last`, or `utils.keep_last(h, n)` after
        `from pkg import utils` (`-> torch.Tensor`: a tensor, nothing known of its layout, device or views).
        The one reading of it: the walker and the prefilter both ask here."""
        alias, _, attr = reference.partition(".")
        if alias not in index.aliases and alias not in index.relative_imports:
            return None  # not imported: defined here, or a builtin
        memo_key = (id(index), reference)
        if memo_key in self._returns:
            return self._returns[memo_key]
        found: Optional[tuple[str, ModuleIndex]] = None  # (the function's name there, the module's index)
        if not attr:
            found = self._imported(index, reference, lambda other, symbol: symbol if symbol in other.function_names else None)
        elif "." not in attr:
            path = self._module_path(index, alias)  # `utils.keep_last`: a module imported whole
            read = _read_index(path) if path is not None else (None, None)
            if read[1] is not None and attr in read[1].function_names:
                self.dependencies[path] = read[0]  # type: ignore[index]
                found = attr, read[1]
        value = None
        if found is not None:
            name, other = found
            if name in other.function_returns:
                value = _annotated(ast.unparse(other.function_returns[name]), other)
            elif self.walk is not None and id(other) in _PATHS:
                value = self._walked(_PATHS[id(other)], None, name)  # not annotated: what one walk of it there finds
        self._returns[memo_key] = value
        return value

    def imported_call_return(self, index: ModuleIndex, class_name: str) -> Optional[Value]:
        """What calling an instance of a class imported from another module of the project gives, where its `forward`
        (or `__call__`) is not annotated: what one walk of it in its own module finds (`Conv1D.forward`)."""
        memo_key = (id(index), f"{class_name}()")
        if memo_key in self._returns:
            return self._returns[memo_key]
        value = None
        found = self.imported_class(index, class_name) if self.walk is not None else None
        if found is not None and id(found[1]) in _PATHS:
            info, other = found
            symbol = next((name for name, known in other.classes.items() if known is info), None)
            if symbol is not None:
                value = self._walked(_PATHS[id(other)], symbol, "forward" if info.is_module else "__call__")
        self._returns[memo_key] = value
        return value

    def imported_method_return(self, index: ModuleIndex, class_name: str, method: str) -> Optional[Value]:
        """What a method of an instance of a class imported from another module of the project returns, as its return
        annotation says where the class (or a class of that module it derives from) defines it:
        `past_key_values.update(k, v, i)` of `past_key_values: Cache` (`-> tuple[torch.Tensor, torch.Tensor]`)."""
        memo_key = (id(index), f"{class_name}().{method}")
        if memo_key in self._returns:
            return self._returns[memo_key]
        value = None
        found = self.imported_class(index, class_name)
        if found is not None:
            info, other = found
            for _ in range(4):  # up the bases that module defines
                if method in info.method_returns:
                    value = _annotated(info.method_returns[method], other)
                    break
                bases = [other.classes[b] for b in info.base_names if b in other.classes]
                if len(bases) != 1:
                    break
                info = bases[0]
        self._returns[memo_key] = value
        return value

    def _walked(self, path: str, owner: Optional[str], name: str) -> Optional[Value]:
        value, depends = self.walk(path, owner, name)  # type: ignore[misc]
        self.dependencies.update(depends)
        return value

    def _module_path(self, index: ModuleIndex, alias: str) -> Optional[str]:
        """The file of a module imported whole under `alias` (`from pkg import utils`, `import pkg.utils as utils`)."""
        relative = index.relative_imports.get(alias)
        if relative is not None:
            level, module, name = relative
            return self.module_file(f"{module}.{name}" if module else name, level)
        target = index.aliases.get(alias)
        if target is None or target.split(".")[0] in _NOT_PROJECT:
            return None
        return self.module_file(target)

    def _imported(self, index: ModuleIndex, name: str, lookup: Callable[[ModuleIndex, str], Optional[T]],
                  _from: Optional[str] = None, _depth: int = 0) -> Optional[tuple[T, ModuleIndex]]:
        """What `lookup` finds for a name imported into `index`'s module, in the module it comes from, following
        re-exports a few steps; each module read is a dependency."""
        relative = index.relative_imports.get(name)
        if relative is not None:
            level, module, symbol = relative
        else:
            target = index.aliases.get(name)
            if target is None or "." not in target:
                return None
            level = 0
            module, _, symbol = target.rpartition(".")
            if module.split(".")[0] in _NOT_PROJECT:
                return None
        path = self.module_file(module, level, _from)
        if path is None or path == self.path:
            return None
        digest, other = _read_index(path)
        if other is None or digest is None:
            return None
        found = lookup(other, symbol)
        if found is None:
            if _depth < 3 and symbol in other.relative_imports:
                further = self._imported(other, symbol, lookup, path, _depth + 1)  # re-exported there
                if further is not None:
                    self.dependencies[path] = digest
                return further
            return None
        self.dependencies[path] = digest
        return found, other


def _annotated(annotation: str, index: ModuleIndex) -> Optional[Value]:
    """An annotation's source, read in the module that wrote it."""
    try:
        return annotation_value(cst.parse_expression(annotation), index)
    except Exception:  # noqa: BLE001 - an annotation libcst cannot read back
        return None


def _module_in(directory: str, parts: list[str]) -> Optional[str]:
    base = os.path.join(directory, *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


_DIGESTS: dict[str, tuple[tuple[int, int], str]] = {}


def _digest_of_file(path: str) -> Optional[str]:
    """A file's content digest, read once per process while its size and mtime stay the same."""
    key, found = unchanged(_DIGESTS, path)
    if found is not None:
        return found[1]
    if key is None:
        return None
    indexed = _INDEXES.get(path)
    if indexed is not None and indexed[0] == key:
        return indexed[1]
    try:
        digest = digest_of(Path(path).read_bytes())
    except OSError:
        return None
    _DIGESTS[path] = (key, digest)
    return digest


def dependencies_unchanged(dependencies: dict[str, str]) -> bool:
    """Every module a cached result depended on still has the content it had (hashed, not parsed)."""
    return all(_digest_of_file(path) == digest for path, digest in dependencies.items())
