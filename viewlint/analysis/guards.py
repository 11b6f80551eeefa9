"""What an `if` test says about the block it guards: cold work (logging on an interval, a debug switch,
the `__main__` block, dead code), read once, over Python's `ast`, for every consumer (the call graph's
hot regions, the walker's contexts, the prefilter).

A test is cold when it is, or calls, one of:
- `step % 100 == 0`, `(i + 1) % log_every == 0` (not `layer_id % 2 == 0`, which picks a layer type);
- a name or attribute that says logging, debugging or a purpose other than the step (`self.debug`,
  `args.log_interval`, `torch.onnx.is_in_onnx_export()`);
- `now - last >= self.eviction_interval` (once an interval has passed), `cur_iter < 10` (the first steps only);
- a debug switch read from the environment, or a local set to one (`switches`), or to an environment read whose
  name says it checks, debugs or dumps (`dump_dir = os.environ.get("LOGIT_DUMP")`, then `if dump_dir is not None:`),
  or to a cold test of its own (`start_pruning = (it + 1) % self.pruning_interval == 0`);
- a call of a function or method of the module whose whole body returns a cold test
  (`self.is_gradient_accumulation_boundary()`: `return (self.micro_steps + 1) % self.gas == 0`);
- a value gone bad: `not torch.isfinite(grad_norm)`, `torch.isnan(loss).any()`, `math.isinf(x)` (the warning or the
  skipped step it guards runs on an anomaly only; the test itself runs every time), also through a local set to
  one (`nans = torch.isnan(x)`, then `if nans.any():`).
"""

from __future__ import annotations

import ast
from typing import Any, Iterable, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.falsy import TRUTHY
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
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in switches \
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        return True  # `if dump_dir is not None:` of `dump_dir = os.environ.get("..._DUMP")`: the switch is on
    if isinstance(test, ast.BoolOp):
        return joined(isinstance(test.op, ast.And), [cold_test(v, switches) for v in test.values])
    if _names_an_anomaly(test, switches):
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        # `if not step % 100:` runs once per interval; `if not no_copy_to_cpu:` never where every hot caller passes
        # `no_copy_to_cpu=True`; any other `not` runs where its guard does not hold: `if not
        # torch.jit.is_scripting():` is the eager path, `if not debug:` the usual one.
        if isinstance(test.operand, ast.Name):
            return TRUTHY + test.operand.id in switches
        return isinstance(test.operand, ast.BinOp) and isinstance(test.operand.op, ast.Mod) \
            and cold_test(ast.Compare(left=test.operand, ops=[ast.Eq()], comparators=[ast.Constant(0)]), switches)
    if isinstance(test, ast.Constant) and test.value in (0, False, None):
        return True  # `if 0:`, `if False:`: dead code
    if switches and isinstance(test, ast.Call) and not test.args and not test.keywords:
        callee = _own_callee(test.func)
        if callee is not None and predicate_key(callee) in switches:
            return True
    if type(test) in (ast.Call, ast.Subscript, ast.Compare) and is_debug_switch("", test):
        return True  # `if envs.SGLANG_..._VALIDATE.get():`, `if os.environ.get("X_DEBUG") == "1":` read in place
    words = ast_words(test)
    if main_guard(test):
        return True
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Mod):
        modulus = test.left.right
        if isinstance(modulus, ast.Constant) and isinstance(modulus.value, int):
            return modulus.value >= 10
        return any(word in ast_words(test.left).lower() for word in sem.INTERVAL_WORDS)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Lt, ast.LtE)) \
            and isinstance(test.comparators[0], ast.Constant) and type(test.comparators[0].value) is int \
            and _names_the_current_step(test.left):
        return True  # `cur_iter < 10`: the first few steps only (a warm-up)
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Sub) \
            and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.GtE, ast.Gt)):
        # `self._current_iter - self._last_eviction_iter == self._eviction_interval`: once an interval has passed.
        return any(word in ast_words(test.comparators[0]).lower() for word in _INTERVAL_LENGTH_WORDS)
    return any(word in words.lower() for word in sem.COLD_GUARD_WORDS)


def main_guard(test: ast.AST) -> bool:
    """`__name__ == "__main__"` (either way round), alone or with others in an `and`: the script's entry block. The
    one reading of it: the call graph makes a function of its body, the walker silences everything in it, `--verify`
    knows the file runs something."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(main_guard(value) for value in test.values)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) \
        and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def _names_an_anomaly(test: ast.AST, switches: frozenset[str] = frozenset()) -> bool:
    """`not torch.isfinite(x)`, `not x.isfinite().all()`, `torch.isnan(loss).any()`, `bool(torch.isinf(x).any())`,
    `math.isnan(v)`: true only when a value is not a finite number; also `nans.any()` of a local set to such a test
    (`nans = torch.isnan(x)`, one of `switches`)."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    node: Optional[ast.AST] = test.operand if negated else test  # type: ignore[attr-defined]
    wanted = ("isfinite",) if negated else ("isnan", "isinf")
    if not negated and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "any" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id in switches:
        return True
    while isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in wanted:
            return True
        if name not in ("any", "all", "item", "bool"):
            return False
        node = node.args[0] if node.args else func.value if isinstance(func, ast.Attribute) else None
    return False


def is_debug_switch(name: str, value: ast.AST) -> bool:
    """`name = <an environment read>` where the name or the variable says it checks or debugs."""
    texts = [name]
    reads_environment = False
    for node in ast.walk(value):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value)
        elif isinstance(node, ast.Attribute):
            texts.append(node.attr)
            reads_environment |= node.attr in ("environ", "getenv")
        elif isinstance(node, ast.Name):
            texts.append(node.id)
            reads_environment |= node.id in ("environ", "getenv", "envs") or "_env" in node.id.lower()
    lowered = " ".join(texts).lower()
    return reads_environment and any(word in lowered for word in sem.DEBUG_SWITCH_WORDS)


def _reads_environment(value: ast.AST) -> bool:
    """`os.environ.get(...)`, `os.getenv(...)`, `os.environ[...]` (what a local debug switch is set to)."""
    if type(value) is ast.Call:
        func = value.func  # type: ignore[attr-defined]
        return (type(func) is ast.Name and func.id == "getenv") or (type(func) is ast.Attribute and (
            func.attr == "getenv" or (func.attr == "get" and type(func.value) is ast.Attribute and func.value.attr == "environ")))
    return type(value) is ast.Subscript and type(value.value) is ast.Attribute and value.value.attr == "environ"  # type: ignore[attr-defined]


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


# Words that name the length of an interval, in `now - last >= <length>`, and a count of steps, in `step < 10`.
_INTERVAL_LENGTH_WORDS = ("interval", "every", "freq", "period")
_COUNTER_WORDS = ("step", "iter", "epoch")


def _names_the_current_step(node: ast.AST) -> bool:
    """`cur_iter`, `self.global_step`, `epoch`: a name for the step being run, not a count of steps (`num_steps`,
    `max_iters`: `num_steps < 2` says how long the run is, not that this is one of its first steps)."""
    name = (dotted(node) or "").split(".")[-1].lower()
    return any(word in name for word in _COUNTER_WORDS) and not name.startswith(("num_", "n_", "max_", "total")) \
        and not any(name.endswith(word + "s") for word in _COUNTER_WORDS)


def switch_locals(nodes: list[ast.AST], switches: frozenset[str]) -> frozenset[str]:
    """`switches` and the local names set to one of them, alone or as the first condition of an `and`
    (`verify = _verify_real_tensors and layer_id not in verified`), or set to a cold test of their own
    (`start_pruning = (cur_iter + 1) % self.pruning_interval == 0`, then `if start_pruning and self.training:`)."""
    names = set(switches)
    for node in nodes:
        if type(node) is ast.AnnAssign and type(node.target) is ast.Name and type(node.value) in (ast.Compare, ast.BoolOp):  # type: ignore[attr-defined]
            if cold_test(node.value, switches):  # type: ignore[attr-defined, arg-type]
                names.add(node.target.id)  # type: ignore[attr-defined]  # `start_pruning: bool = (...) % n == 0`
        elif type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            if (type(value) is ast.Compare or type(value) is ast.BoolOp) and cold_test(value, switches):
                names.add(node.targets[0].id)  # type: ignore[attr-defined]
                continue
            if type(value) is ast.Call and _names_an_anomaly(value):
                names.add(node.targets[0].id)  # type: ignore[attr-defined]  # `nans = torch.isnan(x)`: `if nans.any():`
                continue
            if _reads_environment(value) and is_debug_switch(node.targets[0].id, value):  # type: ignore[attr-defined]
                names.add(node.targets[0].id)  # type: ignore[attr-defined]  # `dump_dir = os.environ.get("..._DUMP")`
                continue
            while isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
                value = value.values[0]
            if isinstance(value, ast.Name) and value.id in switches:
                names.add(node.targets[0].id)  # type: ignore[attr-defined]
    return frozenset(names)


def local_switches(index: Any, function: ast.AST, nodes: Optional[list[ast.AST]] = None) -> frozenset[str]:
    """`switch_locals` of a top-level function or method of the module `index` reads, with the module's cold
    switches, once per function. `nodes`: the function's nodes, or any list that holds all its assignments (the call
    graph's skeleton of it); by default its preorder list."""
    key = ("local switches", id(function))
    found = index.memo.get(key)
    if found is None or found[0] is not function:
        if nodes is None:
            nodes = index.segment_nodes.get(id(function))
        found = index.memo[key] = (function, switch_locals(nodes if nodes is not None else list(preorder(function)),
                                                           index.cold_switches))
    return found[1]  # type: ignore[no-any-return]
