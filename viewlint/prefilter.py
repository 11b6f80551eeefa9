"""Hand libcst only the code that can trigger a rule.

CPython's own parser (`ast`, about ten times faster than libcst) splits a module into
segments: top-level statements, and the members of top-level classes. A segment is
kept only when an enabled rule could fire in it: its text holds one of the rule's
`triggers`, and, for rules that only fire in hot paths, it defines a hot function or
carries a `# viewlint: hot` marker. Every other line is blanked (its line ending kept),
so rows and columns in the reduced source are exactly those of the original.

Module-level facts do not depend on what is blanked: the module index is built from
the full `ast` tree, and small module-level imports and assignments are always kept so
the walker's module environment is the same on both paths.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from typing import Any, Optional, Sequence

from viewlint.analysis.walker import HOT_CALL_NAMES, HOT_FUNCTION_NAMES, HOT_MARKER
from viewlint.analysis.module_index import ModuleIndex
from viewlint.settings import Settings

_LINE_ENDING = re.compile(r"\r\n|\r|\n")
# Module- and class-level simple statements up to this many lines are always kept (imports,
# `_CACHE = {}`, `cache = Cache()`): they define names functions read. Larger ones (data tables) are not.
SMALL_STATEMENT_LINES = 50
_HOT_DECORATORS = ("compile", "script", "trace", "optimize")


def split_lines(text: str) -> list[tuple[str, str]]:
    """(content, line ending) per line, with Python's notion of a line (\\r\\n, \\r or \\n)."""
    lines: list[tuple[str, str]] = []
    start = 0
    for match in _LINE_ENDING.finditer(text):
        lines.append((text[start:match.start()], match.group()))
        start = match.end()
    if start < len(text):
        lines.append((text[start:], ""))
    return lines


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


def _is_hot_def(node: ast.AST, globs: Sequence[str]) -> bool:
    """A superset of the walker's hot functions: by name, decorator or configured glob."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    name = node.name
    # A `Class.method` glob matches by its method part here (a superset is enough for a prefilter).
    method_globs = tuple(glob.rsplit(".", 1)[-1] for glob in globs)
    if name in HOT_CALL_NAMES or any(fnmatch.fnmatchcase(name, glob) for glob in (*HOT_FUNCTION_NAMES, *globs, *method_globs)):
        return True
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        last = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if last in _HOT_DECORATORS:
            return True
    return False


def _rule_triggers(rule: type, index: ModuleIndex, settings: Settings) -> tuple[str, ...]:
    """A rule's triggers, plus module-specific ones and local aliases of triggering names
    (`from torch.nn.functional import scaled_dot_product_attention as sdpa` makes `sdpa` a trigger)."""
    triggers = tuple(rule.triggers) + tuple(rule.index_triggers(index, settings))
    cores = [t.strip(".([] ") for t in rule.triggers if not t.startswith("re:")]
    aliases = tuple(
        local for local, target in index.aliases.items()
        if local != target.split(".")[-1] and any(core and core in target.rsplit(".", 1)[-1] for core in cores)
    )
    # "re:" marks a regular expression (compiled once per process); other triggers are plain substrings.
    return tuple(_compiled(t) if t.startswith("re:") else t for t in triggers + aliases)


@functools.lru_cache(maxsize=None)
def _compiled(trigger: str) -> "re.Pattern[str]":
    return re.compile(trigger[3:])


class _Segment:
    __slots__ = ("first", "last", "node", "small")

    def __init__(self, node: ast.stmt, small: bool) -> None:
        self.first = _first_line(node)
        self.last = node.end_lineno or node.lineno
        self.node = node
        self.small = small


def _is_small_definition(node: ast.stmt) -> bool:
    """Imports and short assignments: what other code reads as module or class names."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return (node.end_lineno or node.lineno) - node.lineno < SMALL_STATEMENT_LINES
    return False


def reduce_source(text: str, tree: ast.Module, rule_classes: Sequence[type], settings: Settings,
                  index: ModuleIndex) -> Optional[str]:
    """The source with every segment no enabled rule can fire in blanked, or None if none is left."""
    if any(not r.triggers for r in rule_classes):
        return text  # a rule without triggers can fire anywhere
    lines = split_lines(text)
    globs = tuple(settings.hot_functions)
    plain = [_rule_triggers(r, index, settings) for r in rule_classes if not r.hot_path_only and r.trigger_scope != "class"]
    whole_class = [_rule_triggers(r, index, settings) for r in rule_classes if r.trigger_scope == "class"]
    hot_only = [_rule_triggers(r, index, settings) for r in rule_classes if r.hot_path_only]

    def segment_text(first: int, last: int) -> str:
        return "\n".join(content for content, _ in lines[first - 1:last])

    def holds(body: str, groups: list[tuple[Any, ...]]) -> bool:
        return any(any(t.search(body) if isinstance(t, re.Pattern) else t in body for t in triggers) for triggers in groups)

    def relevant(segment: _Segment) -> bool:
        body = segment_text(segment.first, segment.last)
        if holds(body, plain) or holds(body, whole_class):
            return True
        if hot_only and holds(body, hot_only):
            # A `# viewlint: hot` marker may sit on the comment lines just above the segment.
            above = segment.first - 1
            while above >= 1 and lines[above - 1][0].lstrip().startswith("#"):
                above -= 1
            marked = bool(HOT_MARKER.search(segment_text(above + 1, segment.last)))
            return marked or any(_is_hot_def(n, globs) for n in ast.walk(segment.node))
        return False

    keep = bytearray(len(lines) + 2)  # 1 = keep this row
    kept_any = False
    small: list[_Segment] = []
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            members = [_Segment(m, _is_small_definition(m)) for m in statement.body]
            whole = bool(whole_class) and holds(segment_text(_first_line(statement), statement.end_lineno or statement.lineno), whole_class)
            chosen = members if whole else [m for m in members if relevant(m)]
            if not chosen:
                continue
            kept_any = True
            header_last = members[0].first - 1 if members and members[0].first > statement.lineno else statement.lineno
            for row in range(_first_line(statement), header_last + 1):
                keep[row] = 1
            for member in members:
                if member in chosen or member.small:
                    for row in range(member.first, member.last + 1):
                        keep[row] = 1
            continue
        segment = _Segment(statement, _is_small_definition(statement))
        if segment.small:
            small.append(segment)
            if relevant(segment):
                kept_any = True
        elif relevant(segment):
            kept_any = True
            for row in range(segment.first, segment.last + 1):
                keep[row] = 1
    if not kept_any:
        return None
    for segment in small:
        for row in range(segment.first, segment.last + 1):
            keep[row] = 1
    # Comment-only lines never change the parse; keeping them keeps `# viewlint: hot` markers above a def.
    for row, (content, _) in enumerate(lines, start=1):
        if content.lstrip().startswith("#"):
            keep[row] = 1
    return "".join(content + ending if keep[row] else ending for row, (content, ending) in enumerate(lines, start=1))
