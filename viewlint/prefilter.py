"""Hand libcst only the code that can trigger a rule.

CPython's own parser (`ast`, about ten times faster than libcst) splits a module into
segments: top-level statements, and the members of top-level classes. Each segment's
features (the names it calls, the attributes it reads, structural flags; see
`viewlint.analysis.features`) are read off the `ast` in one pass, and a segment is kept
only when an enabled rule's `prefilter_needs` hold in it; for rules that only fire in hot
paths, it must also define a hot function or carry a `# viewlint: hot` marker. Every other
line is blanked (its line ending kept), so rows and columns in the reduced source are
exactly those of the original.

Module-level facts do not depend on what is blanked: the module index is built from the
full `ast` tree, and the small module- and class-level assignments that a kept statement
reads (by name, directly or through another such assignment) are kept, so the walker's
module and class scopes answer every lookup the same way on both paths.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from typing import Callable, Optional, Sequence

from viewlint.analysis import features
from viewlint.analysis.features import Needs
from viewlint.analysis.callgraph import callgraph_of, hot_by_kind, hot_reasons
from viewlint.analysis.contexts import HOT_MARKER, SETUP_FUNCTION_NAMES
from viewlint.analysis.hotness import own_heat
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import preorder
from viewlint.analysis.project import Project
from viewlint.analysis.tensor_context import TensorContext
from viewlint.settings import Settings

_LINE_ENDING = re.compile(r"\r\n|\r|\n")
# Module- and class-level assignments up to this many lines are kept when a kept statement reads a name
# they bind (`_CACHE = {}`, `cache = Cache()`). Larger ones (data tables) are not.
SMALL_STATEMENT_LINES = 50
# Module-level literals at least this long (`op_db = [OpInfo(...), ...]`, thousands of lines) are
# kept element by element: libcst sees only the elements a rule can fire in.
SPLIT_LITERAL_LINES = 200
_FUNCTION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})


def split_lines(text: str) -> list[tuple[str, str]]:
    """(content, line ending) per line, with Python's notion of a line (\\r\\n, \\r or \\n)."""
    if "\r" not in text:  # the common case, at C speed
        parts = text.split("\n")
        last = parts.pop()
        found = [(part, "\n") for part in parts]
        if last:
            found.append((last, ""))
        return found
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


def _leading_block(lines: list[tuple[str, str]], first: int) -> int:
    """The first row of the comment and blank lines directly above row `first` (`first` if none)."""
    above = first - 1
    while above >= 1:
        content = lines[above - 1][0].strip()
        if content and not content.startswith("#"):
            break
        above -= 1
    return above + 1


def _is_setup_function(node: ast.stmt, nodes: list[ast.AST]) -> bool:
    """A setup method (`__init__`, `_init_*`, ...) with no nested function: the walker's `in_setup_function` all through."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if not any(fnmatch.fnmatchcase(node.name, glob) for glob in SETUP_FUNCTION_NAMES):
        return False
    return sum(1 for n in nodes if type(n) is ast.FunctionDef or type(n) is ast.AsyncFunctionDef) == 1


def _renamed_imports(index: ModuleIndex) -> dict[str, list[str]]:
    """The last part of each import's target -> the local names it is imported under, where they differ."""
    by_last: dict[str, list[str]] = {}
    for local, target in index.aliases.items():
        last = target.rsplit(".", 1)[-1]
        if local != last:
            by_last.setdefault(last, []).append(local)
    return by_last


def rule_needs(rule: type, index: ModuleIndex, settings: Settings,
               by_last: Optional[dict[str, list[str]]] = None) -> Optional[Needs]:
    """A rule's needs for this module, with calls through local aliases added
    (`from torch.nn.functional import scaled_dot_product_attention as sdpa` makes `sdpa(...)` count).
    `by_last`: `_renamed_imports(index)`, when the caller has it."""
    needs = rule.prefilter_needs(index, settings)
    if needs is None:
        return None
    if by_last is None:
        by_last = _renamed_imports(index)
    if not by_last:
        return needs
    extra = []
    for conjunction in needs:
        for i, (kind, value) in enumerate(conjunction):
            if kind == "call":
                for local in by_last.get(value, ()):
                    extra.append(conjunction[:i] + (("call", local),) + conjunction[i + 1:])
    return needs + tuple(extra)

_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _after(content: str, byte_column: int) -> str:
    """What follows an `ast` column (a UTF-8 byte offset) on a line, stripped."""
    if content.isascii():
        return content[byte_column:].strip()
    return content.encode("utf-8")[byte_column:].decode("utf-8", "replace").strip()


def _quiet(rest: str) -> bool:
    """Nothing but a comment (or nothing) is left on the line."""
    return not rest or rest.startswith("#")


def _literal_elements(statement: ast.stmt, lines: list[tuple[str, str]]) -> Optional[list[tuple[int, int, list[ast.AST]]]]:
    """The elements of a module-level literal (`x = [...]`, `x: T = {...}`) laid out one or more
    rows each, as (first row, last row, nodes); None unless any subset of them, with the rows
    that open and close the literal, is the same literal with fewer elements:

    - the opening bracket ends its row and the closing one starts its row and ends the statement;
    - no two elements share a row, each but the last ends its row with its comma (a tuple's
      last one too, or one kept element would stop being a tuple), and the rows between
      elements hold only comments;
    - no `:=` (it binds a module name), no parenthesised element (`(a +\n b),`).
    """
    value = getattr(statement, "value", None)
    if type(statement) not in (ast.Assign, ast.AnnAssign, ast.Expr) or type(value) not in _LITERALS:
        return None
    if type(value) is ast.Dict:
        parts = [[v] if k is None else [k, v] for k, v in zip(value.keys, value.values)]  # type: ignore[attr-defined]
    else:
        parts = [[element] for element in value.elts]  # type: ignore[attr-defined]
    if len(parts) < 2 or statement.end_lineno != value.end_lineno:
        return None
    if not _quiet(_after(lines[value.lineno - 1][0], value.col_offset + 1)):
        return None  # an element on the opening row
    if not _quiet(_after(lines[value.end_lineno - 1][0], value.end_col_offset)):  # type: ignore[arg-type]
        return None  # something after the closing bracket (`]; y = 1`)
    elements: list[tuple[int, int, list[ast.AST]]] = []
    previous = value.lineno
    for position, nodes in enumerate(parts):
        first = min(n.lineno for n in nodes)  # type: ignore[attr-defined]
        end = max(nodes, key=lambda n: (n.end_lineno, n.end_col_offset))  # type: ignore[attr-defined]
        last = end.end_lineno  # type: ignore[attr-defined]
        if first <= previous or any(not _quiet(lines[row - 1][0].strip()) for row in range(previous + 1, first)):
            return None
        rest = _after(lines[last - 1][0], end.end_col_offset)  # type: ignore[attr-defined]
        comma = rest.startswith(",") and _quiet(rest[1:].strip())
        final = position == len(parts) - 1
        if not comma and not (final and type(value) is not ast.Tuple and _quiet(rest)):
            return None
        elements.append((first, last, nodes))
        previous = last
    closing = value.end_lineno  # type: ignore[assignment]
    if closing <= previous or any(not _quiet(lines[row - 1][0].strip()) for row in range(previous + 1, closing)):
        return None
    if not lines[closing - 1][0].lstrip()[:1] in ("]", ")", "}"):
        return None
    if any(type(node) is ast.NamedExpr for node in ast.walk(value)):
        return None
    return elements



def _no_hot_rule() -> bool:
    """`collect`'s `cold` when no hot-path rule is enabled: the flags only they read are never needed."""
    return True


class _Segment:
    __slots__ = ("first", "last", "node", "small", "hot", "owner")

    def __init__(self, node: ast.stmt, small: bool, owner: Optional[str] = None) -> None:
        self.owner = owner  # the class of a class member
        self.first = _first_line(node)
        self.last = node.end_lineno or node.lineno
        self.node = node
        self.small = small
        self.hot: Optional[bool] = None  # whether a hot-path rule can fire here (`is_hot`), once asked


def _is_small_definition(node: ast.stmt) -> bool:
    """Short assignments: module and class names whose values functions read (`_CACHE = {}`).
    Imports are not needed: names resolve through the module index, built from the full `ast`."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return (node.end_lineno or node.lineno) - node.lineno < SMALL_STATEMENT_LINES
    return False


def _read_definitions(small: list[_Segment], read: list[list[ast.AST]], nodes_of: "Callable[[ast.stmt], list[ast.AST]]") -> list[_Segment]:
    """The small assignments the walk of the kept statements may read: those binding a name (or the root
    of a dotted or subscripted target: `CACHE[k] = v`, `cfg.x = 1`) that a kept statement, or an
    assignment kept this way, mentions. The walker's module and class scopes hold what they bind, and a
    walk reads a scope only by name; the others change nothing it finds."""
    mentioned = {node.id for nodes in read for node in nodes if type(node) is ast.Name}  # type: ignore[attr-defined]
    pending = [(segment, _bound_roots(segment.node)) for segment in small]
    needed: list[_Segment] = []
    changed = True
    while changed and pending:
        changed = False
        waiting = []
        for segment, roots in pending:
            if roots & mentioned:
                needed.append(segment)
                mentioned.update(node.id for node in nodes_of(segment.node) if type(node) is ast.Name)  # type: ignore[attr-defined]
                changed = True
            else:
                waiting.append((segment, roots))
        pending = waiting
    return needed


def _bound_roots(statement: ast.stmt) -> set[str]:
    """The names an assignment binds or changes: its targets' root names."""
    targets = list(getattr(statement, "targets", None) or [statement.target])  # type: ignore[attr-defined]
    roots: set[str] = set()
    while targets:
        target = targets.pop()
        kind = type(target)
        if kind is ast.Name:
            roots.add(target.id)  # type: ignore[attr-defined]
        elif kind is ast.Tuple or kind is ast.List:
            targets.extend(target.elts)  # type: ignore[attr-defined]
        elif kind is ast.Attribute or kind is ast.Subscript or kind is ast.Starred:
            targets.append(target.value)  # type: ignore[attr-defined]
    return roots


class Reduction:
    """The reduced source, which rows it keeps, and which rules can fire in each kept segment
    (keyed by the segment's first row: its keyword, after any decorators).

    The text holds only the kept lines (blank lines still cost libcst a node each); row n of
    the text is row `line_map[n - 1]` of the file. Columns are unchanged.
    """

    __slots__ = ("text", "rows", "active", "line_map", "partial")

    def __init__(self, text: str, rows: bytearray, active: dict[int, frozenset[str]],
                 line_map: Optional[list[int]] = None, partial: frozenset[int] = frozenset()) -> None:
        self.text = text
        self.rows = rows  # rows[n] is 1 when row n (1-based) of the file is kept
        self.active = active
        self.line_map = line_map  # None: the text is the file's, row for row
        self.partial = partial  # first rows of the module-level literals kept element by element

    def file_row(self, row: int) -> int:
        """The file's row for a row of the reduced text."""
        if self.line_map is None or not self.line_map:
            return row
        return self.line_map[min(max(row, 1), len(self.line_map)) - 1]


def reduce_source(text: str, tree: ast.Module, rule_classes: Sequence[type], settings: Settings,
                  index: ModuleIndex) -> Optional[str]:
    """The source with every segment no enabled rule can fire in blanked, or None if none is left."""
    reduction = reduce(text, tree, rule_classes, settings, index)
    return None if reduction is None else reduction.text


def reduce(text: str, tree: ast.Module, rule_classes: Sequence[type], settings: Settings,
           index: ModuleIndex, project: Optional[Project] = None) -> Optional[Reduction]:
    """Blank every segment no enabled rule can fire in; None if nothing is left to parse."""
    renamed = _renamed_imports(index)
    all_needs = [(r, rule_needs(r, index, settings, renamed)) for r in rule_classes]
    if any(needs is None for _, needs in all_needs):
        lines = split_lines(text)
        return Reduction(text, bytearray(b"\x01" * (len(lines) + 2)), {})  # a rule without needs can fire anywhere
    globs = tuple(settings.hot_functions)
    hot_globs = globs
    plain = features.CompiledNeeds(tuple(c for r, n in all_needs if not r.hot_path_only for c in n))  # type: ignore[union-attr]
    hot_only = features.CompiledNeeds(tuple(c for r, n in all_needs if r.hot_path_only for c in n))  # type: ignore[union-attr]
    per_rule = [(r.code, features.CompiledNeeds(n), r.hot_path_only) for r, n in all_needs]  # type: ignore[arg-type]
    retention = features.RetentionContext(index, settings.long_lived_names)
    tensors = TensorContext(index, settings.cpu_names, project)
    segment_nodes = index.segment_nodes
    lines: Optional[list[tuple[str, str]]] = None
    nothing: frozenset[str] = frozenset()
    marked = HOT_MARKER.search(text) is not None  # a `# viewlint: hot` marker anywhere in the file

    def nodes_of(node: ast.stmt) -> list[ast.AST]:
        found = segment_nodes.get(id(node))
        return found if found is not None else preorder(node)

    def features_of(segment: _Segment, class_name: Optional[str] = None) -> features.Features:
        node = segment.node
        nodes = nodes_of(node)
        found = features.collect(nodes, retention, tensors=tensors, cold=(lambda: not is_hot(segment)) if hot_only else _no_hot_rule)
        if class_name is not None:
            found.flags.add(f"class:{class_name}")  # for needs that name the classes a rule can fire in
        if "retains" in found.flags and _is_setup_function(node, nodes):
            found.flags.discard("retains")  # what `__init__` stores into `self` is the object's layout
            found.flags.discard("retains-view")
        return found

    def segment_text(first: int, last: int) -> str:
        return "\n".join(content for content, _ in lines[first - 1:last])  # type: ignore[index]

    def is_hot(segment: _Segment) -> bool:
        if segment.hot is None:
            segment.hot = judge_hot(segment)
        return segment.hot

    def judge_hot(segment: _Segment) -> bool:
        nonlocal lines
        nodes = nodes_of(segment.node)
        # Hot by its own evidence, as the walker will read it (`hotness.own_heat`: a method's own class, nested
        # functions none), through the module's call graph (called from a hot function, runs a training step), or a
        # step loop (a loop that runs `backward()`, an optimizer step or a model).
        graph = callgraph_of(index)
        owners = {id(member): n.name for n in nodes if type(n) is ast.ClassDef for member in n.body}  # type: ignore[attr-defined]
        if any(own_heat(index, segment.owner if n is segment.node else owners.get(id(n)), n, hot_globs, graph)
               for n in nodes if type(n) in _FUNCTION_TYPES):
            return True
        reasons = hot_reasons(graph, hot_globs)
        by_kind = hot_by_kind(graph, hot_globs)  # a metric's `update`, a scheduler's `step`: hot by the class's kind
        for node in nodes:
            kind = type(node)
            if kind in _FUNCTION_TYPES:
                info = graph.by_node.get(id(node))
                if info is not None and (info.key in reasons or info.key in by_kind):
                    return True
            elif (kind is ast.For or kind is ast.While or kind is ast.AsyncFor) and graph.step_loop_reason(node, hot_globs) is not None:
                return True
        if not marked:
            return False
        # A `# viewlint: hot` marker may sit among the comment and blank lines just above the segment.
        if lines is None:
            lines = split_lines(text)
        return bool(HOT_MARKER.search(segment_text(_leading_block(lines, segment.first), segment.last)))

    def active_rules(segment: _Segment, found: features.Features) -> frozenset[str]:
        """The enabled rules that can fire in this segment (empty: blank it)."""
        if not found.satisfies(plain) and not (hot_only and found.satisfies(hot_only)):
            return nothing
        codes = [code for code, needs, hot in per_rule if not hot and needs.met_by(found)]
        hot_codes = [code for code, needs, hot in per_rule if hot and needs.met_by(found)]
        if hot_codes and is_hot(segment):
            codes.extend(hot_codes)
        return frozenset(codes)

    def cut_literal(segment: _Segment, codes: frozenset[str]) -> Optional[tuple[list[tuple[int, int]], frozenset[str]]]:
        """For a long module-level literal, the rows to keep (its opening and closing rows and the
        elements some rule can fire in, each judged with the assignment around it) and those
        rules; None: keep it whole (its layout does not allow cutting, or a hot-path rule is involved).

        Elements are independent: what a rule finds in one depends on it, the assignment and the
        module's names, never on another element (`:=`, the one way to bind a name from inside
        an element, prevents the cut). So a conjunction met only across elements cannot fire."""
        nonlocal lines
        if any(hot for code, _, hot in per_rule if hot and code in codes):
            return None
        if lines is None:
            lines = split_lines(text)
        elements = _literal_elements(segment.node, lines)
        if elements is None:
            return None
        statement = segment.node
        frame = [statement, *(n for target in getattr(statement, "targets", ()) for n in preorder(target))]
        for field_name in ("target", "annotation"):
            if getattr(statement, field_name, None) is not None:
                frame.extend(preorder(getattr(statement, field_name)))
        chosen: list[tuple[int, int]] = []
        union = nothing
        for first, last, nodes in elements:
            found = features.collect([*frame, *(n for node in nodes for n in preorder(node))], retention,
                                     tensors=tensors)
            element_codes = frozenset(code for code, needs, hot in per_rule if not hot and needs.met_by(found))
            if element_codes:
                chosen.append((first, last))
                union |= element_codes
        if not chosen:
            return [], nothing  # the needs were met only across elements: no element can fire
        value = statement.value  # type: ignore[attr-defined]
        kept = [(segment.first, value.lineno), *chosen, (value.end_lineno, segment.last)]
        try:  # the layout checks make this hold; parse the kept rows to be certain
            ast.parse("\n".join(lines[row - 1][0] for first, last in kept for row in range(first, last + 1)))
        except (SyntaxError, ValueError):
            return None
        return kept, union

    keep: list[tuple[int, int]] = []  # row ranges to keep
    partial: set[int] = set()  # module-level literals kept element by element (their first rows)
    active: dict[int, frozenset[str]] = {}
    small: list[_Segment] = []  # small assignments no rule can fire in: kept if a kept statement reads what they bind
    read: list[list[ast.AST]] = []  # the nodes of the kept statements (whose names the walk may look up)
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            members = [_Segment(m, _is_small_definition(m), statement.name) for m in statement.body]
            chosen = False
            for member in members:
                codes = active_rules(member, features_of(member, statement.name))
                if codes:
                    chosen = True
                    keep.append((member.first, member.last))
                    active[member.node.lineno] = active.get(member.node.lineno, nothing) | codes
                    read.append(nodes_of(member.node))
            if not chosen:
                continue
            header_last = members[0].first - 1 if members and members[0].first > statement.lineno else statement.lineno
            keep.append((_first_line(statement), header_last))
            read.extend(preorder(part) for part in (*statement.decorator_list, *statement.bases, *statement.keywords))
            small.extend(member for member in members if member.small and member.node.lineno not in active)
            continue
        segment = _Segment(statement, _is_small_definition(statement))
        codes = active_rules(segment, features_of(segment))
        cut = cut_literal(segment, codes) if codes and segment.last - segment.first + 1 >= SPLIT_LITERAL_LINES else None
        if cut is not None:
            ranges, codes = cut
            keep.extend(ranges)
            if ranges:
                partial.add(statement.lineno)
        elif codes:
            keep.append((segment.first, segment.last))
        if codes:
            active[statement.lineno] = active.get(statement.lineno, nothing) | codes
            read.append(nodes_of(statement))
        elif segment.small:
            small.append(segment)
    if not any(codes for codes in active.values()):
        return None
    for segment in _read_definitions(small, read, nodes_of):
        keep.append((segment.first, segment.last))
        active[segment.node.lineno] = nothing
    if lines is None:
        lines = split_lines(text)
    rows = bytearray(len(lines) + 2)  # 1 = keep this row
    for first, last in keep:
        # `return a, \` then a blank line: the statement goes on to the blank line, which ends it.
        while last < len(lines) and lines[last - 1][0].endswith("\\") and not lines[last][0].strip():
            last += 1
        rows[first:last + 1] = b"\x01" * (last + 1 - first)
    # The comment and blank lines just above a kept segment stay (libcst gives them to the
    # statement, and a `# viewlint: hot` marker may be among them); other lines are dropped.
    shown = bytearray(rows)
    for first, _ in keep:
        start = _leading_block(lines, first)
        shown[start:first] = b"\x01" * (first - start)
    line_map = [row for row in range(1, len(lines) + 1) if shown[row]]
    reduced = "".join(lines[row - 1][0] + lines[row - 1][1] for row in line_map)
    if reduced and not reduced.endswith(("\n", "\r")):
        reduced += "\n"  # the file's last line was blanked, or had no line ending
    return Reduction(reduced, rows, active, line_map, frozenset(partial))
