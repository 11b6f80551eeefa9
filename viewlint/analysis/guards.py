"""What an `if` test says about the block it guards: cold work (logging on an interval, a debug switch,
the `__main__` block, dead code), read once, over Python's `ast`, for every consumer (the call graph's
hot regions, the walker's contexts, the prefilter).

A test is cold when it is, or calls, one of:
- `step % 100 == 0`, `(i + 1) % log_every == 0` (not `layer_id % 2 == 0`, which picks a layer type);
- a name or attribute that says logging, debugging or a purpose other than the step (`self.debug`,
  `args.log_interval`, `torch.onnx.is_in_onnx_export()`);
- a debug switch read from the environment, or a local set to one (`switches`);
- a call of a function or method of the module whose whole body returns a cold test
  (`self.is_gradient_accumulation_boundary()`: `return (self.micro_steps + 1) % self.gas == 0`).
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.nodes import dotted, preorder


def ast_words(node: ast.AST) -> str:
    """The names, attribute names and literals of an expression, space-separated."""
    parts = []
    for child in preorder(node):
        kind = type(child)
        if kind is ast.Name:
            parts.append(child.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            parts.append(child.attr)  # type: ignore[attr-defined]
        elif kind is ast.Constant:
            parts.append(str(child.value))  # type: ignore[attr-defined]
    return " ".join(parts)


def predicate_key(name: str) -> str:
    """How a cold predicate's name is held among the switches: `name()`, apart from the names themselves."""
    return name + "()"


def cold_test(test: ast.AST, switches: frozenset[str] = frozenset()) -> bool:
    """An `if` test that guards cold work (see the module's docstring). `switches`: the debug switches and
    the locals set to one, and, as `predicate_key(name)`, the module's cold predicates."""
    if isinstance(test, ast.Name) and test.id in switches:
        return True
    if isinstance(test, ast.BoolOp):
        return joined(isinstance(test.op, ast.And), [cold_test(v, switches) for v in test.values])
    if isinstance(test, ast.Constant) and test.value in (0, False, None):
        return True  # `if 0:`, `if False:`: dead code
    if switches and isinstance(test, ast.Call) and not test.args and not test.keywords:
        callee = _own_callee(test.func)
        if callee is not None and predicate_key(callee) in switches:
            return True
    words = ast_words(test)
    if "__name__" in words and "__main__" in words:
        return True
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Mod):
        modulus = test.left.right
        if isinstance(modulus, ast.Constant) and isinstance(modulus.value, int):
            return modulus.value >= 10
        return any(word in ast_words(test.left).lower() for word in sem.INTERVAL_WORDS)
    return any(word in words.lower() for word in sem.COLD_GUARD_WORDS)


def joined(conjunction: bool, parts: list[bool]) -> bool:
    """Whether `a and b` (`conjunction`) or `a or b` guards cold work, given whether each operand does: the body of
    `a and b` runs only where both hold, so one cold operand makes it cold; `a or b`, only when both are."""
    return any(parts) if conjunction else all(parts)


def _own_callee(func: ast.AST) -> Optional[str]:
    """`name` for `name()`, `self.name()` or `cls.name()`: a function or method of this module."""
    name = dotted(func)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if not rest:
        return head
    return rest if head in ("self", "cls") and "." not in rest else None


def cold_predicates(functions: Iterable[ast.AST]) -> set[str]:
    """The names of the functions among `functions` whose body (a docstring aside) is `return <cold test>`."""
    found = set()
    for function in functions:
        body = list(getattr(function, "body", ()))
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None \
                and not isinstance(body[0].value, ast.Constant) and cold_test(body[0].value):
            found.add(function.name)  # type: ignore[attr-defined]
    return found


def switch_locals(nodes: list[ast.AST], switches: frozenset[str]) -> frozenset[str]:
    """`switches` and the local names set to one of them, alone or as the first condition of an `and`
    (`verify = _verify_real_tensors and layer_id not in verified`)."""
    names = set(switches)
    for node in nodes:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            while isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
                value = value.values[0]
            if isinstance(value, ast.Name) and value.id in switches:
                names.add(node.targets[0].id)  # type: ignore[attr-defined]
    return frozenset(names)
