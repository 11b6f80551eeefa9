"""The shape of a detour through the host (VL314): what a call moves to the device, and the values taken off it on the
way, read from the syntax alone. The rule asks which of those values may be on the device (`Facts`); `--verify`
instruments the innermost one. One reading, for both."""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst

from viewlint.analysis.tree import dotted_name, string_key

# Calls that take a tensor (or the array or list it became) off the device.
LEAVE = frozenset({"cpu", "numpy", "tolist"})
# Calls between leaving and coming back that do nothing the device cannot do itself: they keep, reorder, copy or cast
# the values (a NumPy reversal `[::-1].copy()`, `.astype(np.float32)`, `np.ascontiguousarray(a)`).
PASSIVE_METHODS = frozenset({"detach", "copy", "astype", "reshape", "transpose", "squeeze", "unsqueeze", "flatten",
                             "ravel", "contiguous", "clone", "float", "double", "half", "long", "int", "bool", "view",
                             "permute", "view_as"})
# Functions that build an array or a tensor from what they are given, copying or not.
BUILDERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy", "numpy.array", "numpy.asarray",
                      "numpy.ascontiguousarray", "numpy.copy"})

# Arguments torch requires on the host, by position and keyword: a device tensor given there is copied to the host by
# the call itself (`pack_padded_sequence`'s `lengths`), so a copy made first is the wait the call would make anyway.
HOST_ARGUMENTS = {"torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths")}

Qualify = Callable[[cst.BaseExpression], Optional[str]]


def moved_expression(node: cst.Call, qualify: Qualify) -> Optional[cst.BaseExpression]:
    """What `node` moves to the device: `x` of `x.cuda()`, `x.to(device)`; `x` of `torch.tensor(x, device=d)`."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
        return func.value
    if isinstance(func, cst.Attribute) and func.attr.value == "to" and any(
            device_like(a.value) for a in node.args if a.keyword is None or a.keyword.value == "device"):
        return func.value
    qualified = qualify(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
    if qualified in ("torch.tensor", "torch.as_tensor") and any(
            a.keyword is not None and a.keyword.value == "device" and device_like(a.value) for a in node.args):
        return node.args[0].value if node.args and node.args[0].keyword is None else None
    return None


def left_receivers(node: cst.BaseExpression, qualify: Qualify) -> Iterator[cst.BaseExpression]:
    """The receivers of the calls that took `node`'s values off the device, outermost first (`inputs.cpu().detach()`,
    then `inputs`, of `torch.tensor(inputs.cpu().detach().numpy()[::-1].copy())`), through passive steps only; none
    where another call is on the way."""
    for _ in range(16):
        if isinstance(node, cst.Subscript) or (isinstance(node, cst.Attribute) and node.attr.value == "T"):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in LEAVE | PASSIVE_METHODS:
            if node.func.attr.value in LEAVE:
                yield node.func.value
            node = node.func.value
        elif isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)) \
                and (qualify(node.func) or "") in BUILDERS and node.args and node.args[0].keyword is None:
            node = node.args[0].value
        else:
            return


def required_on_host(copy: cst.Call, statement: Optional[cst.CSTNode], function: Optional[cst.CSTNode],
                     qualify: Qualify) -> bool:
    """Whether the host copy `copy` is given, itself or through passive steps (`lengths.cpu().numpy()`), where torch
    requires host data: in its own statement, or bound to a name there that the function hands over
    (`lengths = splits.to("cpu"); pack_padded_sequence(x, lengths, batch_first=True)`)."""
    if statement is None:
        return False
    if any(_carries(argument, copy) for argument in _host_arguments(statement, qualify)):
        return True
    body = getattr(statement, "body", ())
    assign = body[0] if isinstance(body, (list, tuple)) and len(body) == 1 else None
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
            and _carries(assign.value, copy) and function is not None):
        return False
    name = assign.targets[0].target.value
    return any(isinstance(argument, cst.Name) and argument.value == name for argument in _host_arguments(function, qualify))


def _host_arguments(node: cst.CSTNode, qualify: Qualify) -> Iterator[cst.BaseExpression]:
    for call in _calls(node):
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            continue
        wanted = HOST_ARGUMENTS.get(qualify(call.func) or "")
        if wanted is None:
            continue
        position, keyword = wanted
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if len(positional) > position:
            yield positional[position]
        yield from (a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword)


def _carries(expression: cst.BaseExpression, copy: cst.Call) -> bool:
    """`expression` is `copy`, or what passive steps make of it (`copy.numpy()`, `copy.long()`)."""
    for _ in range(16):
        if expression is copy:
            return True
        if not (isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute)
                and expression.func.attr.value in LEAVE | PASSIVE_METHODS | {"to"}):
            return False
        expression = expression.func.value
    return False


def host_copied(node: cst.BaseExpression, qualify: Qualify) -> Optional[cst.BaseExpression]:
    """`a` of `torch.tensor(a)` given no `device=`: copied on the host, whatever `a` is, before any move."""
    if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None \
            and isinstance(node.func, (cst.Name, cst.Attribute)) and qualify(node.func) == "torch.tensor" \
            and not any(a.keyword is not None and a.keyword.value == "device" for a in node.args):
        return node.args[0].value
    return None


def device_like(node: cst.BaseExpression) -> bool:
    """An expression that names a device: `x.device`, `self.device`, `device`, `"cuda:0"`, `torch.device(…)`,
    `self.kwargs["device"]`."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value.startswith("cuda") if isinstance(node.evaluated_value, str) else False
    if isinstance(node, cst.Call):
        return dotted_name(node.func) in ("torch.device", "device")
    if isinstance(node, cst.Subscript):
        return "device" in (string_key(node) or "").lower()
    name = dotted_name(node)
    return name is not None and "device" in name.split(".")[-1].lower()


def round_trip_roots(statement: str, qualify: Qualify) -> set[str]:
    """The names whose values the statement `statement` (its text) takes to the host and straight back to the device
    (`x` of `y = torch.from_numpy(x.cpu().numpy().T.copy()).cuda()`): for a reading over `ast` (`hotness`), which tells
    such a detour from a hand-over to another runtime."""
    try:
        parsed = cst.parse_statement(statement)
    except Exception:  # (text that is not one statement alone: nothing said)
        return set()
    roots: set[str] = set()
    for node in _calls(parsed):
        moved = moved_expression(node, qualify)
        for receiver in left_receivers(moved, qualify) if moved is not None else ():
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
                receiver = receiver.func.value
            if isinstance(receiver, cst.Name):
                roots.add(receiver.value)
    return roots


def _calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            yield current
        stack.extend(current.children)
