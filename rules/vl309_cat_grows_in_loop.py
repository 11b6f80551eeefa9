"""VL309: a tensor grown by `torch.cat` on every iteration of a loop: `out = torch.cat([out, piece])`."""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterator, Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.contexts import Context
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.rule import Rule

# torch's joins along an existing dimension: each copies all of its inputs into a new tensor.
JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.hstack", "torch.vstack", "torch.row_stack",
                   "torch.column_stack", "torch.dstack"})
_LOOPS = (cst.For, cst.While)


class CatGrowsInLoop(Rule):
    """
    ## What it does
    Flags `x = torch.cat([x, piece])` (or `torch.concat`, `hstack`, `vstack`, …, the grown
    tensor first or last, a name or `self.<attr>`) inside a loop that binds `x` nowhere
    else: every iteration joins the new piece to all that the earlier ones gathered. The
    first-piece idiom counts too: `x = piece if x is None else torch.cat([x, piece])`, or
    an `if x is None: x = piece` branch next to the join, or a branch for the loop's first pass
    (`if first_iter: x = piece; first_iter = False`, `if i == 0:`).

    In a hot method (`forward`) no loop is needed: `self.cache_k = torch.cat([self.cache_k, k])`
    grows the object's tensor on every call, a decode step each (LLMs-from-scratch PR #673). So does an entry
    of a container the object keeps: `self.cache[layer] = torch.cat([self.cache[layer], k])`, or, in a
    cache's `update` that a `forward` calls, `past_key, past_value = self.cache[layer]`, then
    `key = torch.cat([past_key, key])` and `self.cache[layer] = (key, value)` (vLLM-Omni PR #5970). An entry read
    through a local alias (`existing = self.acc[k]`, then `self.acc[k] = torch.cat([existing, v])`) counts the same, as
    does a loop over the entries' keys around the join (`for k, v in incoming.items():`): each call grows each one. An entry
    given back only a window of the join (`key[:, :, -w:]`), or a join only read, grows nothing.

    Nor is the loop needed in the function that joins when a caller of the module loops for it: a helper that
    grows an entry of the container it is handed (`data3d[k] = torch.cat([data3d[k], piece])`) or returns the
    tensor it grows (`history = torch.cat([history, piece]); return history`), called on every iteration with the
    same container or tensor (`data = self.cat(data, out)`; neuromancer PR #291).

    It stays silent when the loop binds `x` in any other way (`x = x[:, -window:]` keeps a
    window, `x = layer(x)` makes a new tensor each time): then nothing accumulates. And when
    the new piece is a part of `x` itself (`x = torch.cat([x, x.flip(1)[:, :n]])`, padding by
    reflection): each join may double `x`, so the copying adds up to a few times the result.

    ## Why it matters
    `torch.cat` cannot append in place: it allocates a tensor for the whole result and
    copies every input into it. Grown once per iteration, the loop copies
    1 + 2 + … + n pieces, quadratic in its length, and keeps two full copies alive at the
    peak of each step. Gathering the predictions of an evaluation set so copies the
    gathered predictions once per batch; a generation loop that grows its latents or
    audio chunk by chunk copies all of them once per chunk (VoiceStudio PR #2259,
    ChatRWKV PR #177).

    ## Example
    ```python
    result = torch.zeros(0, dim)
    for chunk in chunks:
        result = torch.cat([result, model(chunk)])
    ```

    ## Fix
    ```python
    pieces = [model(chunk) for chunk in chunks]
    result = torch.cat(pieces)
    ```
    or, when the loop reads the whole tensor on every iteration (a decode loop feeding
    all tokens back), preallocate the final size once and write each piece into its slice.
    No automatic fix: where the pieces go depends on how the loop reads them.
    """

    code = "VL309"
    name = "cat-grows-in-loop"
    summary = "`x = torch.cat([x, piece])` in a loop copies all of `x` every iteration: quadratic in the loop's length"
    reports_a_cost = True
    default_enabled = False
    off_by_default_reason = (
        "On SGLang, transformers, diffusers and eight other libraries, 21 of 30 sampled findings held\n"
        "up (issue 26, fifteenth pass; three of the nine others, padding by reflection, are now left\n"
        "alone): the rest are loops that run once or twice in practice (one decode patch, one refiner\n"
        "block, a handful of reference images), which the code does not say. It stays a sharp check\n"
        "on evaluation and generation loops you write yourself.")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls(*(name.rsplit(".", 1)[1] for name in JOINS))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = dotted_name(node.targets[0].target) or _entry(node.targets[0].target) \
            or _parameter_entry(node.targets[0].target)
        if target is None:
            return
        spelled, target = target, self._expanded(target)
        join = self._join_growing(node.value, target)
        if join is None:
            return
        loop = self._innermost_loop()
        if loop is not None and target.startswith("self.") and self._keyed_loops(target):
            loop = None  # `for k, v in incoming.items(): self.acc[k] = torch.cat([self.acc[k], v])`: once a call each
        if "." not in target and (loop is None or "[" in target):  # (a loop over the keys grows each entry once)
            fed = self._fed_back_by_a_caller(target, join)
            if fed is not None:
                # `data3d[k] = torch.cat([data3d[k], piece])` in a helper whose caller loops `data = self.cat(data, out)`:
                # the caller's container grows by one piece per iteration, through the helper.
                self.report(
                    join,
                    f"`{target} = {self.facts.short_source(join)}` joins the new piece to all of `{target}`, and {fed}: "
                    f"each call copies everything the earlier ones gathered (quadratic in the loop's length)",
                    fix_message="collect the pieces in a list and join them once after the loop, or preallocate and "
                                "write into slices",
                )
                return
        if "[" in target and not target.startswith("self."):
            return  # an entry of a parameter's container no looping caller feeds back
        hot = loop is None and self.facts.in_hot_path and not self.facts.in_setup_function
        stored = _stored_back(join, target, self.facts.contexts.function) if hot and "." not in target else None
        if stored is not None:
            # `prev_key, prev_value = self.cache[layer]; key = torch.cat([prev_key, key]); self.cache[layer] = (key,
            # value)` in a cache's `update`: the entry grows on every call, as `self.cache_k` does below.
            self.report(
                join,
                f"`{target} = {self.facts.short_source(join)}` in hot path {self.facts.hot_path_name} joins the new piece "
                f"to all of `{stored}` and stores it back there: each call copies everything the earlier calls gathered "
                f"(quadratic in the number of calls)",
                fix_message="preallocate the final size once and write each piece into its slice",
            )
            return
        if hot and target.startswith("self."):
            # `self.cache_k = torch.cat([self.cache_k, k_new], dim=1)` in `forward`: the object's tensor grows on every
            # call (a decode step), and each call copies all of it.
            self.report(
                join,
                f"`{spelled} = {self.facts.short_source(join)}` in hot path {self.facts.hot_path_name} joins every new "
                f"piece to all of `{target}`: each call copies everything the earlier calls gathered "
                f"(quadratic in the number of calls)",
                fix_message="preallocate the final size once and write each piece into its slice",
            )
            return
        if loop is None or "[" in target or _rebound(loop, target, lambda other: other is node or (
                isinstance(other, cst.Assign) and self._join_growing(other.value, target, keeps_part=True) is not None)) \
                or _doubles(join, target, loop):
            return
        self.report(
            join,
            f"`{target} = {self.facts.short_source(join)}` in a loop joins every new piece to all of `{target}`: "
            f"each iteration copies everything the earlier ones gathered (quadratic in the loop's length)",
            fix_message="collect the pieces in a list and join them once after the loop, or preallocate and write into slices",
        )

    def _join_growing(self, value: cst.BaseExpression, target: str, keeps_part: bool = False) -> Optional[cst.Call]:
        """The `torch.cat([target, …])` that `value` is, or one arm of `piece if target is None else torch.cat(…)`.
        With ``keeps_part``, also a join of a part of it (`torch.cat([x[..., :-overlap], blended, piece])`): in a branch
        beside a growing join, it does not start the tensor over."""
        if isinstance(value, cst.IfExp):
            for arm, other in ((value.body, value.orelse), (value.orelse, value.body)):
                join = self._join_growing(arm, target, keeps_part)
                if join is not None and not _mentions(other, target):
                    return join
            return None
        if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
            return None
        if (self.facts.qualify(value.func) or "") not in JOINS:
            return None
        joined = value.args[0].value
        if not isinstance(joined, (cst.List, cst.Tuple)) or len(joined.elements) < 2:
            return None
        ends = (joined.elements[0].value, joined.elements[-1].value)
        if keeps_part:
            ends = tuple(end.value if isinstance(end, cst.Subscript) else end for end in ends)
        named = (dotted_name(end) or _entry(end) or _parameter_entry(end) for end in ends)
        return value if any(name is not None and self._expanded(name) == target for name in named) else None

    def _expanded(self, source: str) -> str:
        """`source` with a leading local alias of an entry spelled out: `existing[sk]` after `existing =
        self.acc[k]` is `self.acc[k][sk]` (a name bound once in the function, to a subscript of `self.…`)."""
        function = self.facts.contexts.function
        if function is None or function.node is None:
            return source
        memo = self.facts.index.memo
        aliases = memo.get(("entry aliases", id(function.node)))
        if aliases is None or aliases[0] is not function.node:  # type: ignore[index]
            aliases = memo[("entry aliases", id(function.node))] = (function.node, _entry_aliases(function.node))
        table: dict[str, str] = aliases[1]  # type: ignore[index]
        for _ in range(4):
            root = source.split("[", 1)[0].split(".", 1)[0]
            if root not in table or source[len(root):len(root) + 1] not in ("", "[", "."):
                break
            source = table[root] + source[len(root):]
        return source

    def _keyed_loops(self, target: str) -> bool:
        """Every loop around the statement, within its function, iterates over keys the entry `target` is indexed by
        (`for k, v in incoming.items():` around `self.acc[k] = …`): each call grows each entry once."""
        keys = set(re.findall(r"\[(\w+)\]", target))
        for context in reversed(self.facts.contexts.contexts):
            if context.kind in ("function", "class", "module"):
                return True
            if context.kind == "loop" and not (isinstance(context.node, cst.For) and keys & {
                    dotted_name(t) for t in _targets(context.node.target)}):
                return False
        return True

    def _fed_back_by_a_caller(self, target: str, join: cst.Call) -> Optional[str]:
        """How a caller calls this function in a loop, handing it on each iteration the same `target` (a parameter the
        function returns, or a parameter container whose entry it grows in place): "`System.forward` calls it on
        every iteration of a loop with the same `data`"; None when no caller does."""
        facts = self.facts
        function = facts.contexts.function
        summaries = facts.summaries
        if function is None or not isinstance(function.node, cst.FunctionDef) or summaries is None:
            return None
        root = target.split("[", 1)[0]
        params = [p.name.value for p in function.node.params.params]
        if root not in params or _doubles(join, target, function.node):
            return None  # (`torch.cat([tensor[cls_slice], tensor])`: a part of itself, not new data)
        if "[" not in target:
            after = False
            returns = []
            for node in descendants(function.node.body):
                after = after or node is join
                if after and isinstance(node, cst.Return):
                    returns.append(node)
            if not returns or any(n.value is None or dotted_name(n.value) != root for n in returns):
                return None  # a grown local the function keeps to itself, or hands back only a part of
        graph = summaries.callgraph
        key = FunctionKey(function.class_name, function.node.name.value)
        info = graph.functions.get(key)
        if info is None or root not in info.positional:
            return None
        position = info.positional.index(root)
        for caller in graph.callers.get(key, ()):
            caller_info = graph.functions.get(caller)
            if caller_info is None:
                continue
            for loop in _ast_loops(caller_info.node):
                for call in (n for n in ast.walk(loop) if isinstance(n, ast.Call)):
                    if key not in graph.call_targets(caller, call):
                        continue
                    argument = call.args[position] if position < len(call.args) else next(
                        (k.value for k in call.keywords if k.arg == root), None)
                    if isinstance(argument, ast.Name) and _same_object_each_time(loop, argument.id, call):
                        return f"`{caller}` calls it on every iteration of a loop with the same `{argument.id}`"
        return None

    def _innermost_loop(self) -> Optional[cst.CSTNode]:
        """The loop the statement runs in, within its function (a nested function's loop does not repeat it)."""
        for context in reversed(self.facts.contexts.contexts):
            if context.kind == "loop":
                return context.node if isinstance(context.node, _LOOPS) else None
            if context.kind in ("function", "class", "module"):
                return None
        return None


def _entry_aliases(function: cst.CSTNode) -> dict[str, str]:
    """Names the function binds exactly once, to an entry of a container the object holds or to a part of another such
    name (`existing = self.acc[k]`, `ev = existing[sk]`) -> that entry's source."""
    bound: dict[str, list[Optional[str]]] = {}
    for node in descendants(function):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name in _targets(target.target):
                    key = dotted_name(name)
                    if key is not None and "." not in key:
                        bound.setdefault(key, []).append(_entry(node.value) or _parameter_entry(node.value)
                                                         if len(node.targets) == 1 and name is target.target else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName)):
            for name in _targets(node.name if isinstance(node, cst.AsName) else node.target):  # type: ignore[arg-type]
                if dotted_name(name) is not None:
                    bound.setdefault(dotted_name(name), []).append(None)  # type: ignore[arg-type]
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


def _entry(node: cst.BaseExpression) -> Optional[str]:
    """`self.cache[layer]` (its source) for an entry of a container the object holds; None for anything else."""
    if isinstance(node, cst.Subscript) and (dotted_name(node.value) or "").startswith("self."):
        return cst.Module(body=[]).code_for_node(node)
    return None


def _parameter_entry(node: cst.BaseExpression) -> Optional[str]:
    """`data3d[k]` (its source) for an entry of a container a name holds; None for anything else."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        return cst.Module(body=[]).code_for_node(node)
    return None


def _ast_loops(function: ast.AST) -> Iterator[ast.AST]:
    """The loops of a function's own body (not those of functions defined in it)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            yield node
            continue  # (an inner loop is in this one's walk)
        stack.extend(ast.iter_child_nodes(node))


def _same_object_each_time(loop: ast.AST, name: str, call: ast.Call) -> bool:
    """Inside `loop`, `name` is bound only to what `call` returns (`data = self.cat(data, out)`), or not at all."""
    for node in ast.walk(loop):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)) else []
        for target in targets:
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                if not (isinstance(node, ast.Assign) and node.value is call):
                    return False
    return True


def _stored_back(join: cst.Call, target: str, function: Optional[Context]) -> Optional[str]:
    """`self.cache[layer]` when the join's other end was read from that entry (`prev_key, prev_value =
    self.cache[layer]`, `prev = self.cache[layer][0]`) and the function stores what it binds `target` to back into it
    (`self.cache[layer] = (key, value)`): the entry grows by the join on every call."""
    if function is None or function.node is None:
        return None
    joined = join.args[0].value
    assert isinstance(joined, (cst.List, cst.Tuple))
    ends = {dotted_name(e.value) for e in (joined.elements[0], joined.elements[-1])} - {None, target}
    read: set[str] = set()
    stores: list[cst.Assign] = []
    for statement in descendants(function.node):
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            continue
        bound = statement.targets[0].target
        value = statement.value
        if isinstance(value, cst.Subscript) and _entry(value.value) is not None and isinstance(bound, cst.Name):
            value = value.value  # `prev = self.cache[layer][0]`
        entry = _entry(value)
        if entry is not None and any(dotted_name(t) in ends for t in _targets(bound)):
            read.add(entry)
        if _entry(bound) is not None:
            stores.append(statement)
    for statement in stores:
        entry = _entry(statement.targets[0].target)
        stored = statement.value
        held = stored.elements if isinstance(stored, (cst.Tuple, cst.List)) else [cst.Element(stored)]
        if entry in read and any(dotted_name(e.value) == target for e in held):
            return entry  # the whole joined tensor (a window of it, `key[:, :, -w:]`, keeps its size)
    return None


def _doubles(join: cst.Call, target: str, loop: cst.CSTNode) -> bool:
    """The new piece is a part of the grown tensor itself (`x = torch.cat([x, x.flip(1)[:, :n]])`, or through a name the
    loop binds so: `reflected = video.flip(2)`): each join may double it, so the copying adds up to a few times the
    result, not to its square. A piece a call computes from it (`model(ids)`) is new data."""
    joined = join.args[0].value
    assert isinstance(joined, (cst.List, cst.Tuple))
    made_of: dict[str, Optional[str]] = {}
    for statement in descendants(loop):
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name):
            made_of[statement.targets[0].target.value] = _chain_root(statement.value)
    for element in joined.elements:
        if dotted_name(element.value) == target:
            continue
        root = _chain_root(element.value)
        if root == target or (root is not None and made_of.get(root) == target):
            return True
    return False


def _chain_root(node: cst.BaseExpression) -> Optional[str]:
    """The tensor a chain of subscripts and method calls reads: `x` of `x.flip(1)[:, :n]`, `self.h` of `self.h[-1:]`."""
    current = node
    while True:
        name = dotted_name(current)
        if name is not None:
            return name
        if isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            current = current.func.value
        else:
            return None


def _rebound(loop: cst.CSTNode, target: str, grows: Callable[[cst.CSTNode], bool]) -> bool:
    """The loop binds `target` other than by joins that grow it (and a first piece), or binds the object whose attribute
    it is (`earlier = merged.get(name)`, then `earlier.indices = torch.cat([earlier.indices, ...])`): then no one tensor
    grows."""
    names = {target, target.split(".", 1)[0]} if "." in target and not target.startswith("self.") else {target}
    for name in names:
        if isinstance(loop, cst.For) and any(dotted_name(t) == name for t in _targets(loop.target)):
            return True  # the loop variable: a new tensor each iteration
        if any((name != target or not (first or grows(other))) for other, first in _bindings(loop, name, False)):
            return True
    return False


def _bindings(node: cst.CSTNode, target: str, first: bool) -> Iterator[tuple[cst.CSTNode, bool]]:
    """The statements under `node` (not in functions defined there) that bind `target`, each with whether it sits in
    the body of an `if target is None:` (the first piece of what a join grows)."""
    for child in node.children:
        if isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        bound: list[cst.BaseExpression] = []
        if isinstance(child, cst.Assign):
            bound = [t.target for t in child.targets]
        elif isinstance(child, (cst.AugAssign, cst.AnnAssign)):
            bound = [child.target]
        elif isinstance(child, (cst.For, cst.CompFor)):
            bound = [child.target]
        elif isinstance(child, cst.AsName):
            bound = [child.name]  # type: ignore[list-item]
        elif isinstance(child, cst.NamedExpr):
            bound = [child.target]
        if any(dotted_name(t) == target for b in bound for t in _targets(b)):
            yield child, first
        if isinstance(child, cst.If) and (_tests_none(child.test, target) or _first_iteration(child)):
            yield from _bindings(child.body, target, True)
            if child.orelse is not None:
                yield from _bindings(child.orelse, target, first)
            continue
        yield from _bindings(child, target, first)


def _first_iteration(node: cst.If) -> bool:
    """`if first_iter: ...; first_iter = False` (a flag the branch clears), or `if i == 0:`: the loop's first pass."""
    test = node.test
    if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.Equal) and isinstance(test.comparisons[0].comparator, cst.Integer) \
            and test.comparisons[0].comparator.value == "0":
        return True
    if not isinstance(test, cst.Name):
        return False
    return any(isinstance(n, cst.Assign) and isinstance(n.value, cst.Name) and n.value.value in ("False", "None")
               and any(dotted_name(t.target) == test.value for t in n.targets) for n in descendants(node.body))


def _tests_none(test: cst.BaseExpression, target: str) -> bool:
    """`target is None`, `not target`, or either joined by `or` with something else."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _tests_none(test.left, target) or _tests_none(test.right, target)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return dotted_name(test.expression) == target
    return isinstance(test, cst.Comparison) and dotted_name(test.left) == target and len(test.comparisons) == 1 \
        and isinstance(test.comparisons[0].operator, cst.Is) and isinstance(test.comparisons[0].comparator, cst.Name) \
        and test.comparisons[0].comparator.value == "None"


def _targets(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from _targets(element.value)
    elif isinstance(node, cst.StarredElement):
        yield from _targets(node.value)
    else:
        yield node


def _mentions(node: cst.BaseExpression, target: str) -> bool:
    return any(dotted_name(n) == target for n in descendants(node) if isinstance(n, (cst.Name, cst.Attribute)))
