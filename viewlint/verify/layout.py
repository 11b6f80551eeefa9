"""Where a flagged file sits in its project: the module name and import root `--verify` runs it under.

A file inside a package runs as ``python -m package.module`` would (``__name__ == "__main__"``,
relative and absolute imports working), from the folder its top package is imported from: the
top of its ``__init__.py`` chain, or the project's source root when namespace packages (folders
without ``__init__.py``) lie between the two. The source root is the ``""`` entry of setuptools'
package-dir (``[tool.setuptools.package-dir]`` in pyproject.toml, ``[options] package_dir`` in
setup.cfg) or ``src/`` beside the project file. A file outside any package runs as
``python file.py`` would, from its own folder. ``--verify-root DIR`` names the import root instead.

Runs in the viewlint process: reads files, imports nothing of the user's.
"""

from __future__ import annotations

import ast
import configparser
import keyword
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from viewlint.analysis.guards import main_guard

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_TRY = tuple(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))  # TryStar: 3.11+


@dataclass(frozen=True)
class ImportTarget:
    """How to run one file: ``module`` from ``root`` (``python -m``), or a script (``module`` None) from its folder."""

    root: str
    module: Optional[str] = None


def import_target(path: str, roots: Sequence[str] = ()) -> ImportTarget:
    """The module name and import root of ``path``; ``roots`` (given by the user) win when they hold it."""
    file = Path(path).resolve()
    for given in roots:
        root = Path(given).resolve()
        if root in file.parents:
            name = _dotted(file.relative_to(root))
            if name is not None:
                return ImportTarget(str(root), name)
    top = file.parent
    while (top / "__init__.py").is_file() and _is_name(top.name):
        top = top.parent
    source = source_root(file.parent)
    if source is not None and source != top and source in top.parents:
        name = _dotted(file.relative_to(source))  # namespace packages between the source root and the chain
        if name is not None:
            return ImportTarget(str(source), name)
    if top == file.parent:
        return ImportTarget(str(file.parent))
    name = _dotted(file.relative_to(top))
    return ImportTarget(str(top), name) if name is not None else ImportTarget(str(file.parent))


def source_root(folder: Path) -> Optional[Path]:
    """The folder a src-layout (or package-dir mapped) project imports from; None for a flat project."""
    for candidate in (folder, *folder.parents):
        if not any((candidate / name).is_file() for name in PROJECT_FILES):
            continue
        mapped = _package_dir(candidate)
        if mapped is not None:
            return (candidate / mapped).resolve()
        return candidate / "src" if (candidate / "src").is_dir() else None
    return None


def _package_dir(project: Path) -> Optional[str]:
    """The folder setuptools maps the root package to (``package-dir = {"" = "lib"}``), if the project says."""
    try:
        with open(project / "pyproject.toml", "rb") as handle:
            mapping = tomllib.load(handle).get("tool", {}).get("setuptools", {}).get("package-dir", {})
        root = mapping.get("") if isinstance(mapping, dict) else None
        if isinstance(root, str):
            return root
    except (OSError, tomllib.TOMLDecodeError):
        pass
    parser = configparser.ConfigParser()
    try:
        parser.read(project / "setup.cfg", encoding="utf-8")
    except configparser.Error:
        return None
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.strip() and value.strip():
            return value.strip()
    return None


def _dotted(relative: Path) -> Optional[str]:
    """`pkg/sub/mod.py` -> "pkg.sub.mod", `pkg/__init__.py` -> "pkg"; None when a part is no identifier."""
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(_is_name(part) for part in parts):
        return None
    return ".".join(parts)


def _is_name(part: str) -> bool:
    return part.isidentifier() and not keyword.iskeyword(part)


def runs_anything(source: str) -> bool:
    """Whether running the file does more than define things: an ``if __name__ == "__main__":``
    block, or a top-level call, loop, ``with``, ``raise`` or ``assert``. Imports, definitions and
    assignments only define."""
    try:
        return _runs(ast.parse(source).body)
    except SyntaxError:
        return True  # let the run say what is wrong


def _runs(body: Sequence[ast.stmt]) -> bool:
    for statement in body:
        if isinstance(statement, ast.If):
            if main_guard(statement.test) or _runs(statement.body) or _runs(statement.orelse):
                return True
        elif isinstance(statement, _TRY):
            blocks = [statement.body, *(h.body for h in statement.handlers), statement.orelse, statement.finalbody]
            if any(_runs(block) for block in blocks):
                return True
        elif isinstance(statement, ast.Expr):
            if not isinstance(statement.value, ast.Constant):  # a docstring defines nothing and runs nothing
                return True
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Raise, ast.Assert)):
            return True
    return False
