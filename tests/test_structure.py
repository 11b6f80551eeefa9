"""The package's shape: its imports point one way (no module imports itself through others), and no
file grows past what one can read (800 lines).

Imports are read with `ast`, at module level and inside functions alike (an import inside a function
runs as surely as one at the top, only later): `import a.b`, `from a import b` (an edge to `a`, and to
`a.b` when that is a module), and relative imports. Imports under `if TYPE_CHECKING:` never run, and
annotations may name each other's classes both ways (`Facts` holds `Rule`s, a `Rule` reads `Facts`):
those are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "viewlint"
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    """Module name -> file, for every module of the package (a package is its `__init__.py`)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST) -> Iterator[ast.AST]:
    """The import statements under `node`, at any depth, except in the body of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and _type_checking(child.test):
            for statement in child.orelse:
                yield from _imports(ast.Module(body=[statement], type_ignores=[]))
        else:
            yield from _imports(child)


def _imported(statement: ast.AST, package: str) -> list[str]:
    """The dotted names an import statement may load, relative imports resolved against `package`."""
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    assert isinstance(statement, ast.ImportFrom)
    base = statement.module or ""
    if statement.level:
        parts = package.split(".")
        parts = parts[: len(parts) - statement.level + 1]
        base = ".".join(parts + ([statement.module] if statement.module else []))
    return [base] + [f"{base}.{alias.name}" for alias in statement.names]


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (the nearest enclosing module of each dotted name)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for statement in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _imported(statement, package):
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> Optional[list[str]]:
    """One import cycle (its modules in import order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        state[start] = 1
        pending = [iter(sorted(graph[start]))]
        while pending:
            target = next(pending[-1], None)
            if target is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(target) == 1:
                return path[path.index(target):] + [target]
            elif target not in state:
                state[target] = 1
                path.append(target)
                pending.append(iter(sorted(graph[target])))
    return None


def test_the_import_graph_has_no_cycle() -> None:
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_a_cycle_is_found_and_type_checking_imports_are_not_edges() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\nelse:\n    import y\n"
                     "def f():\n    from . import z\n")
    assert [_imported(s, "p") for s in _imports(tree)] == [["typing", "typing.TYPE_CHECKING"], ["y"], ["p", "p.z"]]


def test_no_file_is_longer_than_the_limit() -> None:
    files = sorted([*PACKAGE.rglob("*.py"), *(ROOT / "rules").rglob("*.py")])
    assert files
    lengths = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines()) for path in files}
    long = {name: lines for name, lines in lengths.items() if lines > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines: {long}"
