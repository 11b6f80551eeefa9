"""VL101: a view of part of a tensor is kept in a long-lived container and pins the whole tensor."""

from __future__ import annotations

import re
from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features

from viewlint.analysis.values import DELIBERATE_BASES, Value
from viewlint.analysis.facts import Facts
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule
from viewlint.analysis.returns import quoted_base

# Expressions that take a `.clone()` suffix without parentheses.
_ATOMS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call)


def clone_of(facts_source: str, node: cst.BaseExpression) -> str:
    """`x[:, 0]` -> `x[:, 0].clone()`, `a + b` -> `(a + b).clone()`."""
    return f"{facts_source}.clone()" if isinstance(node, _ATOMS) else f"({facts_source}).clone()"


# Stores that add to one sequence (a list, a deque, a queue): every piece of a split added there holds the base
# exactly. Keyed stores (`cache[k] = piece`, `cache.set(k, piece)`) evict entry by entry, so they still pin it.
_SEQUENCE_ADDS = (".append(...)", ".appendleft(...)", ".put(...)", ".put_nowait(...)", ".extend(...)")


class ViewStoredInLongLivedContainer(Rule):
    """
    ## What it does
    Flags a view of *part* of a tensor (a slice, an indexed row, a `split`/`chunk`/`unbind`
    piece, a row met while iterating a batch), bare or wrapped in a dataclass, tuple, list or
    dict, that is stored in a long-lived place: a container held by `self` or by the module,
    a receiver named like a cache/pool/store/registry (or listed in `long-lived-names`), a
    same-module function or method that keeps its argument, or the return value of a
    `functools.cache`/`lru_cache` function, or an attribute of `self` set outside set-up
    methods to a view of a tensor the call made (`self.last_logits = logits[:, -1]`), or a field
    of objects the function hands back (returns them, adds them to a list it returns, or
    iterates one) set to such a view (`hyps[i].y_sequence = logits[i][:n]`). Also a
    list (or dict) the function builds, fills in a loop and returns (or yields) when each
    entry is a view of a tensor that iteration makes (a model's output, or a tensor field of
    it): the container keeps every iteration's whole tensor
    (`feats.append(out.last_hidden_state[:, 0])` per batch, `index[doc_id] = hidden[0, 0]`,
    `bank.append(model(x)[:, 0])`). The same list read after a loop over a data source (a
    loader the caller passes, or a name that says it is one) and joined there
    (`torch.cat(bank)`) keeps every batch's whole tensor until the loop ends: the peak is
    the whole dataset's activations. A loop over `range(n)` or a list the function keeps is
    not read so. Set-up names (`build_*`) do not excuse such a list: it is no object's layout.

    ## Why it matters
    A view has no storage of its own: it keeps the *whole* storage of its base alive. One
    cached `[100, 4096]` bf16 piece of a `[1000, 4096]` encoder batch pins 7.81 MiB for a
    0.78 MiB payload, and a cache that admits one piece per batch keeps every batch alive
    (SGLang PR #39120). `.detach()` does not help: it is a view too.

    ## Example
    ```python
    pieces = torch.split(encoder_out, counts)
    for key, piece in zip(keys, pieces):
        cache.set(key, EmbeddingResult(embedding=piece))  # pins all of encoder_out
    self.saved.append(hidden[:, 0].detach())                # pins all of hidden
    ```

    ## Fix
    Store a copy that owns exactly its payload:
    ```python
        cache.set(key, EmbeddingResult(embedding=piece.clone()))
    self.saved.append(hidden[:, 0].detach().clone())
    ```
    Views that *are* the design are not flagged: views assigned to plain attributes
    (`self.k_buffer = raw[0]`), anything stored while building the object (`__init__`,
    `_init_*`, `setup`, `build*`, `create_*`), views of `self`-held or module-level tensors
    (they live as long anyway), views of a whole tensor (`.t()`, `.detach()`), containers
    local to a function, and stores in a function that reads a storage's size itself
    (`if t.untyped_storage().nbytes() > t.numel() * t.element_size(): t = t.clone()`).
    Fix safety: unsafe. `--unsafe-fixes` wraps the stored view in `.clone()`, which copies
    (memory and time) and breaks code that relied on writes through the view.
    """

    code = "VL101"
    default_enabled = False
    name = "view-stored-in-long-lived-container"
    summary = "A view of part of a tensor stored in a long-lived container pins the whole base storage"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: Any, settings: Any) -> features.Needs:
        # A store, or a `functools.cache`d return, of what may be a view of part of a tensor.
        return ((features.flag("retains-view"),), (features.flag("cached-returns-view"),))

    def __init__(self, facts: Facts, options: dict[str, Any]) -> None:
        super().__init__(facts, options)
        self._cached: list[bool] = []  # one entry per enclosing function: is it functools.cache'd?
        self._measuring: dict[int, bool] = {}  # function node id -> does it read a storage's size?

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check_stores(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._check_stores(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check_stores(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._cached.append(any(self._is_cache_decorator(d) for d in node.decorators))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._cached.pop()

    def visit_Return(self, node: cst.Return) -> None:
        if not self._cached or not self._cached[-1] or node.value is None:
            return
        view = self._leaking_view(self.facts.value_of(node.value))
        if view is None or not self._temporary_base(node.value):
            return
        text = self.facts.short_source(node.value)
        self.report(
            node.value,
            f"`{text}` returned by a cached function is a view of {quoted_base(view.base)} (via `{view.origin}`): "
            f"the cache keeps all the storage of {quoted_base(view.base)} alive for every entry.",
            fix_message=f"return `{text}.clone()`",
            edits=((node.value, clone_of(self.facts.source_for_edit(node.value), node.value)),),
        )

    # ------------------------------------------------------------------ helpers
    def _check_stores(self, node: cst.CSTNode) -> None:
        facts = self.facts
        events = facts.store_events(node)
        if facts.in_setup_function:
            # Views stored while building the object (`__init__`, `_init_*`) are its layout; a list the function fills
            # in a loop and hands back is no part of an object, whatever the function is called (`build_bank`).
            events = [e for e in events if e.loop is not None]
        if events and self._measures_storage():
            return  # `if t.untyped_storage().nbytes() > t.numel() * t.element_size(): t = t.clone()`: handled here
        # What one call stores in one go (`cache.update(qkv=qkv, key=k[:, :n])`) lives in one place together.
        together = set().union(*(e.value.held_bases() for e in events)) if len(events) > 1 else set()
        for event in events:
            view = self._leaking_view(event.value)
            if view is None:
                continue
            if view.base in together:
                continue  # the same store keeps the view's base itself: nothing extra is pinned
            if event.target.endswith(".data") and (facts.partitioned(event.value_node, view.base) or event.value.every_piece):
                continue  # every part of the tensor goes to some parameter: nothing extra is pinned
            if facts.pins_nothing_more(event.value, view):
                continue
            if event.value.every_piece and event.target.endswith(_SEQUENCE_ADDS) \
                    and isinstance(event.node, cst.Call) and len(event.node.args) == 1:
                continue  # `for page in idx.split(n): queue.put(page)`: the queue holds all of `idx`, nothing more
            stored = facts.short_source(event.value_node)
            inner = self._view_node(event.value_node)
            shown = facts.short_source(inner) if inner is not None else stored
            if event.value.is_view:
                what = "is a view"
            elif inner is not None:
                what = f"holds `{shown}`, a view"
            else:
                what = "holds a view"
            detach = " `.detach()` does not copy." if view.origin == ".detach()" else ""
            if event.loop is not None:
                verb = "stored in" if event.target.endswith("[...]") else "added by"
                held = re.split(r"[.\[ ]", event.target, maxsplit=1)[0]  # `outs.append(...)`, `raw += ...`
                keeps = f"the returned `{held}` keeps" if event.handed_back else f"`{held}` keeps, until the loop ends,"
                message = (
                    f"`{stored}` {verb} `{event.target}` on every iteration {what} of {quoted_base(view.base)} (via `{view.origin}`), "
                    f"which each iteration makes anew: {keeps} every iteration's whole {quoted_base(view.base)} alive.{detach}"
                )
            else:
                keeper = "the entry keeps" if event.target.endswith(("]", ")")) or ".data" in event.target \
                    else f"the object keeps, until `{event.target}` is set again,"
                message = (
                    f"`{stored}` stored in `{event.target}` {what} of {quoted_base(view.base)} (via `{view.origin}`): "
                    f"{keeper} all the storage of {quoted_base(view.base)} alive.{detach}"
                )
            if inner is not None:
                self.report(event.value_node, message, fix_message=f"store `{shown}.clone()`",
                            edits=((inner, clone_of(facts.source_for_edit(inner), inner)),))
            else:
                self.report(event.value_node, message, fix_message="store a `.clone()` of the view")

    def _measures_storage(self) -> bool:
        """The enclosing function reads the size of a storage (`untyped_storage()`, `storage()`): it tells views from
        what they pin itself."""
        function = self.facts.contexts.function
        node = function.node if function is not None else None
        if node is None:
            return False
        found = self._measuring.get(id(node))
        if found is None:
            text = self.facts.module.code_for_node(node)
            found = self._measuring[id(node)] = "untyped_storage()" in text or ".storage()" in text
        return found

    def _leaking_view(self, value: Value) -> Optional[Value]:
        """The first plain view of a part of a short-lived tensor inside `value`.

        Maybe-views (`.contiguous()` of a view) are VL102's; views of `self`-held or
        module-level tensors cost nothing extra.
        """
        views = value.retained_views()
        if any(v.is_maybe_view_of_view and v.partial for v in views):
            return None  # VL102 reports this value: never both
        for view in views:
            if view.is_view and view.partial and view.base is not None and not self.facts.outlives_function(view.base) \
                    and view.base_made not in DELIBERATE_BASES:
                return view
        return None

    def _view_node(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The sub-expression of a stored expression that is the leaking view (for the edit)."""
        return self.facts.holding_node(node, lambda value: value.is_view and self._leaking_view(value) is not None)

    def _temporary_base(self, node: cst.BaseExpression) -> bool:
        """The returned view's root is a tensor made in this call (a fresh local or a call result)."""
        current: Optional[cst.BaseExpression] = node
        for _ in range(10):
            if isinstance(current, (cst.Subscript, cst.Attribute)):
                current = current.value
            elif isinstance(current, cst.Call):
                if self.facts.value_of(current).is_fresh:
                    return True
                if (self.facts.qualify(current.func) or "").startswith("torch."):
                    current = current.args[0].value if current.args else None
                elif isinstance(current.func, cst.Attribute):
                    current = current.func.value
                else:
                    return False
            elif isinstance(current, cst.Name):
                value = self.facts.value_of(current)
                if value.is_view and not value.partial and value.base is not None and not value.base.isidentifier() \
                        and not self.facts.outlives_function(value.base):
                    return True  # all of a tensor made right there (`torch.arange(n).reshape(a, b)`)
                return value.is_fresh
            else:
                return False
        return False

    def _is_cache_decorator(self, decorator: cst.Decorator) -> bool:
        expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        qualified = self.facts.qualify(expr) or ""
        return qualified in ("functools.cache", "functools.lru_cache")
