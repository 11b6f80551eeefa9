"""VL304: `buf = buf.index_copy(…)`: an out-of-place update assigned back copies the whole buffer."""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import dotted_name
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# Methods that give every element of a tensor in another shape (`view` and `unflatten` a view, `reshape` and `flatten`
# a view or a copy).
_WHOLE_RESHAPES = frozenset({"view", "reshape", "flatten", "unflatten", "view_as", "reshape_as"})


class OutOfPlaceUpdateAssignedBack(Rule):
    """
    ## What it does
    Flags an out-of-place update whose result replaces its own receiver:
    `buf = buf.index_copy(0, idx, rows)`, `self.cache_k = self.cache_k.index_put((idx,), v)`,
    `x = x.scatter(1, idx, src)`, `mask = mask.index_fill(0, idx, True)`, and the same for
    `index_add`, `scatter_add`, `scatter_reduce`, `masked_scatter` and `masked_fill`, also spelled as a
    `torch` function and with more than one target (`k = self.k = torch.index_add(self.k, 2, pos, k)`).

    It fires when the buffer is long-lived (`self.<attr>`, any `obj.<attr>`) or was
    allocated by a factory in the same function (`torch.zeros(...)`, `x.new_zeros(...)`,
    `torch.empty_like(...)`, also when rebound to a view or reshape of all of itself: `result = result.view(-1, n)`),
    so that nothing else can see it. It stays silent on
    function arguments and other activations (`inputs_embeds = inputs_embeds.masked_scatter(…)`:
    the caller may still hold the tensor, and autograd may need the original), and when
    the buffer is also read by the update itself (`x = x.index_copy(0, idx, x)` must not
    become in place), and inside functions decorated as decompositions or lowerings
    (`@register_decomposition(...)`) or in modules that register them, which must stay functional.

    ## Why it matters
    The out-of-place form allocates a new tensor the size of the whole buffer and copies
    every element into it, only to change a few rows; the old buffer is then dropped.
    For a KV cache or a large state tensor that is a full read and write of the buffer
    (and a second buffer's worth of memory at the peak) on every call. The in-place form
    (`index_copy_`, `index_put_`, ...) writes only the selected elements.

    ## Example
    ```python
    self.cache_k = self.cache_k.index_copy(1, positions, k)   # copies the whole cache
    ```

    ## Fix
    ```python
    self.cache_k.index_copy_(1, positions, k)                 # writes only the new rows
    ```
    Fix safety: unsafe. The in-place form also changes every other reference to the
    buffer (a caller's tensor, a view of a larger cache) and can break autograd when the
    old value is needed for the backward pass.
    """

    code = "VL304"
    reports_a_cost = True
    name = "out-of-place-update-assigned-back"
    summary = "`buf = buf.index_copy(…)` copies the whole buffer: use the in-place `_` form"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("update-assigned"),),)

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        # Per function: local name -> the blocks around the assignment that made it a private buffer.
        self._private: list[dict[str, tuple[int, ...]]] = []
        # Per function: does it promise functional code (a registered decomposition or lowering)?
        self._functional: list[bool] = []
        # The indented blocks around the current statement (ids), innermost last.
        self._blocks: list[int] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._private.append({})
        decorators = " ".join(self.facts.module.code_for_node(d.decorator) for d in node.decorators)
        # Export code is functional too: what ONNX and TorchScript tracing record (`_onnx_merge_levels`).
        # A module that registers decompositions or lowerings keeps its helpers functional as well (torch's
        # `_nll_loss_backward`, called by the registered `nll_loss_backward`).
        registers = any(target.rsplit(".", 1)[-1] in ("register_decomposition", "register_lowering")
                        for target in self.facts.index.aliases.values())
        self._functional.append(registers or any(word in decorators for word in ("decomposition", "register_lowering", "out_wrapper"))
                                or any(word in node.name.value.lower() for word in ("onnx", "export")))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._private.pop()
        self._functional.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(id(node))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def _is_private(self, name: str) -> bool:
        """Allocated here, by an assignment in a block that encloses this point (not in a branch that may not run)."""
        if not self._private or name not in self._private[-1]:
            return False
        blocks = self._private[-1][name]
        return tuple(self._blocks[: len(blocks)]) == blocks

    def leave_Assign(self, node: cst.Assign) -> None:
        if not self._private:
            return
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and self._is_private(node.targets[0].target.value) \
                and self._reshapes_itself(node.value, node.targets[0].target.value):
            return  # `result = result.view(-1, n)`: the one name that held the buffer now holds all of it, reshaped
        for target in node.targets:
            for name in self._target_names(target.target):
                self._private[-1].pop(name, None)
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            if self._allocates(node.value) or self._is_update_of(node.value, name):
                self._private[-1][name] = tuple(self._blocks)

    def _check_replaced_cache(self, node: cst.Assign, call: cst.Call, method: str, receiver: cst.BaseExpression) -> None:
        """`k = cache_k.index_copy(2, input_pos, k)` in a hot path, `cache_k` never used again: the new tensor
        replaces the cache, so every call copies the whole cache to write a few positions."""
        facts = self.facts
        name = dotted_name(receiver) or ""
        root = name.split(".")[0]
        if not facts.in_hot_path or not facts.value_of(receiver).is_tensor and not self._cache_like(name):
            return
        if not (self._cache_like(name) or name.startswith("self.")):
            return
        if root != "self" and facts.reads_after(root, node):
            return  # the old buffer is still used: the copy may be the point
        self.report(
            node,
            f"`{facts.short_source(call)}` copies all of `{name}` to write a few entries, and the copy takes its place "
            f"on every call of hot path {facts.hot_path_name}",
            fix_message=f"update the cache in place: `{name}.{method}_(…)`, and use `{name}`",
        )

    @staticmethod
    def _cache_like(name: str) -> bool:
        last = name.split(".")[-1].lower()
        if "hidden" in last:
            return False  # `last_hidden_state`: a model's activations, not a cache it keeps
        return any(part in last for part in ("cache", "buffer", "buf", "pool", "state"))

    @staticmethod
    def _target_names(target: cst.BaseExpression) -> list[str]:
        if isinstance(target, cst.Name):
            return [target.value]
        if isinstance(target, (cst.Tuple, cst.List)):
            return [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
        return []

    def _allocates(self, value: cst.BaseExpression) -> bool:
        """`torch.zeros(...)`, `torch.empty_like(x)`, `x.new_zeros(...)`: a buffer nobody else holds."""
        if not isinstance(value, cst.Call):
            return False
        qualified = self.facts.qualify(value.func) or ""
        if qualified in semantics.FACTORY_FUNCTIONS or qualified in semantics.LIKE_FACTORY_FUNCTIONS:
            return True
        return isinstance(value.func, cst.Attribute) and value.func.attr.value in ("new_zeros", "new_empty", "new_ones", "new_full")

    @staticmethod
    def _reshapes_itself(value: cst.BaseExpression, name: str) -> bool:
        """`name.view(...)`, `name.reshape(...)`, `name.flatten(...)`: every element of the buffer, in another shape
        (a view of all of it, or a copy that nothing else holds either)."""
        return (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _WHOLE_RESHAPES
            and isinstance(value.func.value, cst.Name)
            and value.func.value.value == name
        )

    @staticmethod
    def _is_update_of(value: cst.BaseExpression, name: str) -> bool:
        return (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in semantics.OUT_OF_PLACE_UPDATE_METHODS
            and isinstance(value.func.value, cst.Name)
            and value.func.value.value == name
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        call = node.value
        update = self._update(call) if isinstance(call, cst.Call) else None
        if update is None:
            return
        receiver, method, args = update
        receiver_name = dotted_name(receiver)
        # `k = self.k = torch.index_add(self.k, ...)`: the target that is the receiver; the others name the result.
        matching = [t.target for t in node.targets if receiver_name is not None and dotted_name(t.target) == receiver_name]
        if len(node.targets) != 1 and not (len(matching) == 1 and all(
                isinstance(t.target, cst.Name) for t in node.targets if t.target is not matching[0])):
            return
        target = matching[0] if matching else node.targets[0].target
        target_name = dotted_name(target)
        if target_name is not None and receiver_name not in (None, target_name) and isinstance(target, cst.Name) \
                and isinstance(call.func, cst.Attribute):
            self._check_replaced_cache(node, call, method, receiver)  # type: ignore[arg-type]
            return
        if target_name is None or receiver_name != target_name or target_name in self.facts.index.aliases:
            return
        if self._functional and self._functional[-1]:
            return  # `@register_decomposition(...)`: functional by contract, the copy is the point
        private = self._is_private(target_name)
        if not (private or self._long_lived(target_name)):
            return
        if any(arg.star for arg in args) or self._reads_itself(args, target_name):
            return
        facts = self.facts
        arguments = ", ".join(
            (f"{arg.keyword.value}=" if arg.keyword is not None else "") + facts.source_for_edit(arg.value)
            for arg in args
        )
        others = "".join(f"{t.target.value} = " for t in node.targets if t.target is not target)  # type: ignore[attr-defined]
        replacement = f"{others}{facts.source_for_edit(receiver)}.{method}_({arguments})"
        spelled = f"{target_name}.{method}(…)" if isinstance(call.func, cst.Attribute) else f"torch.{method}({target_name}, …)"  # type: ignore[union-attr]
        self.report(
            node,
            f"`{target_name} = {spelled}` copies all of `{target_name}` to update a part of it",
            fix_message=f"update in place: `{target_name}.{method}_(…)`",
            edits=((node, replacement),),
        )

    def _update(self, call: cst.Call) -> Optional[tuple[cst.BaseExpression, str, Sequence[cst.Arg]]]:
        """(the buffer, the update, its other arguments) of `buf.index_copy(0, idx, rows)` or of the function spelling
        `torch.index_copy(buf, 0, idx, rows)`; None for any other call."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in semantics.OUT_OF_PLACE_UPDATE_METHODS:
            qualified = self.facts.index.qualify(func) or ""
            if qualified != f"torch.{func.attr.value}":
                return func.value, func.attr.value, call.args
        qualified = self.facts.index.qualify(func) or ""
        method = qualified[len("torch."):] if qualified.startswith("torch.") else ""
        if method in semantics.OUT_OF_PLACE_UPDATE_METHODS and call.args and call.args[0].keyword is None \
                and not call.args[0].star:
            return call.args[0].value, method, call.args[1:]
        return None

    def _reads_itself(self, args: Sequence[cst.Arg], name: str) -> bool:
        """The buffer's values feed the update (`x.index_copy(1, idx, x)`): in place would read what it writes."""
        text = " ".join(self.facts.module.code_for_node(arg.value) for arg in args)
        # Metadata reads are fine: `x.shape`, `x.size(0)`, `x.new_full(...)`, `x.dtype`, `x.device`.
        text = re.sub(re.escape(name) + r"\.(shape|size|dtype|device|ndim|dim|new_\w+)\b", "", text)
        return re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", text) is not None

    @staticmethod
    def _long_lived(name: str) -> bool:
        """`self.cache_k`, `layer.cache.keys`: an attribute outlives the call. (A local named like a
        cache, `pool_indices`, is not one: the name alone proves nothing.)"""
        return "." in name
