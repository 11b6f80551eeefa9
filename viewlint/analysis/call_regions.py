"""Where a function's calls run: on every call of it, in a cold block, or in a step loop (a training or decoding loop).

The call graph (`viewlint.analysis.callgraph`) reads each function's calls through these to say which functions are
hot and why; the walker and the prefilter ask the call graph the same about each loop (`CallGraph.step_loop_reason`).
Read off a function's preorder `ast` node list by position: `if` bodies, handlers and loop bodies are spans.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from typing import Callable, Iterator, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.guards import cold_test, switch_locals
from viewlint.analysis.nodes import dotted, preorder
from viewlint.analysis.once import Methods, debug_only_rest, local_bindings, runs_once

def runs_a_step(call: ast.Call) -> Optional[str]:
    """`loss.backward()`, `torch.autograd.backward(t)`, `optimizer.step()`, `self.scheduler.step(...)`:
    what it runs, for messages."""
    func = call.func
    if type(func) is ast.Attribute:
        method = func.attr  # type: ignore[attr-defined]
        if method in sem.STEP_METHODS:
            return sem.runs_a_step(method, dotted(func.value) or "", dotted(func) or "",  # type: ignore[attr-defined]
                                   len(call.args) + len(call.keywords))
    return None


def trains(call: ast.Call) -> bool:
    """A call that runs a training step (`runs_a_step`), or one named for stepping the optimizers
    (`self.optimizers_step()`): a block that makes one is the step, whatever interval guards it."""
    return runs_a_step(call) is not None or sem.steps_an_optimizer(dotted(call.func) or "")


# `torch.optim`'s classes and the common ones of other libraries (`bitsandbytes.optim.PagedAdamW8bit`, `Lion`).
_OPTIMIZER_CLASS = re.compile(r"(Paged)?(SGD|Adam|Adagrad|Adadelta|Adamax|NAdam|RAdam|RMSprop|Rprop|ASGD|LBFGS|SparseAdam"
                              r"|Adafactor|Lion|Lamb|LAMB|LARS|Muon)W?(\d+bit)?|[A-Z]\w*Optimizer")


def builds_an_optimizer(call: ast.Call) -> bool:
    """`Adam([p])`, `torch.optim.AdamW(model.parameters())`, `bnb.optim.Adam8bit(...)`, `FusedOptimizer(...)`."""
    return _OPTIMIZER_CLASS.fullmatch((dotted(call.func) or "").split(".")[-1]) is not None


def calls_a_model(call: ast.Call) -> bool:
    """`model(batch)`, `self.model(x)`, `text_model(ids)`: a module that runs a forward pass."""
    return sem.names_a_model(dotted(call.func) or "")


class Regions:
    """The calls of one function by where they run: on every call of it, in a cold block, in a step loop.
    Read off the function's preorder node list by position (`if` bodies, handlers and loop bodies as spans)."""

    def __init__(self) -> None:
        self.warm: list[ast.Call] = []
        self.outside: list[ast.Call] = []  # the warm calls outside every loop: once per call of the function
        self.loop: list[tuple[ast.Call, str]] = []  # (call, what makes its loop a step loop)
        self.step: Optional[str] = None  # what a call outside loops and cold blocks runs (a training step)

    def scan_nodes(self, function: ast.AST, nodes: list[ast.AST], switches: frozenset[str] = frozenset(),
                   steps: Optional[Callable[[list[ast.Call]], Optional[str]]] = None,
                   methods: Optional[Methods] = None) -> None:
        for call, where in classified(function, nodes, switches=switches, steps=steps, methods=methods):
            if where == "warm":
                self.warm.append(call)
                self.outside.append(call)
                if self.step is None:
                    self.step = runs_a_step(call)
            elif where == "looped":
                self.warm.append(call)  # in a loop that runs no step: as often as the function, or more
            elif where != "cold":
                self.loop.append((call, where))
        if self.step is not None and any(builds_an_optimizer(call) for call in self.outside):
            self.step = None  # it builds its own optimizer and steps it once: a smoke check, not a training step


Span = tuple[tuple[int, int], tuple[int, int]]


def _span(first: ast.AST, last: ast.AST) -> Span:
    return ((first.lineno, first.col_offset), (last.end_lineno or last.lineno, last.end_col_offset or 0))  # type: ignore[attr-defined]


COMPREHENSION_KINDS = frozenset({ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


def classified(function: Optional[ast.AST], nodes: list[ast.AST], direct_only: bool = False,
                switches: frozenset[str] = frozenset(),
                steps: Optional[Callable[[list[ast.Call]], Optional[str]]] = None,
                methods: Optional[Methods] = None) -> list[tuple[ast.Call, str]]:
    """(call, "warm" | "looped" | "cold" | why its loop is a step loop): "looped" is a call in loops none of which
    runs a step; with `direct_only`, only the calls outside every loop among `nodes` ("warm" or "cold"). `steps`:
    what else makes a loop a step loop, read off the calls it makes itself (a call of a function that runs one).
    `methods`: the module's methods by name, for a run-once block whose flag a method sets (`once.runs_once`)."""
    cold: list[Span] = []
    loops: list[Span] = []
    calls: list[ast.Call] = []
    rest = debug_only_rest(function, switches) if function is not None else None
    if rest:
        cold.append(_span(rest[0], rest[-1]))
    ifs: list[tuple[Span, ast.AST]] = []
    decoding: list[Optional[str]] = []  # per loop: what makes it a decode loop by what it iterates
    # Loops of their own (`[self.train_step(b) for b in loader]`): (the comprehension, its first `for`'s iterable,
    # which is read once).
    comprehensions: list[tuple[Span, Span]] = []
    for node in nodes:
        kind = type(node)
        if node is function:
            continue
        if kind is ast.Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.If:
            if node.body:  # type: ignore[attr-defined]
                ifs.append((_span(node.body[0], node.body[-1]), node))  # type: ignore[attr-defined]
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
            if node.body:  # type: ignore[attr-defined]
                loops.append(_span(node.body[0], node.body[-1]))  # type: ignore[attr-defined]
                decoding.append(_decode_loop(node))
        elif kind is ast.ExceptHandler or kind is ast.Raise or kind is ast.FunctionDef or kind is ast.AsyncFunctionDef \
                or kind is ast.Lambda or kind is ast.ClassDef:
            cold.append(_span(node, node))
        elif kind in COMPREHENSION_KINDS:
            first = node.generators[0].iter  # type: ignore[attr-defined]
            comprehensions.append((_span(node, node), _span(first, first)))
    def inside(position: tuple[int, int], span: Span) -> bool:
        return span[0] <= position <= span[1]
    if ifs and calls:
        # Only an `if` with a call in its body needs its test read.
        positions = sorted((call.lineno, call.col_offset) for call in calls)
        switches = switch_locals(nodes, switches)
        bindings = functools.cache(lambda: local_bindings(nodes))  # read only when a test of a local asks
        for span, branch in ifs:
            at = bisect.bisect_left(positions, span[0])
            if at < len(positions) and positions[at] <= span[1] and (runs_once(branch, bindings, methods) or (  # type: ignore[attr-defined]
                    cold_test(branch.test, switches)  # type: ignore[attr-defined]
                    # (`if do_sync_step:` around `optimizer.step()`: the block is the step, whatever interval guards it.)
                    and not any(trains(c) for c in calls if inside((c.lineno, c.col_offset), span)))):
                cold.append(span)
    where: list[tuple[ast.Call, str]] = []
    enclosing_of: dict[int, list[int]] = {}
    direct: dict[int, list[ast.Call]] = {}  # loop -> the calls it runs itself (not inside a nested loop)
    for call in calls:
        position = (call.lineno, call.col_offset)
        if any(inside(position, span) for span in cold):
            where.append((call, "cold"))
            continue
        enclosing = [i for i, span in enumerate(loops) if inside(position, span)]  # outermost first (preorder)
        if enclosing:
            enclosing_of[id(call)] = enclosing
            direct.setdefault(enclosing[-1], []).append(call)
            where.append((call, ""))
        elif any(inside(position, body) and not inside(position, first) for body, first in comprehensions):
            # In a comprehension's body: as often as the function runs or more, not once per call of it (what a
            # function that collects `[self.train_step(b) for b in loader]` does after it runs once per epoch).
            where.append((call, "looped"))
        else:
            where.append((call, "warm"))
    if direct_only:
        return [(call, kind) for call, kind in where if kind]
    # A loop is a step loop when it runs the step itself: the work of an outer loop around it (collecting
    # the output after the denoising loop, evaluating after an epoch) runs once per pass, not per step.
    def stepping(own: list[ast.Call]) -> Optional[str]:
        if steps is None:
            return None
        return steps([c for c in own if not any(inside((c.lineno, c.col_offset), span) for span, _ in comprehensions)])
    reasons = {loop: decoding[loop] or _step_reason(iter(own)) or stepping(own) for loop, own in direct.items()}
    result: list[tuple[ast.Call, str]] = []
    for call, kind in where:
        if kind == "":
            kind = next((reasons[loop] for loop in enclosing_of[id(call)] if reasons.get(loop)), None) or "looped"
        result.append((call, kind))
    return result


def _step_reason(calls: Iterator[ast.Call]) -> Optional[str]:
    for call in calls:
        ran = runs_a_step(call)
        if ran is not None:
            return f"a loop that runs {ran}"
        if calls_a_model(call):
            return f"a loop that runs `{dotted(call.func)}(…)`"
    return None


def _decode_loop(loop: ast.AST) -> Optional[str]:
    """`for _ in range(max_new_tokens):`."""
    iterated = getattr(loop, "iter", None)
    if type(loop) is not ast.For or type(iterated) is not ast.Call or dotted(iterated.func) != "range" or not iterated.args:
        return None
    return sem.decode_bound(dotted(iterated.args[-1]))


def step_loop(loop: ast.AST) -> Optional[str]:
    """What makes a loop a step loop (a training or decoding loop whose body runs per step), or None."""
    decoding = _decode_loop(loop)
    if decoding is not None:
        return decoding
    nodes: list[ast.AST] = []
    for statement in getattr(loop, "body", []):
        nodes.extend(preorder(statement))
    return _step_reason(call for call, where in classified(None, nodes, direct_only=True) if where != "cold")
