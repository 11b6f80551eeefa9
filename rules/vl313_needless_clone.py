"""VL313: `.clone()` in a hot path of a tensor that nothing writes, the copy or the original."""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.read_only import appended_copies_joined, local_read_only, parameter_read_only
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.analysis.values import Provenance
from viewlint.rule import Rule


_HOST_READS = frozenset({"item", "tolist"})  # each reads the values out to new Python objects


class NeedlessClone(Rule):
    """
    ## What it does
    Flags, in a hot path (see VL401), `x.clone()` whose copy nothing can tell from `x`: handed to a function of the
    module that only reads that parameter (`self._find_start_stop_traj(trajectory=trajectory.clone())`), or bound to a
    name (`q = q.clone()`, `y = x.clone()`) that the rest of the function only reads, while it reads `x` only too.
    Reading means: attributes, methods without a trailing `_`, index reads, arithmetic and comparisons, arguments of
    `torch` functions (not `out=`) and of the module's functions that only read them in turn (three calls deep), the
    same for every view bound from it. A copy read only by `.item()` or `.tolist()` (`loss.clone().detach().item()`)
    is flagged too: those read the values out anyway. So is a copy appended to a list the function only hands to a join
    (`buf.append(logits[i].clone().detach())`, then `torch.stack(buf)`), where nothing writes the original from the loop
    around the append on: the join copies every item again. It stays silent when the copy or `x` is written in place, stored, returned,
    put in a container, captured by a closure or handed to any other call (a submodule, another object's method),
    any of which may be why the copy is there.

    ## Why it matters
    `clone()` allocates and copies the whole tensor on every call. A copy protects against a write (into it, or into
    the original while it is kept); where nothing writes, it is pure cost: TorchRL's slice sampler cloned the
    storage's trajectory column on every `sample()` (PR #2671), vLLM's CUTLASS MLA decode cloned both query parts on
    every step (PR #24891), Sparse-vLLM cloned K in every layer (issue #13).

    ## Example
    ```python
    vals = self._find_start_stop_traj(trajectory=trajectory.clone(), at_capacity=full)
    ```

    ## Fix
    ```python
    vals = self._find_start_stop_traj(trajectory=trajectory, at_capacity=full)
    ```
    No automatic fix: a later change that writes the tensor would need the copy back.
    """

    code = "VL313"
    reports_a_cost = True
    name = "needless-clone"
    summary = "`.clone()` in a hot path of a tensor that nothing writes, the copy or the original"
    hot_path_only = True
    default_enabled = False
    off_by_default_reason = (
        "New in issue 26's twenty-ninth pass, from blind probes written from public fixes (TorchRL,\n"
        "vLLM, Sparse-vLLM, ultralytics); what a callee of another module or a submodule does with the\n"
        "copy is out of its sight, so it stays quiet there, and its precision on libraries is still\n"
        "being measured (docs/precision/VL313.md).")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("clone")

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self._arguments: set[int] = set()  # clone calls that are arguments of a call (seen from that call)
        self._bindings: dict[int, cst.Call] = {}  # id(assign) -> its `.clone()` value

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        if not facts.in_hot_path:
            return
        if self._is_clone(node):
            return  # (judged from the call it is an argument of, or the assignment that binds it)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _HOST_READS and not node.args:
            clone = self._copied_for(func.value)
            if clone is not None:
                self._report(clone, f"its one reader is `.{func.attr.value}()`, which copies to the host anyway")
                return
        graph = facts.summaries.callgraph if facts.summaries is not None else None
        if graph is None:
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
                and len(node.args) == 1:
            clone = self._copied_for(node.args[0].value)
            function = facts.contexts.function
            if clone is not None and function is not None and isinstance(function.node, cst.FunctionDef):
                key = FunctionKey(function.class_name, function.node.name.value)
                join = appended_copies_joined(graph, key, func.value.value)
                if join is not None:
                    self._report(clone, f"`{func.value.value}` is only ever handed to `{join}`, which copies it again")
                    return
        for position, arg in enumerate(node.args):
            if arg.star or not (isinstance(arg.value, cst.Call) and self._is_clone(arg.value)):
                continue
            target = self._callee(node)
            if target is None:
                continue
            info = graph.functions[target]
            name = arg.keyword.value if arg.keyword is not None else info.positional[position] \
                if position < len(info.positional) else None
            if name is not None and parameter_read_only(graph, target, name):
                self._report(arg.value, f"`{target}` only reads its `{name}`")

    def visit_Assign(self, node: cst.Assign) -> None:
        facts = self.facts
        value = node.value
        if not (facts.in_hot_path and isinstance(value, cst.Call) and self._is_clone(value) and len(node.targets) == 1
                and isinstance(node.targets[0].target, cst.Name)):
            return
        graph = facts.summaries.callgraph if facts.summaries is not None else None
        function = facts.contexts.function
        if graph is None or function is None or not isinstance(function.node, cst.FunctionDef):
            return
        key = FunctionKey(function.class_name, function.node.name.value)
        line = self._ast_line(graph, key, function.node, node)
        if line is None:
            return
        bound = node.targets[0].target.value
        original = dotted_name(value.func.value)  # type: ignore[attr-defined]
        if original is None or "." in original:
            return  # `self.state.clone()`: whoever else holds the object may write it
        if not self._own_or_handed(original, function.node, node):
            return  # read out of an object (`cache.get_conv_state(i)`): a call on that object may write it meanwhile
        if not local_read_only(graph, key, bound, line) or (original != bound and not local_read_only(graph, key, original, line)):
            return
        self._report(value, f"the rest of `{key}` only reads `{bound}`" + (f" and `{original}`" if original != bound else ""))

    def _copied_for(self, read: cst.BaseExpression) -> Optional[cst.Call]:
        """The `.clone()` of a tensor that `read` is, through `.detach()`: `loss.clone().detach()`."""
        receiver = read
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and not receiver.args:
            if receiver.func.attr.value == "detach":
                receiver = receiver.func.value
                continue
            if receiver.func.attr.value == "clone" and (self._is_clone(receiver) or self.facts.value_of(read).is_tensor):
                return receiver
            return None
        return None

    def _own_or_handed(self, name: str, function: cst.FunctionDef, assign: cst.Assign) -> bool:
        """`name` holds a tensor this function made (a torch computation: nothing else refers to it) or a parameter
        it has not rebound before `assign` (what the caller holds, which this function's calls do not reach)."""
        if self.facts.value_of(cst.Name(name)).provenance is Provenance.FRESH:
            return True
        if name not in {p.name.value for p in (*function.params.params, *function.params.kwonly_params)}:
            return False
        for node in descendants(function.body):
            if node is assign:
                return True
            if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name:
                return False
        return False

    def _is_clone(self, node: cst.Call) -> bool:
        func = node.func
        return isinstance(func, cst.Attribute) and func.attr.value == "clone" \
            and all(arg.keyword is not None and arg.keyword.value == "memory_format" for arg in node.args) \
            and self.facts.value_of(func.value).is_tensor

    def _callee(self, call: cst.Call) -> Optional[FunctionKey]:
        """The one function of this module that `call` runs, as the summaries resolve it (a function, a method of the
        class, a submodule's `forward`); None where a subclass may run another."""
        summaries = self.facts.summaries
        info = summaries.resolve(call, self.facts.evaluator, {}) if summaries is not None else None
        if info is None or summaries.callgraph.overrides(info.key):  # type: ignore[union-attr]
            return None
        return info.key

    @staticmethod
    def _ast_line(graph, key: FunctionKey, function: cst.FunctionDef, assign: cst.Assign) -> Optional[int]:  # type: ignore[no-untyped-def]
        """The line of `assign` in the module's `ast`: the same-numbered `name = ….clone()` of the function there."""
        info = graph.functions.get(key)
        if info is None:
            return None
        name = assign.targets[0].target.value  # type: ignore[attr-defined]
        in_cst = [n for n in descendants(function.body) if isinstance(n, cst.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value == name
                  and isinstance(n.value, cst.Call) and isinstance(n.value.func, cst.Attribute) and n.value.func.attr.value == "clone"]
        in_ast = sorted((n for n in ast.walk(info.node) if type(n) is ast.Assign and len(n.targets) == 1
                         and type(n.targets[0]) is ast.Name and n.targets[0].id == name and type(n.value) is ast.Call
                         and type(n.value.func) is ast.Attribute and n.value.func.attr == "clone"),
                        key=lambda n: (n.lineno, n.col_offset))
        if len(in_cst) != len(in_ast) or not any(n is assign for n in in_cst):
            return None
        return in_ast[next(i for i, n in enumerate(in_cst) if n is assign)].lineno  # type: ignore[no-any-return]

    def _report(self, clone: cst.Call, why: str) -> None:
        facts = self.facts
        receiver = clone.func.value  # type: ignore[attr-defined]
        self.report(
            clone,
            f"`{facts.short_source(clone)}` copies `{facts.short_source(receiver, 40)}` on every call of hot path "
            f"{facts.hot_path_name}, and nothing writes the copy or the original ({why}): the copy protects nothing",
            fix_message=f"use `{facts.short_source(receiver, 40)}` itself",
        )
