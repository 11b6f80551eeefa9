"""Rewrite a flagged file in memory so that each flagged site calls a probe.

Every probe call has the shape ``__viewlint__.<probe>(site, value, ...)`` and returns
``value`` unchanged, so wrapping a sub-expression changes neither what the code computes nor
its line numbers: the wrapper starts on the line of the wrapped expression and adds no line
break. ``__viewlint__`` is not imported by the rewritten source; the runner puts it into the
module's globals before executing it, so no line is added at the top either.

Which sub-expression gets which probe depends on the rule code and on the shape of the node
the rule reported (its range is in the Diagnostic): a *planner* per rule family finds it.

Probes (see :mod:`viewlint.verify.probes`):

- ``retain(site, value)``: storage bytes against payload bytes of the tensors in ``value``.
- ``charge(site, tensor)``: the size a budget charges (numel*element_size) against storage.
- ``base(site, value)`` then ``link(site, value, last)``: does each step of a chain share
  storage with the previous one (lost writes, copies, double conversions)?
- ``overlap(site, tensor)``: internal overlap (stride 0) of an in-place write's target.
- ``before(site, receiver)`` / ``after(site, result)``: was the receiver left unchanged?
- ``contiguous(site, tensor)``: was the input already contiguous?
- ``sync(site, value)`` / ``sync_end(site, result)``: device and hit count of a host sync.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence, Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from viewlint.analysis import semantics
from viewlint.analysis.host_detour import host_copied, left_receivers, moved_expression
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.diagnostics import Diagnostic
from viewlint.verify import COPIES, LOST_WRITE, PROBE_MODULE, RETENTION, SYNCS
SYNC_BUILTINS = ("int", "float", "bool", "len", "list", "complex")


@dataclass
class Site:
    """One flagged finding and what its probes measure."""

    site_id: int
    diagnostic: Diagnostic
    probe: str  # the main probe: retain, charge, link, overlap, after, contiguous, sync
    labels: dict[str, str] = field(default_factory=dict)  # source text for evidence: base, receiver, ...


@dataclass
class InstrumentedFile:
    """The rewritten source of one file, its probed sites, and the findings it could not probe."""

    path: str
    source: str
    sites: list[Site]
    unprobed: list[tuple[Diagnostic, str]]  # (finding, why no probe fits)


@dataclass
class _Wrap:
    probe: str
    site_id: int
    extra: tuple[cst.BaseExpression, ...] = ()


@dataclass
class _Plan:
    """The wraps one finding needs (node -> probe), its main probe and evidence labels."""

    wraps: list[tuple[cst.CSTNode, _Wrap]]
    probe: str
    labels: dict[str, str]


class _Unsupported(Exception):
    """No probe fits the reported node's shape."""


class _Context:
    """What a planner may ask about the parsed file."""

    def __init__(self, module: cst.Module, positions: "dict[cst.CSTNode, CodeRange]", parents: dict[cst.CSTNode, cst.CSTNode]):
        self.module = module
        self.positions = positions
        self.parents = parents

    def text(self, node: cst.CSTNode) -> str:
        code = self.module.code_for_node(node).strip()
        return code if len(code) <= 40 else code[:37] + "..."

    def assignment_of(self, name: str, before: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """The value of the last `name = value` above `before` in the same function; for a loop
        `for name in pieces:` around `before`, what it iterates."""
        scope = self.enclosing_function(before)
        limit = self.positions[before].start
        best: Optional[tuple[tuple[int, int], cst.BaseExpression]] = None
        for node, position in self.positions.items():
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                target, value = node.targets[0].target, node.value
            elif isinstance(node, cst.For) and self.encloses(node, before):
                target, value = node.target, node.iter
            else:
                continue
            if not (isinstance(target, cst.Name) and target.value == name):
                continue
            where = (position.start.line, position.start.column)
            if where >= (limit.line, limit.column) or self.enclosing_function(node) is not scope:
                continue
            if best is None or where > best[0]:
                best = (where, value)
        return best[1] if best is not None else None

    def encloses(self, outer: cst.CSTNode, node: cst.CSTNode) -> bool:
        current = self.parents.get(node)
        while current is not None and current is not outer:
            current = self.parents.get(current)
        return current is outer

    def inside_scripted_function(self, node: cst.CSTNode) -> bool:
        """Under `@torch.jit.script`: TorchScript compiles the body and cannot call a Python probe."""
        current = self.parents.get(node)
        while current is not None:
            if isinstance(current, cst.FunctionDef) and any(
                "jit." in self.module.code_for_node(d.decorator) or _dotted(d.decorator) == "script" for d in current.decorators
            ):
                return True
            current = self.parents.get(current)
        return False

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda)):
            current = self.parents.get(current)
        return current


def _method(node: cst.CSTNode) -> Optional[str]:
    """`x.add_(1)` -> "add_"; None for anything else."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _receiver(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.value
    if isinstance(node, cst.Attribute):
        return node.value
    return None


def _dotted(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr.value}" if inner else None
    return None


def _is_side_effect_free(node: cst.CSTNode) -> bool:
    """Names and attribute chains of names: safe to evaluate a second time."""
    return _dotted(node) is not None


def _first_call(node: cst.CSTNode) -> Optional[cst.Call]:
    """The flagged call itself, or the call inside a flagged statement (`Expr`, `Assign`)."""
    if isinstance(node, cst.Call):
        return node
    if isinstance(node, (cst.Expr, cst.Assign, cst.AugAssign, cst.Return)) and isinstance(node.value, cst.Call):
        return node.value
    return None


def _calls_inside(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Calls in `node`, outermost first."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop(0)
        if isinstance(current, cst.Call):
            yield current
        stack.extend(current.children)


# ---------------------------------------------------------------------------------------------- planners
Planner = Callable[[cst.CSTNode, int, _Context], _Plan]


def _plan_retention(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """The value entering the container or `torch.save`: storage against payload bytes."""
    value: cst.CSTNode = node
    call = _first_call(node)
    if call is not None and (_dotted(call.func) or "").split(".")[-1] == "save" and call.args:
        value = call.args[0].value  # torch.save(obj, path): the object written
    elif isinstance(node, cst.Assign):
        value = node.value
    elif isinstance(node, cst.Expr):
        value = node.value
    if not isinstance(value, cst.BaseExpression):
        raise _Unsupported("the stored value is not an expression")
    return _Plan([(value, _Wrap("retain", site))], "retain", {"value": ctx.text(value)})


def _charged_tensor(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The tensor in `t.numel() * t.element_size()` or `t.nbytes`."""
    for inner in [node, *_descendants(node)]:
        if isinstance(inner, cst.Call) and _method(inner) in ("numel", "element_size", "nelement") and not inner.args:
            return _receiver(inner)
        if isinstance(inner, cst.Attribute) and inner.attr.value in ("nbytes", "itemsize"):
            return inner.value
    return None


def _plan_charge(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL104: the tensor whose `numel()*element_size()` or `.nbytes` a budget charges.

    The reported node is `self.used += size`; the size is computed there, in the assignment of
    a local name (`size = t.nbytes`), or by a helper given the tensor (`self._entry_bytes(t)`).
    """
    charged: Optional[cst.CSTNode] = node.value if isinstance(node, (cst.AugAssign, cst.Assign)) else node
    for _ in range(3):
        if charged is None:
            break
        tensor = _charged_tensor(charged)
        if tensor is not None:
            return _Plan([(tensor, _Wrap("charge", site))], "charge", {"tensor": ctx.text(tensor)})
        if isinstance(charged, cst.Name):
            charged = ctx.assignment_of(charged.value, node)
        elif isinstance(charged, cst.Call) and charged.args and not charged.args[0].star:
            tensor = charged.args[0].value  # a size helper: `self._entry_bytes(t)`
            return _Plan([(tensor, _Wrap("charge", site))], "charge", {"tensor": ctx.text(tensor)})
        else:
            break
    raise _Unsupported("cannot find the tensor whose size is charged")


def _descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = list(node.children)
    while stack:
        current = stack.pop(0)
        yield current
        stack.extend(current.children)


# The chain from a written temporary down to its buffer goes through views, maybe-copies and gathers.
_CHAIN_METHODS = (
    semantics.VIEW_METHODS | semantics.MAYBE_VIEW_METHODS | semantics.MAYBE_COPY_METHODS | semantics.SEQUENCE_VIEW_METHODS
    | {"index_select", "masked_select", "gather", "take", "take_along_dim"}
)
_CHAIN_FUNCTIONS = frozenset(
    name.split(".")[-1]
    for name in semantics.VIEW_FUNCTIONS | semantics.MAYBE_VIEW_FUNCTIONS | semantics.SEQUENCE_VIEW_FUNCTIONS
) | {"index_select", "masked_select", "gather", "take", "take_along_dim"}
_VIEW_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES


def _is_function_form(call: cst.Call) -> bool:
    """`torch.nn.init.zeros_(w)`, `nn.init.normal_(w)`, `torch.clamp(x, 0, 1)`: the tensor is the first argument."""
    name = _dotted(call.func) or ""
    return name.startswith("torch.") or ".init." in f".{name}" or name.startswith("F.")


def _temporary_of(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """What a write lands in: the receiver of the (first) in-place call, the first argument of
    `nn.init.*_(t)`, or what a chained assignment target `x[adv][i] = v` indexes into."""
    if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        target = node.targets[0].target if isinstance(node, cst.Assign) else node.target
        return target.value if isinstance(target, cst.Subscript) else None
    if isinstance(node, cst.Subscript):  # VL202 reports the target itself
        return node.value
    call = _first_call(node)
    if call is None:
        return None
    if _is_function_form(call):
        return call.args[0].value if call.args and not call.args[0].star else None
    method = _method(call)
    if method is not None and method.endswith("_") and not method.endswith("__"):
        # Follow `a[i].add_(1).mul_(2)` down to the first in-place call.
        current: cst.BaseExpression = call
        while isinstance(_receiver(current), cst.Call) and (_method(_receiver(current)) or "").endswith("_"):  # type: ignore[arg-type]
            current = _receiver(current)  # type: ignore[assignment]
        return _receiver(current)
    return None


def _root_of(expression: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The buffer at the bottom of an indexing/method chain: `buf[idx][:, 0]` -> buf,
    `x.reshape(-1)` -> x, `self.w.T[0]` -> self.w; None when `expression` is not such a chain."""
    current = expression
    steps = 0
    while True:
        if isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Call) and not _is_function_form(current) and _method(current) in _CHAIN_METHODS:
            current = current.func.value  # type: ignore[attr-defined]
        elif (isinstance(current, cst.Call) and _is_function_form(current) and current.args
              and (_dotted(current.func) or "").split(".")[-1] in _CHAIN_FUNCTIONS):
            current = current.args[0].value  # torch.reshape(x, ...)
        elif isinstance(current, cst.Attribute) and current.attr.value in _VIEW_ATTRIBUTES:
            current = current.value
        else:
            return current if steps else None
        steps += 1


def _plan_lost_write(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL201-VL203: does what the write lands in share storage with the buffer at the chain's root?"""
    temporary = _temporary_of(node)
    if temporary is None:
        raise _Unsupported("cannot find the written temporary")
    base = temporary if isinstance(temporary, cst.Name) else _root_of(temporary)
    looped = False  # through a loop's target: the buffer is read once for the loop's many writes
    for _ in range(4):  # `tmp = buf[idx]; tmp[0].add_(1)`: follow local names to the buffer they came from
        if not isinstance(base, cst.Name):
            break
        value = ctx.assignment_of(base.value, node)
        looped = looped or value is not None and isinstance(ctx.parents.get(value), cst.For)
        root = value if isinstance(value, cst.Name) else _root_of(value) if value is not None else None
        if root is None:
            break
        base = root
    if base is None or base is temporary:
        raise _Unsupported("cannot find the buffer the write was meant for")
    wraps: list[tuple[cst.CSTNode, _Wrap]] = [(base, _Wrap("base", site, (cst.Name("True"),) if looped else ()))]
    wraps.append((temporary, _Wrap("link", site, (cst.Name("True"),))))
    return _Plan(wraps, "link", {"base": ctx.text(base), "temporary": ctx.text(temporary)})


def _plan_overlap(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL204: the expanded target of the in-place write: does it overlap itself?"""
    temporary = _temporary_of(node)
    if temporary is None:
        raise _Unsupported("cannot find the written tensor")
    return _Plan([(temporary, _Wrap("overlap", site))], "overlap", {"temporary": ctx.text(temporary)})


def _plan_discarded(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL205: the receiver before the call and the discarded result after it; for a loop variable rebound and dropped
    (`ema_p = decay * ema_p + ...`), the tensor it held (read in the new value) and the value bound in its place."""
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
        name = node.targets[0].target.value
        held = next((n for n in descendants(node.value) if isinstance(n, cst.Name) and n.value == name), None)
        if held is not None:
            return _Plan([(held, _Wrap("before", site)), (node.value, _Wrap("after", site))], "after",
                         {"receiver": name, "method": ""})
    call = _first_call(node)
    receiver: Optional[cst.BaseExpression] = None
    function = ""
    if call is not None:
        if _is_function_form(call):  # torch.clamp(x, 0, 1)
            receiver = call.args[0].value if call.args and not call.args[0].star else None
        elif isinstance(call.func, cst.Name):  # `random_weight(shape)`: a function of the module; its first argument
            receiver = call.args[0].value if call.args and not call.args[0].star else None
            function = call.func.value
        else:
            receiver = _receiver(call)
    if call is None or receiver is None:
        raise _Unsupported("not a method call, nor a call given an argument")
    method = (_dotted(call.func) or _method(call) or "").split(".")[-1]
    return _Plan([(receiver, _Wrap("before", site)), (call, _Wrap("after", site))], "after",
                 {"receiver": ctx.text(receiver), "method": method, "function": function})


def _plan_contiguous(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL301: the receiver of `.contiguous()`: was it already contiguous?"""
    for call in _calls_inside(node):
        if _method(call) == "contiguous":
            receiver = _receiver(call)
            assert receiver is not None
            labels = {"receiver": ctx.text(receiver), "clone": "1" if _method(receiver) == "clone" else ""}
            return _Plan([(receiver, _Wrap("contiguous", site))], "contiguous", labels)
    raise _Unsupported("no `.contiguous()` call in the flagged expression")


def _chain(call: cst.Call) -> list[cst.Call]:
    """`x.a().b().c()` -> [x.a(), x.a().b(), x.a().b().c()] (method calls on a common root)."""
    chain = [call]
    while isinstance(_receiver(chain[0]), cst.Call) and _method(_receiver(chain[0])) is not None:  # type: ignore[arg-type]
        chain.insert(0, _receiver(chain[0]))  # type: ignore[arg-type]
    return chain


def _plan_copies(node: cst.CSTNode, site: int, ctx: _Context, *, moved: bool = False) -> _Plan:
    """VL302-VL305: the copies a chain of calls makes, measured link by link.

    A chain that starts at a factory (`torch.tensor(v).to(d).half()`) is measured from the factory's
    tensor. With ``moved`` (the chain moves that tensor to a device), a factory given no device puts
    its tensor on the host, where the program makes it, also when `--device cuda` makes factories
    allocate on the GPU: the move is then measured as the program runs it.
    """
    code_call = _flagged_copy_call(node)
    if code_call is None:
        raise _Unsupported("no method call in the flagged expression")
    chain = _chain(code_call)
    root = _receiver(chain[0])
    if root is None:
        raise _Unsupported("the chain has no receiver")
    host = moved and _dotted(chain[0].func) in semantics.FACTORY_FUNCTIONS and not any(
        arg.keyword is not None and arg.keyword.value == "device" for arg in chain[0].args)
    wraps: list[tuple[cst.CSTNode, _Wrap]] = [(root, _Wrap("base", site))]
    for i, link in enumerate(chain):
        last = i == len(chain) - 1
        flags: tuple[cst.BaseExpression, ...] = (cst.Name("True" if last else "False"),)
        if i == 0 and host:
            flags += (cst.Name("True"),)
        wraps.append((link, _Wrap("link", site, flags)))
    steps = ",".join(_method(link) or "?" for link in chain)
    return _Plan(wraps, "link", {"base": ctx.text(root), "steps": steps})


def _flagged_copy_call(node: cst.CSTNode) -> Optional[cst.Call]:
    call = _first_call(node)
    if call is not None and _method(call) is not None:
        return call
    for inner in _calls_inside(node):
        if _method(inner) is not None:
            return inner
    return None


def _plan_sync(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL401-VL404: the tensor whose data the host waits for, and how often."""
    target: Optional[cst.BaseExpression] = None
    call = _first_call(node) if not isinstance(node, cst.BaseExpression) else (node if isinstance(node, cst.Call) else None)
    if isinstance(node, (cst.If, cst.While)):
        target = node.test
    elif isinstance(node, cst.Assert):
        target = node.test
    elif call is not None and _is_function_form(call):
        target = call.args[0].value if call.args else None  # torch.nonzero(x), torch.unique(x)
    elif call is not None and _method(call) is not None:
        target = _receiver(call)
    elif call is not None and isinstance(call.func, cst.Name) and call.func.value in SYNC_BUILTINS and call.args:
        target = call.args[0].value
    elif isinstance(node, cst.Subscript):
        elements = node.slice
        target = elements[0].slice.value if len(elements) == 1 and isinstance(elements[0].slice, cst.Index) else node.value  # type: ignore[union-attr]
    elif isinstance(node, cst.BaseExpression):
        target = node  # `if t.any():` reported on the test itself
    if target is None:
        raise _Unsupported("cannot find the synced tensor")
    wraps: list[tuple[cst.CSTNode, _Wrap]] = [(target, _Wrap("sync", site))]
    outer = node if isinstance(node, cst.BaseExpression) else call
    if outer is not None and outer is not target:
        wraps.append((outer, _Wrap("sync_end", site)))  # the sync happens inside: warnings land between the two
    return _Plan(wraps, "sync", {"value": ctx.text(target)})


def _plan_head_repeat(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL303: `scaled_dot_product_attention(q, k_rep, v_rep)`: the bytes each head repeat allocates.

    The repeat is an argument of the attention call or the value of a local name passed to it;
    each one is measured as a chain from the un-repeated tensor to the repeated copy.
    """
    call = _first_call(node)
    if call is None:
        raise _Unsupported("not a call")
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    wraps: list[tuple[cst.CSTNode, _Wrap]] = []
    # The finding sits on the repeat itself (`k.repeat_interleave(n, dim=1)`, `repeat_kv(k, n)`); older findings
    # sat on the attention call, whose key and value arguments lead to the repeats.
    on_repeat = "scaled_dot_product_attention" not in ctx.text(call.func)
    arguments = [call] if on_repeat else [
        positional[position] if len(positional) > position else keywords.get(keyword)
        for position, keyword in ((1, "key"), (2, "value"))]
    for argument in arguments:
        if isinstance(argument, cst.Name):
            argument = ctx.assignment_of(argument.value, node)
        if not isinstance(argument, cst.Call):
            continue
        if _method(argument) is not None and not _is_function_form(argument):
            chain = _chain(argument)
            root = _receiver(chain[0])
        else:  # torch.repeat_interleave(k, n, dim=1), or a helper: `repeat_kv(k, n_rep)`
            root = argument.args[0].value if argument.args and not argument.args[0].star else None
        if root is None:
            continue
        wraps.append((root, _Wrap("base", site)))
        wraps.append((argument, _Wrap("link", site, (cst.Name("True"),))))
    if not wraps:
        raise _Unsupported("cannot find the repeated key/value")
    return _Plan(wraps, "link", {"base": "key/value"})


def _plan_construct(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL307: `torch.tensor(data)`: was `data` a tensor, and how much did the call copy of it?"""
    call = _first_call(node)
    if call is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
        raise _Unsupported("no `torch.tensor(data)` call")
    data = call.args[0].value
    return _Plan([(data, _Wrap("base", site)), (call, _Wrap("link", site, (cst.Name("True"),)))], "link",
                 {"base": ctx.text(data)})


def _plan_two_copies(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL308: `x.clone().float()`, `x.cpu().clone()`: do both calls copy? Measured from the inner call's receiver."""
    outer = _first_call(node)
    inner = _receiver(outer) if outer is not None else None
    root = _receiver(inner) if inner is not None else None
    if outer is None or not isinstance(inner, cst.Call) or root is None:
        raise _Unsupported("no chain of two calls in the flagged expression")
    wraps: list[tuple[cst.CSTNode, _Wrap]] = [(root, _Wrap("base", site)), (inner, _Wrap("link", site, (cst.Name("False"),))),
                                              (outer, _Wrap("link", site, (cst.Name("True"),)))]
    return _Plan(wraps, "link", {"base": ctx.text(root), "steps": f"{_method(inner)},{_method(outer)}"})


def _plan_growth(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL309: `x = torch.cat([x, piece])` in a loop: how much each join copies (the grown tensor, whole)."""
    call = _first_call(node)
    joined = call.args[0].value if call is not None and call.args else None
    if not isinstance(joined, (cst.List, cst.Tuple)) or not joined.elements:
        raise _Unsupported("no joined list in the flagged call")
    ends = [joined.elements[0].value, joined.elements[-1].value]
    grown = max(ends, key=lambda e: isinstance(e, (cst.Name, cst.Attribute)))
    return _Plan([(grown, _Wrap("base", site)), (call, _Wrap("link", site, (cst.Name("True"),)))], "link",  # type: ignore[arg-type]
                 {"base": ctx.text(grown)})


def _plan_snapshot(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL105: `best = model.state_dict()`: whether the snapshot's tensors change after it is taken."""
    call = node if isinstance(node, cst.Call) else _first_call(node)
    if call is None:
        raise _Unsupported("not a call")
    return _Plan([(call, _Wrap("snapshot", site))], "snapshot", {"value": ctx.text(call)})


def _plan_upload(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL405: `torch.tensor(data, device=d)`: the device the built tensor is on (where the blocking copy went)."""
    call = node if isinstance(node, cst.Call) else _first_call(node)
    if call is None:
        raise _Unsupported("not a call")
    return _Plan([(call, _Wrap("sync", site))], "sync", {"value": ctx.text(call)})


def _plan_round_trip(node: cst.CSTNode, site: int, ctx: _Context) -> _Plan:
    """VL314: where the detour starts (the tensor taken to the host, innermost; or the array `torch.tensor` copies),
    and the moved result."""
    call = _first_call(node)
    moved = moved_expression(call, _numpy_qualified) if call is not None else None
    if call is None or moved is None:
        raise _Unsupported("no move to a device in the flagged call")
    receivers = list(left_receivers(moved, _numpy_qualified))
    source = receivers[-1] if receivers else host_copied(moved, _numpy_qualified)
    if source is None:
        raise _Unsupported("no value taken to the host or copied there on the way")
    return _Plan([(source, _Wrap("base", site)), (call, _Wrap("link", site, (cst.Name("True"),)))], "link",
                 {"base": ctx.text(source), "trip": "yes" if receivers else ""})


def _numpy_qualified(func: cst.BaseExpression) -> Optional[str]:
    """`np.array` as `numpy.array` (the spelling `host_detour` reads); other names as written."""
    name = dotted_name(func)
    return "numpy." + name[3:] if name is not None and name.startswith("np.") else name


PLANNERS: dict[str, Planner] = {
    **{code: _plan_retention for code in RETENTION},
    "VL104": _plan_charge,
    **{code: _plan_lost_write for code in LOST_WRITE},
    "VL204": _plan_overlap,
    "VL205": _plan_discarded,
    "VL301": _plan_contiguous,
    "VL306": _plan_contiguous,
    **{code: _plan_copies for code in COPIES},
    "VL303": _plan_head_repeat,
    "VL305": lambda node, site, ctx: _plan_copies(node, site, ctx, moved=True),
    "VL307": _plan_construct,
    "VL308": _plan_two_copies,
    "VL309": _plan_growth,
    "VL314": _plan_round_trip,
    **{code: _plan_sync for code in SYNCS},
    "VL105": _plan_snapshot,
    "VL405": _plan_upload,
}


def supported(code: str) -> bool:
    return code in PLANNERS


# ---------------------------------------------------------------------------------------------- rewriting
class _Parents(cst.CSTVisitor):
    def __init__(self) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.stack: list[cst.CSTNode] = []
        self.targets: set[cst.CSTNode] = set()  # nodes in a store position: wrapping them is invalid

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        if isinstance(node, cst.AssignTarget):
            self._mark(node.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            self._mark(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._mark(node.target)
        elif isinstance(node, cst.AsName):
            self._mark(node.name)
        elif isinstance(node, cst.Del):
            self._mark(node.target)
        elif isinstance(node, cst.NamedExpr):
            self._mark(node.target)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _mark(self, node: cst.CSTNode) -> None:
        self.targets.add(node)
        if isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._mark(element.value)
        elif isinstance(node, cst.StarredElement):
            self._mark(node.value)


class _Rewriter(cst.CSTTransformer):
    def __init__(self, wraps: dict[cst.CSTNode, list[_Wrap]]) -> None:
        self.wraps = wraps

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Union[cst.CSTNode, cst.RemovalSentinel]:  # type: ignore[override]
        for wrap in self.wraps.get(original_node, ()):
            updated_node = _probe_call(wrap, updated_node)  # type: ignore[arg-type]
        return updated_node


def _probe_call(wrap: _Wrap, value: cst.BaseExpression) -> cst.Call:
    """`__viewlint__.probe(site, value, *extra)` on the same line as `value`."""
    # The wrapped expression keeps its own parentheses and inner whitespace; a leading line break
    # inside it is legal because the new call's parentheses enclose it.
    args = [cst.Arg(cst.Integer(str(wrap.site_id))), cst.Arg(value)]
    args.extend(cst.Arg(extra) for extra in wrap.extra)
    return cst.Call(func=cst.Attribute(cst.Name(PROBE_MODULE), cst.Name(wrap.probe)), args=args)


def instrument(path: str, source: str, diagnostics: Sequence[Diagnostic], first_site: int = 0) -> InstrumentedFile:
    """Rewrite ``source`` so each finding in ``diagnostics`` calls its probes; site ids start at ``first_site``."""
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    collector = _Parents()
    module.visit(collector)
    ctx = _Context(module, dict(positions), collector.parents)
    by_range: dict[tuple[int, int, int, int], list[cst.CSTNode]] = {}
    for node, position in positions.items():
        key = (position.start.line, position.start.column + 1, position.end.line, position.end.column + 1)
        by_range.setdefault(key, []).append(node)

    sites: list[Site] = []
    unprobed: list[tuple[Diagnostic, str]] = []
    wraps: dict[cst.CSTNode, list[_Wrap]] = {}
    site_id = first_site
    for diagnostic in diagnostics:
        planner = PLANNERS.get(diagnostic.code)
        if planner is None:
            unprobed.append((diagnostic, f"no probe for {diagnostic.code}"))
            continue
        key = (diagnostic.start.row, diagnostic.start.column, diagnostic.end.row, diagnostic.end.column)
        candidates = by_range.get(key, [])
        plan, reason = None, "the flagged expression is not in the file any more"
        for node in candidates:  # outermost first; a planner rejects shapes it cannot probe
            if ctx.inside_scripted_function(node):
                reason = "inside a TorchScript (`@torch.jit.script`) function: a probe cannot run there"
                break
            try:
                plan = planner(node, site_id, ctx)
            except _Unsupported as error:
                reason = str(error)
                continue
            # Optional wraps (the end marker of a sync) are dropped on assignment targets: `x[mask] += 1`.
            plan.wraps = [(t, w) for t, w in plan.wraps if not (w.probe == "sync_end" and t in collector.targets)]
            if any(target in collector.targets for target, _ in plan.wraps):
                plan, reason = None, "the flagged expression is an assignment target"
                continue
            break
        if plan is None:
            unprobed.append((diagnostic, reason))
            continue
        for target, wrap in plan.wraps:
            wraps.setdefault(target, []).append(wrap)
        sites.append(Site(site_id, diagnostic, plan.probe, plan.labels))
        site_id += 1
    new_source = module.visit(_Rewriter(wraps)).code if wraps else source
    if new_source.count("\n") != source.count("\n"):  # never shift a line: tracebacks must point at the user's rows
        raise AssertionError("instrumentation changed the line count")
    return InstrumentedFile(path, new_source, sites, unprobed)
