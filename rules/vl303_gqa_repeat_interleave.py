"""VL303: K/V heads copied with repeat_interleave/repeat/expand+reshape before scaled_dot_product_attention."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.rule import Rule

SDPA = "torch.nn.functional.scaled_dot_product_attention"
# Methods applied after the repeat that keep the repeated copy (it still reaches SDPA).
_PASS_THROUGH_METHODS = frozenset({"transpose", "contiguous", "to", "view", "permute"})
# The heads dimension of a (batch, heads, seq, dim) tensor, as a repeat dimension.
_HEAD_DIMS = ("1", "-3")


class GqaRepeatInterleave(Rule):
    """
    ## What it does
    Flags a call of `torch.nn.functional.scaled_dot_product_attention` whose key or value
    has had its heads repeated in the same function, with
    `k.repeat_interleave(n, dim=1)`, `k.repeat(1, n, 1, 1)`,
    `k[:, :, None].expand(b, h, n, s, d).reshape(b, h * n, s, d)`, or a helper of the
    same module that does one of those (Hugging Face's `repeat_kv(hidden, n_rep)`),
    directly or through a name (`k = repeat_kv(k, n)`, then `sdpa(q, k, v)`).

    It stays silent when the call passes `enable_gqa` or `**kwargs`, when the function
    mentions `enable_gqa` at all (code that already chooses between the two paths), when
    the repeat is along another dimension than the heads (dimension 1 or -3), and when
    the call passes an `attn_mask`: PyTorch documents GQA for the flash and math kernels
    only, a mask rules out flash, and the math kernel repeats the heads itself (and
    materialises the attention matrix, which the memory-efficient kernel used with the
    repeated heads does not).

    ## Why it matters
    Grouped-query attention shares each K/V head among `n_rep` query heads. Repeating
    the heads materialises `n_rep` copies: K and V take `n_rep` times their memory and
    bandwidth on every call, which for long contexts is often the largest tensor of the
    layer. Since torch 2.5, `scaled_dot_product_attention(q, k, v, enable_gqa=True)`
    accepts fewer K/V heads than query heads and gives the same result. The flash
    kernel reads the shared heads without copying; the math fallback (used on CPU)
    still repeats internally, so the saving is on CUDA with the flash kernel.

    ## Example
    ```python
    k = k.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)
    v = v.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ```

    ## Fix
    ```python
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    ```
    No automatic fix: the repeats must go too, and `enable_gqa` needs torch >= 2.5.
    """

    code = "VL303"
    name = "gqa-repeat-interleave"
    summary = "K/V heads repeated before scaled_dot_product_attention: `enable_gqa=True` needs no copy"

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("scaled_dot_product_attention")

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        # Per function: name -> the head-repeating expression last assigned to it (None: something else).
        self._repeats: list[dict[str, Optional[cst.BaseExpression]]] = []
        # Per function: its node, and whether its text mentions `enable_gqa` (computed on first need).
        self._functions: list[cst.FunctionDef] = []
        self._mentions_gqa: dict[int, bool] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._repeats.append({})
        self._functions.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._repeats.pop()
        self._functions.pop()

    def leave_Assign(self, node: cst.Assign) -> None:
        if not self._repeats:
            return
        for target in node.targets:
            self._record(target.target, node.value)

    def _record(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        scope = self._repeats[-1]
        if isinstance(target, cst.Name):
            scope[target.value] = self._head_repeat(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, element in enumerate(target.elements):
                inner = values[i].value if values is not None and i < len(values) else None
                if isinstance(element.value, cst.Name):
                    scope[element.value.value] = self._head_repeat(inner) if inner is not None else None

    def visit_Call(self, node: cst.Call) -> None:
        if not self._repeats or self.facts.qualify(node.func) != SDPA:
            return
        if self._mentions_gqa_here():
            return
        if any(arg.keyword is not None and arg.keyword.value == "enable_gqa" for arg in node.args):
            return
        if any(arg.star == "**" for arg in node.args):
            return  # `**kwargs` may carry `enable_gqa` or a mask
        mask = self._argument(node, 3, "attn_mask")
        if mask is not None and not (isinstance(mask, cst.Name) and mask.value == "None"):
            return  # with a mask the flash kernel is out, and GQA then runs on the math kernel, which repeats anyway
        repeated: list[tuple[str, cst.BaseExpression]] = []
        for position, keyword in ((1, "key"), (2, "value")):
            arg = self._argument(node, position, keyword)
            if arg is None:
                continue
            source = self._head_repeat(arg)
            if source is None and isinstance(arg, cst.Name):
                source = self._repeats[-1].get(arg.value)
            if source is not None:
                repeated.append((f"`{arg.value}`" if isinstance(arg, cst.Name) else f"the {keyword}", source))
        if not repeated:
            return
        names = " and ".join(name for name, _ in repeated)
        how = self.facts.short_source(repeated[0][1], 70)
        self.report(
            node,
            f"{names[0].upper() + names[1:] if names.startswith('the') else names} {'have' if len(repeated) > 1 else 'has'} repeated heads (`{how}`) before "
            f"`scaled_dot_product_attention`: the copy multiplies K/V memory by the group size",
            fix_message="drop the repeat and pass `enable_gqa=True` (torch >= 2.5)",
        )

    def _mentions_gqa_here(self) -> bool:
        """The enclosing function's text mentions `enable_gqa` (a flag it passes on, a version check)."""
        function = self._functions[-1]
        if id(function) not in self._mentions_gqa:
            self._mentions_gqa[id(function)] = "enable_gqa" in self.facts.module.code_for_node(function)
        return self._mentions_gqa[id(function)]

    @staticmethod
    def _argument(node: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) > position:
            return positional[position].value
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg.value
        return None

    def _head_repeat(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """`node` itself when it repeats the heads of a tensor, else None."""
        current = node
        # `repeat_kv(k, n).transpose(1, 2)` still passes the repeated copy on.
        while (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Attribute)
            and current.func.attr.value in _PASS_THROUGH_METHODS
        ):
            current = current.func.value
        if not isinstance(current, cst.Call):
            return None
        func = current.func
        qualified = self.facts.qualify(func)
        if isinstance(func, cst.Name) and qualified is None and func.value in self.facts.index.head_repeat_functions:
            return node if len(current.args) >= 2 else None
        if qualified == "torch.repeat_interleave":
            return node if self._repeat_dim(current.args[2:], "dim") in _HEAD_DIMS else None
        if qualified is not None or not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method == "repeat_interleave":
            return node if self._repeat_dim(current.args[1:], "dim") in _HEAD_DIMS else None
        if method == "repeat":
            return node if self._repeats_dim_one(current.args) else None
        if method in ("reshape", "flatten") and isinstance(func.value, cst.Call):
            inner = func.value
            if isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "expand":
                # `x[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)`
                expand_args = [a for a in inner.args if a.keyword is None and not a.star]
                return node if len(expand_args) == 5 else None
        return None

    def _repeat_dim(self, args: tuple[cst.Arg, ...] | list[cst.Arg] | object, keyword: str) -> Optional[str]:
        """The `dim` of a repeat_interleave call (positional after the repeats, or `dim=`)."""
        for arg in args:  # type: ignore[attr-defined]
            if arg.keyword is None and not arg.star:
                return self.facts.module.code_for_node(arg.value).strip()
            if arg.keyword is not None and arg.keyword.value == keyword:
                return self.facts.module.code_for_node(arg.value).strip()
        return None

    def _repeats_dim_one(self, args: tuple[cst.Arg, ...] | list[cst.Arg] | object) -> bool:
        """`x.repeat(1, n, 1, 1)`: only the heads dimension of a 4-D tensor is repeated."""
        positional = [a.value for a in args if a.keyword is None and not a.star]  # type: ignore[attr-defined]
        if len(positional) != 4:
            return False
        ones = [isinstance(v, cst.Integer) and v.value == "1" for v in positional]
        return ones[0] and ones[2] and ones[3] and not ones[1]
