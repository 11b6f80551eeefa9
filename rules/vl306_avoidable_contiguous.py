"""VL306: `.contiguous()` copies a strided slice that every later use would have taken as it is."""

from __future__ import annotations

import ast
from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.callgraph import FunctionInfo
from viewlint.analysis.nodes import dotted
from viewlint.analysis.once import is_cached
from viewlint.analysis.tree import parent_map, remembered, subtree
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# Tensor methods that accept any strides and return a new tensor (or a Python value).
_STRIDE_FREE_METHODS = frozenset({
    "float", "half", "bfloat16", "double", "long", "int", "bool", "to", "type_as", "sum", "mean", "max", "min", "amax",
    "amin", "softmax", "log_softmax", "gather", "index_select", "masked_fill", "masked_select", "clamp", "clip", "exp",
    "log", "sigmoid", "tanh", "relu", "argmax", "argmin", "eq", "ne", "lt", "gt", "le", "ge", "abs", "neg", "mul",
    "add", "sub", "div", "pow", "sqrt", "rsqrt", "cumsum", "any", "all", "clone", "item",
    "tolist", "size", "dim", "numel", "norm", "logsumexp", "topk", "sort", "argsort", "where", "std", "var", "prod",
    "nansum", "count_nonzero", "isnan", "isinf", "isfinite", "round", "floor", "ceil", "sign", "square",
})
# Tensor methods that take their tensor arguments in any layout (`row_logps.gather(-1, index=labels)`).
_STRIDE_FREE_ARGUMENT_METHODS = frozenset({
    "gather", "index_select", "masked_fill", "masked_select", "where", "type_as", "to", "mul", "add", "sub", "div",
    "pow", "eq", "ne", "lt", "gt", "le", "ge", "clamp", "clip",
})
# Views that reorder dimensions: `.contiguous()` of one copies.
_TRANSPOSES = frozenset({"transpose", "permute", "t", "mT"})
# Matrix products: they read strided operands, copying any layout BLAS cannot take.
_PRODUCTS = frozenset({"matmul", "bmm", "mm", "baddbmm", "addmm", "einsum", "linear", "bilinear"})
# Views of it: whether they are fine depends on where they go.
_VIEW_METHODS = frozenset({"unsqueeze", "squeeze", "detach", "transpose", "permute", "t", "expand", "narrow", "select"})
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "data"})
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda"})
# `torch.<name>` calls whose result is a view (or, for a strided input, a copy) of the input: pieces of a split
# go on to uses this rule does not follow, and a reshape that merges strided dimensions copies anyway.
_RESHAPING = frozenset({
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "reshape", "flatten",
    "view", "narrow", "select", "transpose", "permute", "squeeze", "unsqueeze", "movedim", "swapaxes", "unflatten",
})
# `torch.<name>` calls that need (or may need) contiguous memory: collectives, custom ops, raw pointers.
_CONTIGUITY_NAMESPACES = ("torch.distributed", "torch.ops", "torch.cuda", "torch.library", "torch.utils.dlpack")


class AvoidableContiguous(Rule):
    """
    ## What it does
    Flags `y = x[..., :-1, :].contiguous()` (or the `.contiguous()` of a transpose or permute, also of a
    name bound to one, or a parameter every caller here passes one to: `query = query.contiguous()` of the
    transposed heads an attention layer hands its attention function) when the
    copy is strided, so `.contiguous()` really copies, and every use of `y` in the function accepts a
    strided tensor as it is: arithmetic and comparisons, indexing, `torch` and `torch.nn.functional`
    operations (`log_softmax`, `gather`, `cross_entropy`, `scaled_dot_product_attention`...), tensor methods
    that compute a new tensor (`.float()`, `.sum()`, `.gather()`...), the tensor arguments of such methods
    (`row_logps.gather(-1, index=labels)`), and functions of the same module whose parameter is used only in
    those ways.

    It stays silent when any use may need contiguous memory or is out of sight: `.view()`, `.data_ptr()`,
    custom and distributed ops (`torch.ops.*`, `torch.distributed.*`), calls of functions or modules it
    cannot read, returning or storing the copy; when the copy feeds two or more uses one of which is a
    matrix product (`matmul`, `@`, `einsum`, `F.linear`: each copies a layout BLAS cannot read, so one
    copy up front may be the cheaper); and when the slice is contiguous already (a slice of the
    first dimension: then `.contiguous()` copies nothing, see VL301).

    ## Why it matters
    `.contiguous()` of a strided slice allocates and fills a full copy of it. For a slice of a large
    activation (the logits of a language model: batch x sequence x vocabulary) that is a copy of the
    biggest tensor of the step, on every step, and it raises peak memory by its size. PyTorch operations
    read strided tensors directly, so when nothing downstream needs contiguous memory the copy buys
    nothing (TRL's DPO trainer saved about 15% of peak memory by dropping exactly these calls).

    ## Example
    ```python
    shift_logits = logits[..., :-1, :].contiguous()   # copies batch x (seq - 1) x vocab floats
    shift_labels = labels[..., 1:].contiguous()
    logps = torch.gather(shift_logits.log_softmax(-1), -1, shift_labels.unsqueeze(-1))
    ```

    ## Fix
    ```python
    shift_logits = logits[..., :-1, :]
    shift_labels = labels[..., 1:]
    ```
    Fix safety: unsafe. The values are the same, but the copy's memory layout (and the kernels chosen
    for it) change, and code outside the function might rely on the copy.
    """

    code = "VL306"
    reports_a_cost = True
    name = "avoidable-contiguous"
    summary = "`.contiguous()` copies a strided slice that every use takes as it is"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: Any, settings: Any) -> features.Needs:
        return ((features.flag("strided-contiguous-assign"),),)

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self._functions: list[cst.FunctionDef] = []
        self._parents: dict[int, dict[int, cst.CSTNode]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._functions or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "contiguous"
                and not call.args):
            return
        copied = call.func.value
        if not self._strided(copied) or self.facts.value_of(copied).is_parameter:
            return  # (a module's own weight copied per call is VL302's: cache it once)
        name = node.targets[0].target.value
        function = self._functions[-1]
        own = self.facts.contexts.ast_of(function)
        if own is not None and is_cached(own):
            return  # a cached builder (`lru_cache`, `cached_property`, a project's `*_lru_cache`) runs once per key
        uses = self._uses(function, name, node)
        if uses is None or not uses or not all(self._stride_free(use, function, depth=2) for use in uses):
            return
        if len(uses) > 1 and any(self._in_product(use, function) for use in uses):
            return  # a matrix product copies a layout BLAS cannot read, once per product: one copy up front may be less
        source = self.facts.source_for_edit(copied)
        self.report(
            call,
            f"`{self.facts.short_source(call)}` copies a strided slice, but every use of `{name}` here takes a "
            f"strided tensor as it is: the copy (and its memory) buys nothing",
            fix_message=f"use `{self.facts.short_source(copied)}` directly",
            edits=((call, source),),
        )

    # ------------------------------------------------------------------ the copy
    def _strided(self, node: cst.BaseExpression) -> bool:
        """A slice of a tensor along a dimension other than the first (`x[..., :-1, :]`, `x[:, 1:]`), or a transpose."""
        value = self.facts.value_of(node)
        if not value.is_tensor:
            return False
        if isinstance(node, cst.Subscript):
            for position, element in enumerate(node.slice):
                index = element.slice
                if isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis) and position < len(node.slice) - 1:
                    return any(isinstance(e.slice, cst.Slice) and (e.slice.lower or e.slice.upper or e.slice.step)
                               for e in node.slice[position + 1:])
                if isinstance(index, cst.Slice) and position > 0 and (index.lower or index.upper or index.step):
                    return True
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return node.func.attr.value in _TRANSPOSES and value.is_view
        if isinstance(node, cst.Name):
            # `query.contiguous()` of a `query` bound to a transpose here, or that every caller passes one of.
            return value.is_view and (value.origin or "").strip(".()") in _TRANSPOSES
        return False

    # ------------------------------------------------------------------ its uses
    def _uses(self, function: cst.FunctionDef, name: str, assignment: cst.Assign) -> Optional[list[cst.Name]]:
        """The reads of `name` in the function (None when it is bound more than once, or declared global). A parameter
        copied under its own name (`query = query.contiguous()`, outside loops) is read as the copy only after it."""
        reads: list[cst.Name] = []
        bindings = 0
        parents = self._parent_map(function)
        copied = assignment.value.func.value  # type: ignore[attr-defined]
        self_copy = isinstance(copied, cst.Name) and copied.value == name and not self._in_loop(assignment, parents)
        copied_ids = {id(n) for n in subtree(assignment.value)} if self_copy else set()
        started = not self_copy
        for node in subtree(function.body):
            started = started or node is assignment
            if not started or id(node) in copied_ids:
                continue  # the parameter itself, before it is copied, and in `query.contiguous()`
            if isinstance(node, cst.Name) and node.value == name:
                parent = parents.get(id(node))
                if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AugAssign, cst.For, cst.AnnAssign))
                                                            and getattr(parent, "target", None) is node):
                    bindings += 1
                elif isinstance(parent, (cst.Global, cst.Nonlocal, cst.NameItem)):
                    return None
                else:
                    reads.append(node)
        return reads if bindings == 1 else None

    def _in_product(self, use: cst.Name, function: cst.FunctionDef) -> bool:
        """`use` is (a view of) an operand of a matrix product (`torch.matmul`, `@`, `F.linear`, `einsum`)."""
        parents = self._parent_map(function)
        current: cst.CSTNode = use
        for _ in range(4):
            parent = parents.get(id(current))
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.MatrixMultiply):
                return True
            if isinstance(parent, cst.Arg):
                call = parents.get(id(parent))
                last = (self.facts.qualify(call.func) or "").rsplit(".", 1)[-1] if isinstance(call, cst.Call) else ""
                return last in _PRODUCTS
            if parent is None:
                return False
            current = parent
        return False

    @staticmethod
    def _in_loop(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
        current = parents.get(id(node))
        while current is not None and not isinstance(current, cst.FunctionDef):
            if isinstance(current, (cst.For, cst.While)):
                return True
            current = parents.get(id(current))
        return False

    def _parent_map(self, function: cst.FunctionDef) -> dict[int, cst.CSTNode]:
        found = self._parents.get(id(function))
        if found is None:
            found = self._parents[id(function)] = remembered("parents", function, lambda: parent_map(function))
        return found

    def _stride_free(self, node: cst.CSTNode, function: cst.FunctionDef, depth: int) -> bool:
        """Whether the use of a (strided) tensor at `node` takes it as it is."""
        parents = self._parent_map(function)
        parent = parents.get(id(node))
        if parent is None:
            return False
        if isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation)):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attr = parent.attr.value
            if attr in _METADATA:
                return True
            if attr in _VIEW_ATTRIBUTES:
                return self._stride_free(parent, function, depth)
            call = parents.get(id(parent))
            if isinstance(call, cst.Call) and call.func is parent:
                if attr in _STRIDE_FREE_METHODS:
                    return True
                if attr in _VIEW_METHODS:
                    return self._stride_free(call, function, depth)
            return False
        if isinstance(parent, cst.Subscript) and parent.value is node:
            holder = parents.get(id(parent))
            if isinstance(holder, cst.AssignTarget) or isinstance(holder, cst.AugAssign):
                return True  # `y[mask] = 0`: index assignment writes strided memory as well
            return self._stride_free(parent, function, depth)
        if isinstance(parent, cst.SubscriptElement) or isinstance(parent, cst.Index):
            return True  # used as an index
        if isinstance(parent, cst.Arg):
            call = parents.get(id(parent))
            if not isinstance(call, cst.Call):
                return False
            if _torch_op(self.facts.qualify(call.func) or ""):
                return True
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in _STRIDE_FREE_ARGUMENT_METHODS \
                    and self.facts.value_of(call.func.value).is_tensor:
                return True
            return self._stride_free_parameter(call, parent, depth)
        return False

    def _stride_free_parameter(self, call: cst.Call, arg: cst.Arg, depth: int) -> bool:
        """A function of this module whose matching parameter is used only in ways that take strided tensors."""
        summaries = self.facts.summaries
        if depth <= 0 or summaries is None:
            return False
        info = summaries.resolve(call, self.facts.evaluator, {})
        if info is None:
            return False
        if arg.keyword is not None:
            parameter = arg.keyword.value
        else:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if arg not in positional or positional.index(arg) >= len(info.positional):
                return False
            parameter = info.positional[positional.index(arg)]
        return _parameter_stride_free(info, parameter, self.facts.index, depth - 1)


def _parameter_stride_free(info: FunctionInfo, parameter: str, index: Any, depth: int) -> bool:
    """Every use of `parameter` in `info`'s function (read with `ast`) takes a strided tensor as it is."""
    node = info.node
    parents: dict[int, ast.AST] = {}
    for parent in ast.walk(node):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
    names: dict[str, list[ast.Name]] = {}
    for name in ast.walk(node):
        if isinstance(name, ast.Name):
            names.setdefault(name.id, []).append(name)
    uses = names.get(parameter, [])
    if not uses or any(isinstance(n.ctx, (ast.Store, ast.Del)) for n in uses):
        return False
    return all(_ast_stride_free(n, parents, index, names) for n in uses)


def _iterated_rows_stride_free(node: ast.AST, parents: dict[int, ast.AST], index: Any, names: dict[str, list[ast.Name]],
                               depth: int) -> Optional[bool]:
    """`for row in x`, `[f(r) for r in x]`, `zip(x, y)` or `enumerate(x)` iterated: the rows are views of `x`, as strided
    as it is; whether every use of them takes that. None when `node` is not iterated so."""
    parent = parents.get(id(node))
    position: Optional[int] = None
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("zip", "enumerate") \
            and node in parent.args:
        position = parent.args.index(node) + (parent.func.id == "enumerate")
        node, parent = parent, parents.get(id(parent))
    if not isinstance(parent, (ast.For, ast.comprehension)) or parent.iter is not node:
        return None
    target = parent.target
    if position is not None:
        if not isinstance(target, ast.Tuple) or position >= len(target.elts):
            return False
        target = target.elts[position]
    if not isinstance(target, ast.Name) or depth <= 0:
        return False
    rows = [n for n in names.get(target.id, []) if n is not target]
    if any(isinstance(n.ctx, (ast.Store, ast.Del)) for n in rows):
        return False
    return all(_ast_stride_free(n, parents, index, names, depth - 1) for n in rows)


def _ast_stride_free(node: ast.AST, parents: dict[int, ast.AST], index: Any,
                     names: Optional[dict[str, list[ast.Name]]] = None, depth: int = 2) -> bool:
    if names is not None:
        iterated = _iterated_rows_stride_free(node, parents, index, names, depth)
        if iterated is not None:
            return iterated
    parent = parents.get(id(node))
    if isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp)):
        return True
    if isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr in _METADATA:
            return True
        if parent.attr in _VIEW_ATTRIBUTES:
            return _ast_stride_free(parent, parents, index, names, depth)
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and call.func is parent:
            if parent.attr in _STRIDE_FREE_METHODS:
                return True
            if parent.attr in _VIEW_METHODS:
                return _ast_stride_free(call, parents, index, names, depth)
        return False
    if isinstance(parent, ast.Subscript):
        if parent.value is node:
            return isinstance(parent.ctx, ast.Store) or _ast_stride_free(parent, parents, index, names, depth)
        return True  # used as an index
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if isinstance(parent, ast.Call) and parent.func is not node:
        if isinstance(parent.func, ast.Attribute) and parent.func.attr in _STRIDE_FREE_ARGUMENT_METHODS \
                and parent.func.attr not in ("to", "add", "where"):
            return True  # `row_logps.gather(dim=-1, index=row_labels)` (what `to`, `add`, `where` are called on is not read here)
        target = dotted(parent.func)
        head, _, rest = (target or "").partition(".")
        qualified = index.aliases.get(head, head) + ("." + rest if rest else "") if target else ""
        return _torch_op(qualified)
    return False


def _torch_op(qualified: str) -> bool:
    """A `torch` operation that computes from its inputs (`torch.log_softmax`, `F.cross_entropy`): not a class
    that keeps the tensor (`nn.Parameter(w)`), not I/O, not a collective or custom op."""
    last = qualified.rsplit(".", 1)[-1]
    return qualified.startswith("torch.") and not qualified.startswith(_CONTIGUITY_NAMESPACES) \
        and last[:1].islower() and last not in ("save", "load", "as_strided", "from_numpy") and last not in _RESHAPING


