"""What an `nn.ModuleList` a class builds holds: the classes of its modules (read off `__init__`'s `ast`), and
which class sits at the positions the code fixes (`self.layer[0]`, `self.layer[-1]`). Part of the module index."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional, Sequence

from viewlint.analysis import semantics
from viewlint.analysis.nodes import assignments, dotted, qualify_name
from viewlint.analysis.values import MAX_CLASSES

if TYPE_CHECKING:
    from viewlint.analysis.module_index import ModuleIndex


# A `ModuleList` may hold modules of a few classes (`ResnetBlock2D` or `ResnetBlockCondNorm2D` by the config):
# calling one of its items gives what any of them gives. More than `MAX_CLASSES` (the most an object of one of
# several classes keeps, `values.py`): nothing is known.


def listed_class(call: ast.Call, index: "ModuleIndex", nodes: Sequence[ast.AST] = (),
                  attribute: Optional[str] = None) -> Optional[str]:
    """The classes whose instances `nn.ModuleList(...)` is built from, `|`-separated: `[Layer(c) for ...]`,
    `[Layer(a), Layer(b)]`, a local list the same function fills (`blocks = []`, `blocks.append(Block(...))`, then
    `nn.ModuleList(blocks)`), or an empty one it appends to (`self.layer = nn.ModuleList()` or `nn.ModuleList([])`,
    `self.layer.append(T5LayerFF(config))`): classes of this module or imported (by their names), `torch.nn` ones
    qualified; None when an item is not a call of one (`None`, a function's result) or nothing is known."""
    if not call.args or (isinstance(call.args[0], ast.List) and not call.args[0].elts):
        elements = _appended(f"self.{attribute}", nodes, bound=False) if attribute is not None else []
        if not elements:
            return None
    else:
        items = call.args[0]
        if isinstance(items, (ast.ListComp, ast.GeneratorExp)):
            elements = [items.elt]
        elif isinstance(items, (ast.List, ast.Tuple)):
            elements = list(items.elts)
        elif isinstance(items, ast.Name):
            elements = _appended(items.id, nodes)
            if not elements:
                return None
        else:
            return None
    found: set[str] = set()
    for element in elements:
        if isinstance(element, ast.Constant) and element.value is None:
            continue  # `attentions.append(None)`: a slot the code skips (`if attn is not None`)
        if isinstance(element, ast.Name):
            # `self.net.append(act_fn)` after `act_fn = GELU(...)` or `act_fn = GEGLU(...)`: what the name is bound to.
            bound = [value for node in nodes if isinstance(node, ast.Assign)
                     for target, value in assignments(node) if isinstance(target, ast.Name) and target.id == element.id]
            items = [item_class(value, index) for value in bound]
            if not items or None in items:
                return None
            found.update(part for item in items for part in item.split("|"))  # type: ignore[union-attr]
            continue
        item = item_class(element, index)
        if item is None:
            return None
        found.add(item)
    return "|".join(sorted(found)) if 0 < len(found) <= MAX_CLASSES else None


def item_class(element: ast.AST, index: "ModuleIndex") -> Optional[str]:
    """The class a `ModuleList` item is an instance of: `Layer(c)` of a class of this module or imported (by its
    name), `nn.Linear(...)` (qualified); None for anything else."""
    if not isinstance(element, ast.Call):
        return None
    name = dotted(element.func)
    qualified = qualify_name(index, name) or name
    imported = name is not None and name[:1].isupper() and (name in index.relative_imports or (
        "." in index.aliases.get(name, "") and not (qualified or "").startswith("torch.")))
    if name is not None and (name in index.classes or imported):
        return name
    if qualified is not None and semantics.nn_module_class(qualified):
        return qualified
    return None


def listed_order(function: ast.AST, attribute: str, index: "ModuleIndex") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The classes at the known positions of `self.<attribute>`, a `ModuleList` the function fills by appends: an
    append among the function's own statements always runs; one alone in the body of an `if` may run or not (the
    positions after it hold one of two classes, `A|B`); one in a loop, or any other change of the list, ends what is
    known. (head, tail): the classes from the start up to the first such change, and from the end."""
    name = f"self.{attribute}"
    sequence: list[Optional[tuple[str, bool]]] = []  # (class, whether the append may not run); None: unknown
    for statement in getattr(function, "body", ()):
        item = _append_of(statement, name, index)
        if item is not None:
            sequence.append((item, False))
        elif isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1 \
                and (item := _append_of(statement.body[0], name, index)) is not None:
            sequence.append((item, True))
        elif not isinstance(statement, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and dotted(n.func.value) == name
                for n in ast.walk(statement)):
            sequence.append(None)
    cut = sequence.index(None) if None in sequence else len(sequence)
    head = _positions(sequence[:cut])  # type: ignore[arg-type]
    after = len(sequence) - 1 - sequence[::-1].index(None) if None in sequence else -1
    tail = _positions(sequence[after + 1:][::-1])[::-1]  # type: ignore[arg-type]
    return head, tail


def _append_of(statement: ast.stmt, name: str, index: "ModuleIndex") -> Optional[str]:
    """The class `name.append(Layer(...))` appends, where the statement is that append."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
            and dotted(call.func.value) == name and len(call.args) == 1:
        return item_class(call.args[0], index) or ""
    return None


def _positions(appends: Sequence[tuple[str, bool]]) -> tuple[str, ...]:
    """The class at each position of a list filled by `appends` in order, where some may not run: at each position,
    the classes it holds on the fillings long enough to have it (`A|B`), while they are few."""
    fillings: list[tuple[str, ...]] = [()]
    for item, may_skip in appends:
        if not item:
            break
        fillings = [f + (item,) for f in fillings] + (fillings if may_skip else [])
        if len(fillings) > 16:
            break
    found: list[str] = []
    for position in range(max(len(f) for f in fillings)):
        held = {f[position] for f in fillings if len(f) > position}
        if len(held) > MAX_CLASSES:
            break
        found.append("|".join(sorted(held)))
    return tuple(found)


def _appended(name: str, nodes: Sequence[ast.AST], bound: bool = True) -> list[ast.AST]:
    """What a function adds to its list `name` (a local, or `self.<attr>`): the items of `name = [...]` and the
    arguments of `name.append(...)` (a list bound on two branches: what either holds); empty when it is filled in any
    other way (`extend`, `+=`, `insert`). `bound`: each binding must be a list display (`self.layer = nn.ModuleList()`
    need not be)."""
    found: list[ast.AST] = []
    bindings = 0
    for node in nodes:
        if isinstance(node, ast.Assign) and any(dotted(t) == name for t in node.targets):
            bindings += 1
            if isinstance(node.value, ast.List):
                found.extend(node.value.elts)
            elif bound:
                return []
        elif isinstance(node, ast.AugAssign) and dotted(node.target) == name:
            return []
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and dotted(node.func.value) == name:
            if node.func.attr != "append" or len(node.args) != 1:
                return []
            found.append(node.args[0])
    return found if bindings >= 1 else []
