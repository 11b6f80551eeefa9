"""VL311: `.repeat()` along a size-1 dimension, for an operation that broadcasts anyway."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.broadcasting import broadcasting_read, repeats_only_unit_dims, strip_conversions, unit_dims
from viewlint.analysis.semantics import SHAPE_KEEPING_CONVERSIONS
from viewlint.analysis.tree import children, descendants, enclosing, enclosing_statement, parent_map
from viewlint.rule import Rule

_SCOPES = (cst.FunctionDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)


class RepeatForBroadcast(Rule):
    """
    ## What it does
    Flags `t.repeat(...)` that only repeats `t` along dimensions of size 1 (made with `unsqueeze` or a `None` in
    an index: `mask.unsqueeze(1).repeat(1, heads, 1, 1)`, `x[:, None].repeat(1, n)`, `pos[None].repeat(b, 1)`) or
    along new leading dimensions, when every read of the result broadcasts it anyway: an arithmetic operator or a
    comparison, `~`, an operand of `torch.where`, the `attn_mask` of `scaled_dot_product_attention`, the mask of
    `masked_fill`. The result may be read directly or through the name it is bound to (every read of that binding
    must be one of those), also through a conditional expression (`m.repeat(...) if m is not None else None`).
    Conversions between the two (`.repeat(...).to(x)`) are looked through.

    It stays silent when the repeated dimension is not known to have size 1, when the factors are starred
    (`repeat(1, *x.shape[1:])`: which factor meets which dimension is not known), when the result is stored,
    returned, written in place, indexed, reshaped or handed to any other function (a kernel may need the copy's
    layout), and when a rank the analysis knows says the factors do not line up with the dimensions.

    ## Why it matters
    `repeat` allocates a new tensor and copies the input into every repetition: `mask.unsqueeze(1).repeat(1, c, 1, 1)`
    makes `c` copies of the mask on every call. `expand` gives a view with the same shape and values at no cost
    (stride 0 along the expanded dimension), and an operation that broadcasts does not need even that: arithmetic,
    comparisons, `torch.where` and the attention masks of `scaled_dot_product_attention` read a size-1 dimension as
    if it were repeated (kornia PR #3828, Depth-Anything-3 PR #268).

    ## Example
    ```python
    mask = mask.unsqueeze(1).repeat(1, c, 1, 1).to(images)
    out = torch.where(mask == 1.0, fill, images)
    ```

    ## Fix
    ```python
    mask = mask.unsqueeze(1).to(images)          # broadcasts against `images`
    out = torch.where(mask == 1.0, fill, images)
    ```
    or `.expand(-1, c, -1, -1)` where the shape itself is needed (after any conversion: `.to()` of an expanded
    tensor copies it whole). No automatic fix: which spelling keeps the shapes the code needs is the author's choice.
    """

    code = "VL311"
    name = "repeat-for-broadcast"
    summary = "`.repeat()` along a size-1 dimension for an operation that broadcasts: a copy `expand` would avoid"
    reports_a_cost = True

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("repeat-unit-dims"),),)

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self._scopes: list[cst.CSTNode] = []
        # Per scope (by id): id(node) -> its parent, built on the first repeat met in it.
        self._parents: dict[int, dict[int, cst.CSTNode]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._parents.pop(id(original_node), None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "repeat" or not node.args:
            return
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return
        factors = [arg.value for arg in node.args]
        if len(factors) == 1 and isinstance(factors[0], (cst.Tuple, cst.List)):
            elements = factors[0].elements
            if any(isinstance(e, cst.StarredElement) for e in elements):
                return
            factors = [e.value for e in elements]
        receiver = func.value
        dims = unit_dims(receiver)
        if dims is None:
            return
        facts = self.facts
        made = strip_conversions(receiver)
        if not (isinstance(made, cst.Call) or facts.value_of(made).is_tensor):
            return  # `x[None]` of an array: NumPy's `repeat(n, axis)` means something else
        if not repeats_only_unit_dims(factors, dims, facts.value_of(receiver).rank):
            return
        scope = self._scopes[-1] if self._scopes else facts.module
        parents = self._parents.get(id(scope))
        if parents is None:
            parents = self._parents[id(scope)] = parent_map(scope)
        result = _through_conversions(node, parents)
        if broadcasting_read(result, parents, facts.qualify):
            self._report(node, "the operation that reads it")
            return
        reads = self._reads_of_binding(result, parents, scope)
        if reads and all(broadcasting_read(read, parents, facts.qualify) for read in reads):
            self._report(node, f"every read of `{reads[0].value}`")

    def _report(self, node: cst.Call, reader: str) -> None:
        receiver = strip_conversions(node.func.value)  # type: ignore[attr-defined]
        self.report(
            node,
            f"`{self.facts.short_source(node)}` copies `{self.facts.short_source(receiver, 40)}` along dimensions of "
            f"size 1, and {reader} broadcasts: `.expand(...)`, a view, gives the same result without the copy",
            fix_message="`.expand(...)` instead (after any conversion), or drop the repeat where another operand "
                        "already has the repeated sizes",
        )

    def _reads_of_binding(self, result: cst.CSTNode, parents: dict[int, cst.CSTNode],
                          scope: cst.CSTNode) -> Optional[list[cst.Name]]:
        """The reads of the name `result` is bound to (`name = <result>`), from that statement to the next binding
        of the name (and, in a loop, anywhere in the loop's body); None where a read cannot be placed (a nested
        function or lambda reads it, `global`/`nonlocal` declares it)."""
        assign = parents.get(id(result))
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
            return None
        name = assign.targets[0].target.value
        order = list(descendants(scope))
        position = {id(n): i for i, n in enumerate(order)}
        start = position[id(assign)]
        end = start + _size(assign, position)
        loop = enclosing(assign, parents, _LOOPS, scope)
        loop_span = (position[id(loop)], position[id(loop)] + _size(loop, position)) if loop is not None else None
        reads: list[cst.Name] = []
        rebound_at = None
        for index in range(end, len(order)):
            node = order[index]
            if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
                return None
            if isinstance(node, cst.Name) and node.value == name and _binds(node, parents) \
                    and _same_or_outer_block(node, assign, parents):
                rebound_at = index  # (a binding in a branch may not run: the reads after it may still see this value)
                break
        stop = rebound_at if rebound_at is not None else len(order)
        for index, node in enumerate(order):
            if not (isinstance(node, cst.Name) and node.value == name) or start <= index < end:
                continue
            after = end <= index < stop
            looped = loop_span is not None and loop_span[0] <= index < loop_span[1]
            if not (after or looped) or _binds(node, parents) or not _read(node, parents):
                continue
            if enclosing(node, parents, _SCOPES, scope) is not None:
                return None
            reads.append(node)
        return reads


def _through_conversions(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> cst.CSTNode:
    """`x.repeat(...).to(y).float()` as a whole, from its `repeat` call."""
    while True:
        attribute = parents.get(id(node))
        call = parents.get(id(attribute)) if attribute is not None else None
        if isinstance(attribute, cst.Attribute) and attribute.value is node and attribute.attr.value in SHAPE_KEEPING_CONVERSIONS \
                and isinstance(call, cst.Call) and call.func is attribute:
            node = call
        else:
            return node


def _size(node: cst.CSTNode, position: dict[int, int]) -> int:
    """How many nodes of the preorder `node`'s subtree spans (itself included)."""
    last = node
    while True:
        below = children(last)
        if not below:
            return position[id(last)] - position[id(node)] + 1
        last = below[-1]


def _same_or_outer_block(name: cst.Name, assign: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    """The statement that binds `name` sits in the block of `assign` or in a block around it: it runs whenever
    the code after `assign` gets that far."""
    block = parents.get(id(enclosing_statement(name, parents)))
    current: Optional[cst.CSTNode] = parents.get(id(enclosing_statement(assign, parents)))
    while current is not None:
        if current is block:
            return True
        current = parents.get(id(current))
    return False


def _binds(name: cst.Name, parents: dict[int, cst.CSTNode]) -> bool:
    """`name` is a target: of an assignment (also inside a tuple target), a `for`, a `with ... as`, a walrus."""
    node: cst.CSTNode = name
    parent = parents.get(id(node))
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, (cst.AssignTarget, cst.AsName)):
        return True
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node:
        return True
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is node:
        return not isinstance(parent, cst.AugAssign)
    return isinstance(parent, cst.NamedExpr) and parent.target is node


def _read(name: cst.Name, parents: dict[int, cst.CSTNode]) -> bool:
    """`name` is read as a variable (not an attribute's name, a keyword, a parameter or a function's name)."""
    parent = parents.get(id(name))
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return not isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias))
