"""Which of a choice of submodules a branch on the config runs.

A block builds one of several classes by a setting it keeps, and its `forward` tests the same setting:

    def __init__(self, dim, norm_type="layer_norm"):
        self.norm_type = norm_type
        if norm_type == "ada_norm_zero":
            self.norm1 = AdaLayerNormZero(dim)      # returns a 5-tuple
        else:
            self.norm1 = nn.LayerNorm(dim)          # returns a tensor

    def forward(self, x, emb):
        if self.norm_type == "ada_norm_zero":
            x, gate, shift, scale, g = self.norm1(x, emb)
        else:
            x = self.norm1(x)

`guards_of` reads, for each attribute `__init__` assigns under such tests, the setting each class is built for
(`self.norm_type` in {"ada_norm_zero"}, or not in it); `admitted` says which classes a test of the same setting in
another method leaves (`Narrowing.narrowings` binds `self.norm1` to them inside the branch). A setting is a parameter
`__init__` stores as it is (`self.norm_type = norm_type`) or an attribute it tests directly; a test of anything else
constrains nothing.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional, Sequence, Union

import libcst as cst

# (setting, the values it is tested for, whether the branch is where it has one of them).
Constraint = tuple[str, frozenset, bool]
# {attribute: {class as spelled: the constraints of the branches that build it}}
Guards = dict[str, dict[str, tuple[Constraint, ...]]]

_Literal = Union[str, int, bool, None]
# The class a construction builds, as spelled (`module_index._built_class`), or None.
BuiltClass = Callable[[ast.Call], Optional[str]]


def _literal(node: ast.AST) -> tuple[bool, _Literal]:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, int, bool))):
        return True, node.value
    return False, None


def _ast_test(test: ast.AST, settings: dict[str, str]) -> Optional[tuple[str, frozenset, bool]]:
    """(setting, values, holds) for `key == "a"`, `key != "a"`, `key in ("a", "b")`, `key not in [...]`, `key`,
    `not key`; None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _ast_test(test.operand, settings)
        return None if inner is None else (inner[0], inner[1], not inner[2])
    key = _setting(test, settings)
    if key is not None:
        return key, frozenset({True}), True
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        key = _setting(test.left, settings)
        if key is None:
            return None
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq)):
            known, value = _literal(right)
            return (key, frozenset({value}), isinstance(op, ast.Eq)) if known else None
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
            values = [_literal(e) for e in right.elts]
            if values and all(known for known, _ in values):
                return key, frozenset(v for _, v in values), isinstance(op, ast.In)
    return None


def _setting(node: ast.AST, settings: dict[str, str]) -> Optional[str]:
    """`self.norm_type`, or a parameter `__init__` stores as `self.norm_type`: "norm_type"."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    if isinstance(node, ast.Name):
        return settings.get(node.id)
    return None


def guards_of(init: ast.FunctionDef, built_class: BuiltClass) -> Guards:
    """The constraints under which `init` assigns each `self.<attr>` an instance of a class (`built_class(call)`: the
    class a construction names, as spelled, or None)."""
    settings = {}
    for stmt in ast.walk(init):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name):
            target = stmt.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                settings[stmt.value.id] = target.attr
    arguments = init.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    settings = {p: a for p, a in settings.items() if p in parameters}
    found: Guards = {}
    _scan(init.body, (), settings, built_class, found)
    return found


def _scan(body: Sequence[ast.stmt], constraints: tuple[Constraint, ...], settings: dict[str, str],
          built_class: BuiltClass, found: Guards) -> None:
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = _ast_test(stmt.test, settings)
            inside = constraints + ((test[0], test[1], test[2]),) if test is not None else constraints
            outside = constraints + ((test[0], test[1], not test[2]),) if test is not None else constraints
            _scan(stmt.body, inside, settings, built_class, found)
            _scan(stmt.orelse, outside, settings, built_class, found)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
            target = stmt.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                name = built_class(stmt.value)
                if name is not None:
                    found.setdefault(target.attr, {}).setdefault(name, constraints)


def cst_test(test: cst.BaseExpression) -> Optional[tuple[str, frozenset, bool]]:
    """`_ast_test` of a test in another method, where the setting is `self.<name>` itself."""
    try:
        parsed = ast.parse(cst.Module(body=[]).code_for_node(test), mode="eval").body
    except SyntaxError:
        return None
    return _ast_test(parsed, {})


def chosen_key(attribute: str) -> str:
    """The name the flow binds the classes `self.<attribute>` may be in a branch under: not `self.<attribute>` itself,
    which other reads of it (`self.norm1.weight`) take as they always did."""
    return f"<chosen>self.{attribute}"


def admitted(guards: dict[str, tuple[Constraint, ...]], setting: str, values: frozenset, holds: bool) -> list[str]:
    """The classes (of those `guards` lists) that may be built where `self.<setting>` is one of `values` (`holds`) or
    is none of them."""
    chosen = []
    for name, constraints in guards.items():
        possible = True
        for key, built_for, built_inside in constraints:
            if key != setting:
                continue
            if holds:  # the setting is one of `values`: some of them is where the class is built
                possible = any((v in built_for) == built_inside for v in values)
            else:  # the setting is none of `values`: where the class is built must allow another value
                possible = not built_inside or not built_for <= values
            if not possible:
                break
        if possible:
            chosen.append(name)
    return chosen
