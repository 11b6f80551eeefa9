"""The `ast` twin of each libcst function, class and loop the walker enters.

The analysis reads a function's or a loop's facts once, off CPython's `ast` (the call graph, `hotness`); the walker
walks libcst. This table lets the walker ask those readings about the node it is in, instead of reading the same fact
a second time off libcst. Both trees hold the same compound statements in the same order, but for the statements the
prefilter blanked (module-level statements and class members, each whole), which are left out of the `ast` side by
their row (`kept rows`). The match goes statement by statement, never into expressions, and stops at the first pair
that does not agree (kind, or name): a node without a twin is simply not found. Of an `if` test, `test_pairs` pairs
the test and the operands of its `and`/`or` chains with their `ast` (the cold-guard readings ask of each operand).
"""

from __future__ import annotations

import ast
from typing import Optional, Sequence

import libcst as cst

__all__ = ["register", "registered", "test_pairs", "twin"]

_KEY = "twins"

# libcst's compound statement -> the `ast` kinds it may stand for.
_KINDS: dict[type, tuple[type, ...]] = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.If: (ast.If,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
}
if hasattr(cst, "TryStar") and hasattr(ast, "TryStar"):
    _KINDS[cst.TryStar] = (ast.TryStar,)  # type: ignore[attr-defined]
if hasattr(cst, "Match") and hasattr(ast, "Match"):
    _KINDS[cst.Match] = (ast.Match,)  # type: ignore[attr-defined]
_AST_COMPOUND = tuple(kind for kinds in _KINDS.values() for kind in kinds)


def registered(memo: dict, node: cst.CSTNode) -> bool:
    """Whether `node`'s twins are known (a tree registered with `register`)."""
    table = memo.get(_KEY)
    found = table.get(("root", id(node))) if table is not None else None
    return found is not None and found[0] is node


def twin(memo: dict, node: cst.CSTNode) -> Optional[ast.AST]:
    """The `ast` node `node` stands for (a function, class or loop of a registered tree), or None."""
    table = memo.get(_KEY)
    found = table.get(id(node)) if table is not None else None
    return found[1] if found is not None and found[0] is node else None


def register(memo: dict, node: cst.CSTNode, twin_node: ast.AST, rows: Optional[bytearray] = None) -> None:
    """Match `node` (a module, or a function or class) with its `ast` twin, and everything in it. `rows`: the rows of
    the file the walked text keeps (None: all), for a module whose statements the prefilter blanked."""
    table = memo.get(_KEY)
    if table is None:
        table = memo[_KEY] = {}
    table[("root", id(node))] = (node, twin_node)
    if isinstance(node, cst.Module):
        _match(table, node.body, getattr(twin_node, "body", []), rows)
    else:  # a root is its caller's word (the body of `if __name__ == "__main__":`, walked as a function of its own)
        table[id(node)] = (node, twin_node)
        for block, twin_block in _blocks(node, twin_node):
            _match(table, block, twin_block, rows)


def _match(table: dict, statements: Sequence[cst.CSTNode], twins: Sequence[ast.AST], rows: Optional[bytearray]) -> None:
    mine = [s for s in statements if type(s) in _KINDS]
    theirs = [s for s in twins if isinstance(s, _AST_COMPOUND) and _kept(s, rows)]
    if len(mine) != len(theirs):
        return
    for node, twin_node in zip(mine, theirs):
        if not _pair(table, node, twin_node, rows):
            return


def _kept(statement: ast.AST, rows: Optional[bytearray]) -> bool:
    line = getattr(statement, "lineno", 0)
    return rows is None or (0 <= line < len(rows) and bool(rows[line]))


def _pair(table: dict, node: cst.CSTNode, twin_node: ast.AST, rows: Optional[bytearray]) -> bool:
    """Record one matched pair and match what their blocks hold; False when the two do not agree."""
    kinds = _KINDS.get(type(node))
    if kinds is None or not isinstance(twin_node, kinds):
        return False
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value != twin_node.name:  # type: ignore[attr-defined]
        return False
    table[id(node)] = (node, twin_node)
    for block, twin_block in _blocks(node, twin_node):
        _match(table, block, twin_block, rows)
    return True


def _statements(suite: Optional[cst.CSTNode]) -> Sequence[cst.CSTNode]:
    if isinstance(suite, cst.IndentedBlock):
        return suite.body
    if isinstance(suite, cst.Else):
        return _statements(suite.body)
    return ()  # a one-line suite (`if x: y = 1`) holds no compound statement


def _blocks(node: cst.CSTNode, twin_node: ast.AST) -> list[tuple[Sequence[cst.CSTNode], Sequence[ast.AST]]]:
    """The pairs of statement lists inside two matched statements."""
    found = [(_statements(getattr(node, "body", None)), getattr(twin_node, "body", []))]
    if isinstance(node, cst.If):
        orelse = node.orelse
        if isinstance(orelse, cst.If):
            found.append(([orelse], twin_node.orelse))  # type: ignore[attr-defined]
        elif orelse is not None:
            found.append((_statements(orelse), twin_node.orelse))  # type: ignore[attr-defined]
    elif isinstance(node, (cst.For, cst.While)):
        found.append((_statements(node.orelse), twin_node.orelse))  # type: ignore[attr-defined]
    elif isinstance(node, cst.Try) or type(node).__name__ == "TryStar":
        handlers = list(node.handlers)  # type: ignore[attr-defined]
        twin_handlers = list(twin_node.handlers)  # type: ignore[attr-defined]
        if len(handlers) == len(twin_handlers):
            found.extend((_statements(h.body), t.body) for h, t in zip(handlers, twin_handlers))
        found.append((_statements(node.orelse), twin_node.orelse))  # type: ignore[attr-defined]
        found.append((_statements(node.finalbody.body if node.finalbody else None), twin_node.finalbody))  # type: ignore[attr-defined]
    elif type(node).__name__ == "Match":
        cases = list(node.cases)  # type: ignore[attr-defined]
        twin_cases = list(twin_node.cases)  # type: ignore[attr-defined]
        if len(cases) == len(twin_cases):
            found.extend((_statements(c.body), t.body) for c, t in zip(cases, twin_cases))
    return found


# libcst's expression kinds -> the `ast` kind of the same expression (what an operand of a chain is checked against).
_EXPRESSIONS: dict[type, type] = {
    cst.Name: ast.Name, cst.Attribute: ast.Attribute, cst.Call: ast.Call, cst.Comparison: ast.Compare,
    cst.UnaryOperation: ast.UnaryOp, cst.BooleanOperation: ast.BoolOp, cst.Subscript: ast.Subscript,
    cst.BinaryOperation: ast.BinOp,
}


def test_pairs(test: cst.BaseExpression, parsed: ast.AST) -> list[tuple[cst.BaseExpression, ast.AST]]:
    """`test` and `parsed` (its `ast`: the test of an `if` statement's twin), and each operand of their `and`/`or`
    chains, paired: libcst nests `a and b and c` as `(a and b) and c`, `ast` lists `[a, b, c]`; a parenthesized
    chain is one operand in both. Nothing where the two do not agree in shape."""
    if _EXPRESSIONS.get(type(test)) is not type(parsed):
        return []
    pairs: list[tuple[cst.BaseExpression, ast.AST]] = [(test, parsed)]
    if type(test) is cst.BooleanOperation:
        operator = type(test.operator)  # type: ignore[attr-defined]
        operands = _chain(test.left, operator) + _chain(test.right, operator)  # type: ignore[attr-defined]
        values = parsed.values  # type: ignore[attr-defined]
        same_operator = (type(test.operator) is cst.And) is (type(parsed.op) is ast.And)  # type: ignore[attr-defined]
        if same_operator and len(operands) == len(values):
            for operand, value in zip(operands, values):
                pairs.extend(test_pairs(operand, value))
    return pairs


def _chain(node: cst.BaseExpression, operator: type) -> list[cst.BaseExpression]:
    """The operands of a chain of one operator, as `ast` lists them (not entering parentheses)."""
    if type(node) is cst.BooleanOperation and type(node.operator) is operator and not node.lpar:  # type: ignore[attr-defined]
        return _chain(node.left, operator) + _chain(node.right, operator)  # type: ignore[attr-defined]
    return [node]
