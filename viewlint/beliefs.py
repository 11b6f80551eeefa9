"""What the analysis believes of each binding: `viewlint beliefs PATHS`.

For every assignment target (a name, `self.<attr>`, the names a tuple target unpacks) and every `for`
target, one record: is the value a tensor, a view (and of what), on which device, contiguous. Each
answer is `True`, `False` or `None` (no evidence either way). The records are read off the same walk
the rules ride (`Facts`, `Walker`), over the whole module: nothing is left out the way the prefilter
leaves out code no rule can fire in, so `bench/truth.py` can compare every binding with what it holds
at run time.
"""

from __future__ import annotations

import ast
import functools
import os
from typing import Any, Iterator, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from viewlint.analysis.callgraph import callgraph_of
from viewlint.analysis.facts import Facts
from viewlint.analysis.module_index import build_index_from_ast
from viewlint.analysis.project import Project
from viewlint.analysis.elsewhere import walker
from viewlint.analysis.summaries import ModuleSummaries
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.value_ops import MODULE_OUTPUT
from viewlint.analysis.values import Device, Kind, Provenance, Value
from viewlint.analysis.walker import Walker
from viewlint.settings import Settings

# Kinds that are known not to be a tensor (a container of tensors is not one either).
_NOT_TENSOR = frozenset({Kind.HOST, Kind.INT, Kind.INT_LIST, Kind.ARRAY, Kind.WRAPPER, Kind.TENSOR_SEQUENCE})


def belief(value: Value) -> dict[str, Any]:
    """One value as the record's fields: `tensor`, `view`, `base`, `device`, `contiguous`, and `why`."""
    if value.kind is Kind.TENSOR:
        # What holds on every path: a tensor here and `None` there is not known to be a tensor, nor a view on one
        # path and not on another to be a view.
        view: Optional[bool] = {Provenance.VIEW: True, Provenance.FRESH: False}.get(value.provenance)
        if value.provenance is Provenance.FRESH:
            view = value.has_base  # all its storage its own, through a view of it or not (`F.linear` of 3-D input)
        if value.some_view:
            view = None
        if value.optional or value.may_be_none or value.beyond_none:
            return {"tensor": None, "view": None, "base": None, "device": None, "contiguous": None, "rank": None,
                    "why": value.why}
        device = {Device.CPU: "cpu", Device.ACCELERATOR: "cuda"}.get(value.device)
        return {"tensor": True, "view": view, "base": value.base if view else None, "device": device,
                "contiguous": value.contiguous, "rank": value.rank, "why": value.why}
    # A module of unknown kind gives a tensor or a tuple of them (a join, kept as a container): not known; nor is a
    # tuple here that is a tensor on another path.
    tensor = False if value.kind in _NOT_TENSOR and value.origin != MODULE_OUTPUT and not value.optional else None
    # Of a value not known to be a tensor, only where it is, when the code says (`meta.lens.cpu()`).
    device = {Device.CPU: "cpu", Device.ACCELERATOR: "cuda"}.get(value.device) if tensor is None else None
    return {"tensor": tensor, "view": None, "base": None, "device": device, "contiguous": None, "rank": None, "why": value.why}


def describe(value: Value) -> str:
    """A hover's one line: `tensor, view of qkv (via .unbind()), contiguous: unknown`."""
    fields = belief(value)
    if fields["tensor"] is None and value.optional and value.kind is Kind.TENSOR:
        return "a tensor on some paths only (`None`, a number or something unknown on others)"
    if fields["tensor"] is None and value.may_be_none and value.kind is Kind.TENSOR:
        return "a tensor or `None` (annotated so)"
    if fields["tensor"] is None and value.beyond_none and value.kind is Kind.TENSOR:
        return "an item of a tensor on some paths only (of something unknown on others)"
    if fields["tensor"] is None:
        return "unknown"
    if fields["tensor"] is False:
        return {Kind.WRAPPER: "container", Kind.TENSOR_SEQUENCE: "tuple of tensors", Kind.INT: "int",
                Kind.INT_LIST: "list of ints", Kind.ARRAY: "NumPy array"}.get(value.kind, "not a tensor")
    parts = ["tensor"]
    if value.provenance is Provenance.FRESH and not value.some_view:
        # What keeps memory alive is whose storage it is: its own, even where `_base` is set (`F.linear` of 3-D input).
        parts.append("owns its storage, through a view of it" if fields["view"] else "owns its storage")
    elif fields["view"] is True:
        parts.append(f"view of {value.base} (via {value.origin})" if value.origin else f"view of {value.base}")
    elif fields["view"] is False:
        parts.append("owns its storage")
    else:
        parts.append("view: unknown")
    parts.append(f"device: {fields['device'] or 'unknown'}")
    contiguous = fields["contiguous"]
    parts.append("contiguous: " + ("unknown" if contiguous is None else "yes" if contiguous else "no"))
    if value.why:
        parts.append(value.why)
    return ", ".join(parts)


class _Recorder:
    """Rides the walk like a rule: after each statement, reads what its targets are bound to."""

    code = "beliefs"

    def __init__(self, facts: Facts, positions: Any) -> None:
        self.facts = facts
        self.positions = positions
        self.records: list[tuple[int, str, Value]] = []

    def _row(self, node: cst.CSTNode) -> int:
        return int(self.positions[node].start.line)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if not self.facts.in_function:
            return
        for small in node.body:
            targets: list[cst.BaseExpression] = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and (not isinstance(small, cst.AnnAssign) or small.value is not None):
                targets = [small.target]
            for target in targets:
                self._record(self._row(node), target)

    def visit_For(self, node: cst.For) -> None:
        if self.facts.in_function:
            self._record(self._row(node), node.target)

    def _record(self, row: int, target: cst.BaseExpression) -> None:
        for name in _names(target):
            self.records.append((row, name, self.facts.lookup(name)))


def _names(target: cst.BaseExpression) -> Iterator[str]:
    """The names a target binds that a record is kept for: names, `self.<attr>`, tuple items."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, cst.Attribute):
        name = dotted_name(target)
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            yield name
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            if not isinstance(element, cst.StarredElement):
                yield from _names(element.value)


def beliefs_of_text(text: str, display: str, settings: Optional[Settings] = None,
                    summaries: bool = False, source_path: Optional[str] = None) -> list[dict[str, Any]]:
    """The records for one module's source (empty when it does not parse); `summaries`: each record also
    gets `summary`, the one line a hover shows (`describe`). `source_path`: where the module lives, when
    `display` is not a path to it: the other modules of its package are read from there, as a lint reads them."""
    settings = settings if settings is not None else Settings()
    try:
        tree = ast.parse(text)
        module = cst.parse_module(text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError, RecursionError):
        return []
    index = build_index_from_ast(tree, text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    facts = Facts(module, settings, index, ModuleSummaries(index, module, settings, callgraph_of(index),
                                                             Project(source_path or display, walker(settings))))
    recorder = _Recorder(facts, positions)
    try:
        Walker(facts, [recorder]).walk(module)  # type: ignore[list-item]
    except RecursionError:
        pass  # what was recorded before the stack ran out stands
    finally:
        facts.close()
    index.memo.clear()
    out = []
    for row, target, value in recorder.records:
        record = {"path": display, "line": row, "target": target, **belief(value)}
        if summaries:
            record["summary"] = describe(value)
        out.append(record)
    return out


@functools.lru_cache(maxsize=8)
def _bindings_by_row(text: str, path: Optional[str] = None) -> dict[int, list[tuple[str, str]]]:
    found: dict[int, list[tuple[str, str]]] = {}
    for record in beliefs_of_text(text, "<editor>", summaries=True, source_path=path):
        found.setdefault(record["line"], []).append((record["target"], record["summary"]))
    return found


def hover_text(text: str, row: int, column: int, path: Optional[str] = None) -> Optional[str]:
    """What the analysis believes of the binding under (1-based `row`, 0-based `column`), for a hover:
    `` `qk`: tensor, view of qkv (via .unbind()), device: unknown, contiguous: unknown``. `path`: the
    document's file, whose package's other modules the analysis reads as a lint does."""
    lines = text.splitlines()
    if not 1 <= row <= len(lines):
        return None
    line = lines[row - 1]
    start = column
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_."):
        start -= 1
    end = column
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    word = line[start:end]
    if not word:
        return None
    for target, summary in _bindings_by_row(text, path).get(row, ()):
        if target == word or target.endswith("." + word):
            return f"`{target}`: {summary}"
    return None


def package_relative(path: str) -> str:
    """`path` relative to the folder holding its top package (the first folder up without `__init__.py`)."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return os.path.relpath(os.path.abspath(path), folder).replace(os.sep, "/")
