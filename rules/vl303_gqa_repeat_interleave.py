"""VL303: K/V heads copied with repeat_interleave/repeat/expand+reshape before scaled_dot_product_attention."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.callgraph import FunctionInfo, FunctionKey, callgraph_of
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import dotted
from viewlint.analysis.tree import descendants, dotted_name
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
    `k[:, :, None].expand(b, h, n, s, d).reshape(b, h * n, s, d)` (or `.contiguous().view(...)`), or a helper of the
    same module that does one of those (Hugging Face's `repeat_kv(hidden, n_rep)`),
    directly or through a name (`k = repeat_kv(k, n)`, then `sdpa(q, k, v)`), also when a call given the
    repeated tensor hands it back under its name (`q, k = self.apply_rope(q, k, rope)`: a rotation or a norm
    keeps every repeated head).

    It stays silent when the call passes `enable_gqa` or `**kwargs`, when the function
    mentions `enable_gqa` at all (code that already chooses between the two paths), when
    the repeat is along another dimension than the heads (dimension 1 or -3), and when
    the call passes an `attn_mask` that is a tensor on every call (a parameter that may be `None`,
    `mask: Optional[torch.Tensor]`, or one the function tests against `None`, itself or what it was set from,
    leaves the maskless calls paying for the copy): PyTorch documents GQA for the flash and math kernels
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
    reports_a_cost = True
    name = "gqa-repeat-interleave"
    summary = "K/V heads repeated before scaled_dot_product_attention: `enable_gqa=True` needs no copy"

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        # SDPA itself, or a call of something of this module that reaches it (a wrapper, a module holding one).
        needs: features.Needs = features.calls("scaled_dot_product_attention")
        wrappers = attention_wrapper_names(index)
        return needs + features.calls(*wrappers) if wrappers else needs

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        # Per function: name -> (the head-repeating expression last assigned to it, its statement); None: other.
        self._repeats: list[dict[str, Optional[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]]] = []
        # Per function: its node, and whether its text mentions `enable_gqa` (computed on first need).
        self._functions: list[cst.FunctionDef] = []
        self._mentions_gqa: dict[int, bool] = {}
        self._reported: set[int] = set()

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
        statement = self.facts.current_statement
        if isinstance(target, cst.Name):
            found = self._head_repeat(value)
            scope[target.value] = (found, statement) if found is not None else (
                self._passed_on(value) or self._rebound(target.value, value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, element in enumerate(target.elements):
                inner = values[i].value if values is not None and i < len(values) else None
                if isinstance(element.value, cst.Name):
                    found = self._head_repeat(inner) if inner is not None else None
                    scope[element.value.value] = (found, statement) if found is not None else (
                        self._passed_on(inner) if inner is not None else self._rebound(element.value.value, value))

    def _rebound(self, name: str, value: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]:
        """`q, k = self.apply_rope(q, k, rope)` of a repeated `k`: a call given the repeated tensor whose result takes
        its name back (a rotation, a norm) carries the repeated heads on to the attention."""
        if isinstance(value, cst.Call) and any(isinstance(a.value, cst.Name) and a.value.value == name and a.keyword is None
                                               for a in value.args):
            return self._repeats[-1].get(name)
        return None

    def _passed_on(self, value: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]:
        """`xk = keys.transpose(1, 2)` of a repeated `keys`: the repeat (where it was made) reaches on."""
        current = value
        while isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                and current.func.attr.value in _PASS_THROUGH_METHODS:
            current = current.func.value
        if isinstance(current, cst.Name) and self._repeats:
            return self._repeats[-1].get(current.value)
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if not self._repeats:
            return
        target = self._attention(node)
        if target is None or self._mentions_gqa_here():
            return
        key_at, value_at, label = target
        repeated: list[tuple[str, cst.BaseExpression, Optional[cst.CSTNode]]] = []
        for position, keyword in (key_at, value_at):
            arg = self._argument(node, position, keyword)
            if arg is None:
                continue
            source = self._head_repeat(arg)
            if source is not None:
                repeated.append((keyword, source, None))
            elif isinstance(arg, cst.Name) and self._repeats[-1].get(arg.value) is not None:
                made, statement = self._repeats[-1][arg.value]  # type: ignore[misc]
                repeated.append((keyword, made, statement))
        for keyword, made, statement in repeated:
            if id(made) in self._reported:
                continue
            self._reported.add(id(made))
            how = self.facts.short_source(made, 70)
            self.report(
                made,
                f"`{how}` copies the {keyword} heads once per query group before {label}: the copy multiplies "
                f"K/V memory and bandwidth by the group size on every call",
                fix_message="drop the repeat and pass `enable_gqa=True` to `scaled_dot_product_attention` "
                            "(torch >= 2.5), which shares the K/V heads without a copy",
                statement=statement,
            )

    def _attention(self, node: cst.Call) -> Optional[tuple[tuple[int, str], tuple[int, str], str]]:
        """When `node` runs scaled dot-product attention without `enable_gqa` (directly, through a function of this
        module that passes its arguments on, or through a module held in `self`): where its key and value go."""
        facts = self.facts
        if facts.qualify(node.func) == SDPA or self._held_function(node.func) == SDPA:
            if any(arg.keyword is not None and arg.keyword.value == "enable_gqa" for arg in node.args):
                return None
            if any(arg.star == "**" for arg in node.args):
                return None  # `**kwargs` may carry `enable_gqa` or a mask
            if self._masked(node, self._argument(node, 3, "attn_mask")):
                return None
            return (1, "key"), (2, "value"), "`scaled_dot_product_attention`"
        wrapper = self._wrapper(node)
        if wrapper is None:
            return None
        info, spec = wrapper
        if spec.gqa == "on":
            return None
        passed = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        if spec.gqa is not None and spec.gqa != "off" and (spec.gqa in passed or any(a.star == "**" for a in node.args)):
            return None  # the caller chooses (`enable_gqa=...` passed, or maybe through `**kwargs`)
        return (spec.key[0], spec.key[1]), (spec.value[0], spec.value[1]), f"`{info.key}` (which calls `scaled_dot_product_attention`)"

    def _held_function(self, func: cst.BaseExpression) -> Optional[str]:
        """`self.attn_fn(...)` where the class sets `self.attn_fn = F.scaled_dot_product_attention`."""
        name = dotted_name(func)
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return None
        info = self.facts.index.classes.get(self.facts.class_name or "")
        return info.function_attributes.get(name[5:]) if info is not None else None

    def _wrapper(self, node: cst.Call) -> Optional[tuple[Any, "WrapperSpec"]]:
        summaries = self.facts.summaries
        if summaries is None:
            return None
        info = summaries.resolve(node, self.facts.evaluator, {})
        if info is None and isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == "self":
            # `self.inner_attention(q, k, v)`: a module of this module's classes, held in an attribute.
            owner = self.facts.index.classes.get(self.facts.class_name or "")
            held = owner.attribute_classes.get(node.func.attr.value) if owner is not None else None
            if held is not None:
                info = summaries.functions.get(FunctionKey(held, "forward"))
        if info is None:
            return None
        spec = wrapper_spec(info, self.facts.index)
        return (info, spec) if spec is not None else None

    def _masked(self, node: cst.Call, mask: Optional[cst.BaseExpression]) -> bool:
        """A mask that is a tensor on the common path (with a mask the flash kernel is out, and GQA then runs on
        the math kernel, which repeats anyway); not one that is `None` unless the caller passes one."""
        if mask is None or (isinstance(mask, cst.Name) and mask.value == "None"):
            return False
        if self.facts.value_of(mask).optional:
            return False  # `attention_mask: Optional[torch.Tensor]`: `None` on some calls, where the copy is waste
        if isinstance(mask, cst.Name):
            function = self._functions[-1]
            for param in [*function.params.params, *function.params.kwonly_params]:
                if param.name.value == mask.value and isinstance(param.default, cst.Name) and param.default.value == "None":
                    return False  # `attn_mask=None` by default: the common call has no mask
                if param.name.value == mask.value and param.annotation is not None and _admits_none(param.annotation.annotation):
                    return False  # `mask: Optional[torch.Tensor]`: some calls pass none
            # Set to `None`, or tested against it, itself or what it was set from (`causal_mask = attention_mask`
            # after `if attention_mask is not None`): the code says some calls have no mask.
            names = {mask.value}
            for inner in descendants(function):
                if isinstance(inner, cst.Assign) and isinstance(inner.value, cst.Name) \
                        and any(isinstance(t.target, cst.Name) and t.target.value == mask.value for t in inner.targets):
                    if inner.value.value == "None":
                        return False
                    names.add(inner.value.value)
            for inner in descendants(function):
                if isinstance(inner, cst.Comparison) and isinstance(inner.left, cst.Name) and inner.left.value in names \
                        and any(isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name)
                                and c.comparator.value == "None" for c in inner.comparisons):
                    return False
        return True

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
        copied = False  # a `.contiguous()` on the way: of an expanded tensor, it is the copy
        # `repeat_kv(k, n).transpose(1, 2)` still passes the repeated copy on.
        while (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Attribute)
            and current.func.attr.value in _PASS_THROUGH_METHODS
        ):
            copied = copied or current.func.attr.value == "contiguous"
            current = current.func.value
        if copied and isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                and current.func.attr.value == "expand":
            # `k[:, :, None].expand(b, h, n_rep, s, d).contiguous().view(b, h * n_rep, s, d)`
            return node if len([a for a in current.args if a.keyword is None and not a.star]) == 5 else None
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
        if method in ("reshape", "flatten", "view") and isinstance(func.value, cst.Call):
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


@dataclass(frozen=True)
class WrapperSpec:
    """How a function of the module passes its arguments on to scaled dot-product attention."""

    key: tuple[int, str]  # (position among the arguments a caller passes, keyword)
    value: tuple[int, str]
    gqa: Optional[str]  # "on": passes `enable_gqa=True`; "off": never passes it; else its own parameter's name


def wrapper_spec(info: FunctionInfo, index: ModuleIndex) -> Optional[WrapperSpec]:
    """`def attention(q, k, v, ...): return F.scaled_dot_product_attention(q, k, v, ...)`: where `k` and `v` come in."""
    memo = index.memo.setdefault("VL303.wrappers", {})
    if info.key in memo:
        return memo[info.key]  # type: ignore[no-any-return]
    spec: Optional[WrapperSpec] = None
    names = list(info.positional) + list(info.keyword_only)
    for node in ast.walk(info.node):
        if not isinstance(node, ast.Call):
            continue
        target = dotted(node.func)
        if target is None:
            continue
        head, _, rest = target.partition(".")
        qualified = index.aliases.get(head, head) + ("." + rest if rest else "")
        if qualified != SDPA:
            continue
        key = _passed(node, 1, "key", names, info)
        value = _passed(node, 2, "value", names, info)
        if key is None or value is None:
            continue
        gqa: Optional[str] = "off"
        for keyword in node.keywords:
            if keyword.arg == "enable_gqa":
                if isinstance(keyword.value, ast.Constant):
                    gqa = "on" if keyword.value.value else "off"
                elif isinstance(keyword.value, ast.Name) and keyword.value.id in names:
                    default = info.defaults.get(keyword.value.id)
                    gqa = keyword.value.id if not (isinstance(default, ast.Constant) and default.value is True) else "on"
                else:
                    gqa = "on"  # computed: the wrapper decides
            elif keyword.arg is None:
                gqa = "kwargs"
        spec = WrapperSpec(key, value, gqa)
        break
    memo[info.key] = spec
    return spec


def _passed(call: ast.Call, position: int, keyword: str, names: list[str], info: FunctionInfo) -> Optional[tuple[int, str]]:
    """The wrapper's own parameter that reaches SDPA's `position`/`keyword` argument, as (its position, its name)."""
    arg: Optional[ast.AST] = call.args[position] if len(call.args) > position and not isinstance(call.args[position], ast.Starred) else None
    if arg is None:
        arg = next((k.value for k in call.keywords if k.arg == keyword), None)
    if not isinstance(arg, ast.Name) or arg.id not in names:
        return None
    where = info.positional.index(arg.id) if arg.id in info.positional else 1 << 10
    return where, arg.id


def attention_wrapper_names(index: object) -> tuple[str, ...]:
    """The names under which this module's attention wrappers are called (for the prefilter): the functions and
    methods that pass their arguments on to SDPA, and the attributes holding a module whose `forward` does."""
    if getattr(index, "tree", None) is None:
        return ()
    memo = index.memo  # type: ignore[attr-defined]
    if "VL303.names" in memo:
        return memo["VL303.names"]  # type: ignore[no-any-return]
    if "scaled_dot_product_attention" not in index.source:  # type: ignore[attr-defined]
        memo["VL303.names"] = ()
        return ()
    graph = callgraph_of(index)  # type: ignore[arg-type]
    names: set[str] = set()
    wrapping_classes = set()
    for key, info in graph.functions.items():
        if wrapper_spec(info, index) is not None:  # type: ignore[arg-type]
            names.add(key.name)
            if key.name == "forward" and key.owner is not None:
                wrapping_classes.add(key.owner)
    for info in index.classes.values():  # type: ignore[attr-defined]
        names.update(attr for attr, held in info.attribute_classes.items() if held in wrapping_classes)
        names.update(attr for attr, function in info.function_attributes.items() if function == SDPA)
    memo["VL303.names"] = found = tuple(sorted(names))
    return found


def _admits_none(annotation: cst.BaseExpression) -> bool:
    """`Optional[X]`, `X | None`, `Union[X, None]`."""
    return any(isinstance(n, cst.Name) and n.value in ("None", "Optional") for n in descendants(annotation)) \
        or (isinstance(annotation, cst.Name) and annotation.value == "None")
