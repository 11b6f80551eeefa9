"""libcst tree helpers shared by the analysis: dotted names, source text in place, and a cheap
descent that skips whitespace and punctuation (a libcst visitor rebuilds every node it passes)."""

from __future__ import annotations

import inspect
import io
import re
import tokenize
import typing
from typing import Any, Callable, Hashable, Iterable, Iterator, Optional, Sequence, TypeVar

import libcst as cst
from libcst import MaybeSentinel

T = TypeVar("T")


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    # Exact type tests: libcst's node classes are ABCs, whose `isinstance` runs Python code, and
    # nothing subclasses `Name` or `Attribute`. This runs for most expressions the walk reads.
    kind = type(node)
    if kind is cst.Name:
        return node.value  # type: ignore[attr-defined, no-any-return]
    parts: list[str] = []
    while kind is cst.Attribute:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = type(node)
    if kind is cst.Name:
        parts.append(node.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


def string_key(node: cst.BaseExpression) -> Optional[str]:
    """`"key"` of `x["key"]`: the one key a subscript writes out as a string, else None."""
    if type(node) is not cst.Subscript or len(node.slice) != 1:  # type: ignore[attr-defined]
        return None
    index = node.slice[0].slice  # type: ignore[attr-defined]
    key = index.value if type(index) is cst.Index else None
    return str(key.evaluated_value) if type(key) is cst.SimpleString else None  # type: ignore[attr-defined]


def keyed_reference(node: cst.BaseExpression) -> Optional[str]:
    """`d["key"]` (a dotted name read with one string key) as the text a test narrows it by, else None."""
    key = string_key(node)
    base = dotted_name(node.value) if key is not None else None  # type: ignore[attr-defined]
    return f"{base}[{key!r}]" if base is not None else None


def narrowed_reference(node: cst.BaseExpression) -> Optional[str]:
    """What a type test can narrow besides a dotted name: `d["key"]` (`keyed_reference`) or an item of a dotted name
    by a number written out (`item[1]` of `for item in d.items()`), as text; else None. Only within the test's own
    expression (a conditional expression's branch, the rest of an `and`, a comprehension's element): a store into
    the container elsewhere would not undo it."""
    found = keyed_reference(node)
    if found is not None or type(node) is not cst.Subscript or len(node.slice) != 1:  # type: ignore[attr-defined]
        return found
    index = node.slice[0].slice  # type: ignore[attr-defined]
    key = index.value if type(index) is cst.Index else None
    if type(key) is cst.UnaryOperation and type(key.operator) is cst.Minus:
        key = key.expression if type(key.expression) is cst.Integer else None
        sign = "-"
    else:
        sign = ""
    base = dotted_name(node.value)  # type: ignore[attr-defined]
    if base is None or type(key) is not cst.Integer:
        return None
    return f"{base}[{sign}{int(key.evaluated_value)}]"  # type: ignore[attr-defined]


def string_keyed(node: cst.Subscript) -> bool:
    """`d["key"]`, `d[f"{name}.weight"]`: one index, a string written out."""
    index = node.slice[0].slice if len(node.slice) == 1 else None
    return isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def stored_key(reference: str) -> str:
    """The scope entry under which the flow keeps what a function stored in `reference` (`state["exp_avg"] = ...`):
    not a name, so nothing reads it as one; the evaluator reads it where `reference` is read and nothing else says
    what it holds."""
    return STORED + reference


STORED = "<stored> "


def source_in_place(module: cst.Module, node: cst.CSTNode, blocks: Sequence[cst.IndentedBlock]) -> str:
    """`node`'s code with the indentation of its enclosing blocks (`blocks`, outermost first).

    `Module.code_for_node` prints a node alone, so a line continued inside brackets loses
    the indentation of the blocks around it; an edit made from it would dedent that line.
    """
    from libcst._nodes.internal import CodegenState

    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    for block in blocks:
        state.indent_tokens.append(module.default_indent if block.indent is None else block.indent)
    node._codegen(state)
    return "".join(state.tokens)


# Node types no rule and no fact ever looks at: whitespace, comments, brackets, commas, operators.
# The walker does not descend into them (rules read operators through their parents' attributes).
_UNWALKED = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline, cst.Comment,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.ImportStar,
    cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseUnaryOp, cst.BaseCompOp, cst.BaseAugOp,
)
_CHILD_FIELD = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
_FIELDS: dict[type, tuple[str, ...]] = {}
_WALKED: dict[type, bool] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    """The fields that may hold a child the walk enters, in the order libcst's own visitor visits
    them (source order). Fields whose declared type admits only whitespace or punctuation
    (`lpar`, `whitespace_after_func`, `comma`) are left out: most nodes have more of those than of
    children, and every walk would read them only to skip what they hold."""
    fields = _FIELDS.get(node_type)
    if fields is None:
        source = inspect.getsource(node_type._visit_and_replace_children)  # type: ignore[attr-defined]
        every = tuple(dict.fromkeys(_CHILD_FIELD.findall(source)))
        declared = _declared_types(node_type)
        fields = _FIELDS[node_type] = tuple(name for name in every if _may_hold_walked(declared.get(name)))
    return fields


def _declared_types(node_type: type) -> dict[str, object]:
    """The node class's field annotations, resolved; {} when they cannot be (every field is then kept)."""
    try:
        return typing.get_type_hints(node_type)
    except Exception:  # noqa: BLE001 - an annotation this Python cannot evaluate: keep every field
        return {}


def _may_hold_walked(annotation: object) -> bool:
    """Whether a field declared as `annotation` may hold a node the walk enters (True when unsure)."""
    if annotation is None:
        return True  # not declared (or not resolved): keep it
    if annotation is type(None) or annotation is str or annotation is MaybeSentinel:
        return False
    arguments = typing.get_args(annotation)
    if arguments:  # Sequence[...], Optional[...], Union[...]
        return any(_may_hold_walked(argument) for argument in arguments)
    if isinstance(annotation, type):
        return not (issubclass(annotation, cst.CSTNode) and issubclass(annotation, _UNWALKED))
    return True


def _walked(node_type: type) -> bool:
    """A libcst node type the walker enters (False for whitespace, punctuation and non-nodes)."""
    walked = _WALKED.get(node_type)
    if walked is None:
        walked = _WALKED[node_type] = issubclass(node_type, cst.CSTNode) and not issubclass(node_type, _UNWALKED)
    return walked


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The direct children of `node` in source order, without whitespace or punctuation."""
    found: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            found.extend(child for child in value if _WALKED.get(type(child)) or _walked(type(child)))
        elif _WALKED.get(type(value)) or _walked(type(value)):
            found.append(value)
    return found


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes under `node` (itself first) in source order, without whitespace or punctuation;
    much cheaper than a libcst visitor, which rebuilds every node it passes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def parent_map(node: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """`id(child) -> parent` for every node under `node` (as `children` walks them)."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        for child in children(current):
            parents[id(child)] = current
            stack.append(child)
    return parents


Node = TypeVar("Node")  # a libcst or an `ast` node


def enclosing(node: Node, parents: dict[int, Node], kinds: tuple[type, ...], scope: Optional[Node] = None) -> Optional[Node]:
    """The innermost node of one of `kinds` around `node` (not `node` itself), below `scope` when given; on libcst's
    tree or `ast`'s, with the parent map of either."""
    current = parents.get(id(node))
    while current is not None and current is not scope:
        if isinstance(current, kinds):
            return current
        current = parents.get(id(current))
    return None


def enclosing_statement(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> Optional[cst.CSTNode]:
    """The innermost statement (a simple statement line or a compound statement) around `node`, or `node` itself."""
    statements = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
    return node if isinstance(node, statements) else enclosing(node, parents, statements)


def own_nodes(function: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """The nodes of a function's body that belong to it: those of the functions, classes and lambdas defined in it are
    left out (their definitions themselves are not)."""
    pending: list[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(reversed(children(node)))


def walk_events(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, bool]]:
    """`(node, True)` on entering and `(node, False)` on leaving each node under `node` (itself
    included), in source order, without whitespace or punctuation: a libcst visitor's
    `on_visit`/`on_leave` sequence, without rebuilding the tree."""
    stack: list[tuple[cst.CSTNode, bool]] = [(node, True)]
    while stack:
        current, entering = stack.pop()
        yield current, entering
        if not entering:
            continue
        stack.append((current, False))
        children: list[tuple[cst.CSTNode, bool]] = []
        for name in _child_fields(type(current)):
            value = getattr(current, name)
            if type(value) is tuple or type(value) is list:
                children.extend((child, True) for child in value if _WALKED.get(type(child)) or _walked(type(child)))
            elif _WALKED.get(type(value)) or _walked(type(value)):
                children.append((value, True))
        children.reverse()
        stack.extend(children)


def _skip_validation(self: cst.CSTNode) -> None:
    pass


# The language server's cache of parsed texts across lints (`viewlint.lsp.incremental`); None: off.
PARSE_CACHE: Optional[Any] = None


def parse_module(source: str) -> cst.Module:
    """`libcst.parse_module`, without re-validating every node the parser builds (from
    `PARSE_CACHE` when the language server has installed one and parsed this text before)."""
    if PARSE_CACHE is not None:
        return PARSE_CACHE.parsed(source, _parse_module)
    return _parse_module(source)


def remembered(kind: Hashable, node: object, compute: Callable[[], T]) -> T:
    """`compute()`, which must depend on nothing but the subtree of `node`, a libcst or `ast` node (and
    `kind`, which names what is computed and anything else it reads, such as a printer's indentation).
    While the language server runs, `PARSE_CACHE` keeps the result across lints, keyed by the node
    itself: after an edit, the statements it did not touch are the same nodes (`viewlint.lsp.incremental`),
    so what was computed on them is not computed again. The result is shared: callers must not change it."""
    cache = PARSE_CACHE
    if cache is None:
        return compute()
    return cache.remembered(kind, node, compute)  # type: ignore[no-any-return]


def subtree(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """`descendants(node)`; kept across lints (as a tuple) while the language server runs, for the
    functions that several facts and rules read in full."""
    if PARSE_CACHE is None:
        return descendants(node)
    return PARSE_CACHE.remembered("subtree", node, lambda: tuple(descendants(node)))  # type: ignore[no-any-return]


def code_for_node(module: cst.Module, node: cst.CSTNode) -> str:
    """`module.code_for_node(node)` (a function of the node and the module's indentation and line
    ending alone), kept across lints while the language server runs."""
    if PARSE_CACHE is None:
        return module.code_for_node(node)
    return PARSE_CACHE.remembered(("code", module.default_indent, module.default_newline), node,  # type: ignore[no-any-return]
                                  lambda: module.code_for_node(node))


def _parse_module(source: str) -> cst.Module:
    """`libcst.parse_module`, without re-validating every node the parser builds.

    Each libcst node checks its own invariants in `__post_init__` (`_validate`). For a tree the
    parser built from source that CPython has already accepted, they hold by construction (a
    comment in libcst's `CSTNode.__post_init__` says as much), yet they cost about an eighth of
    the parse. The check is off only while this call runs.
    """
    node_class = cst.CSTNode
    original = node_class.__dict__.get("__post_init__")
    if original is None:  # a libcst without the hook: nothing to skip
        return cst.parse_module(source)
    node_class.__post_init__ = _skip_validation  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        node_class.__post_init__ = original  # type: ignore[method-assign]


def _without_comments(text: str) -> str:
    """`text` (code of one node) without its comments: an expression written over several lines keeps the comments
    between them (`torch.where(mask,  # why`), which a one-line message must not show."""
    if "#" not in text:
        return text
    cuts: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                cuts[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        return text
    lines = text.splitlines()
    return "\n".join(line[: cuts[row]] if row in cuts else line for row, line in enumerate(lines, start=1))


def short_text(node: cst.CSTNode, render: Callable[[cst.CSTNode], str], limit: int = 60,
               long_prefixes: Optional[dict[tuple[int, int], tuple[cst.CSTNode, str]]] = None) -> str:
    """`render(node)` on one line, cut to `limit` characters with `…`.

    A chain of calls, attributes and subscripts too deep for libcst's code generation (which
    recurses through C frames that no recursion limit lifts on Python 3.12 and later) is spelled
    from its innermost name outwards, without rendering: `x.float().float()…`.

    `long_prefixes`: a cache, kept by the caller for one tree, of what `_long_prefix` found.
    """
    prefix = _long_prefix(node, limit, long_prefixes if long_prefixes is not None else {})
    if prefix is not None:
        return prefix[: limit - 1] + "…"
    try:
        text = " ".join(_without_comments(render(node)).split())
    except RecursionError:
        parts: list[str] = []
        current: cst.CSTNode = node
        while len(parts) < limit:
            if isinstance(current, cst.Call):
                parts.append("(…)" if current.args else "()")
                current = current.func
            elif isinstance(current, cst.Attribute):
                parts.append("." + current.attr.value)
                current = current.value
            elif isinstance(current, cst.Subscript):
                parts.append("[…]")
                current = current.value
            else:
                break
        base = current.value if isinstance(current, cst.Name) else "…"
        text = base + "".join(reversed(parts))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# A chain at least this long has its short text read off a link near its start (see `_long_prefix`).
_LONG_CHAIN = 16


def _long_prefix(node: cst.CSTNode, limit: int, found: dict[tuple[int, int], tuple[cst.CSTNode, str]]) -> Optional[str]:
    """For a long chain of calls, attributes and subscripts: the text (on one line) of the innermost link
    that already holds more than `limit` characters, or None.

    The text of `a.f()` starts with the text of `a` (unless it is parenthesised), so that link decides
    what `short_text` shows. Rendering the whole chain for each link asked about cost time quadratic in
    its length (cubic over a statement whose every link is asked about); this renders a few links once
    (a galloping search), and a link whose chain below was searched before takes the answer from `found`.
    """
    chain: list[cst.CSTNode] = []
    current: cst.CSTNode = node
    while isinstance(current, (cst.Call, cst.Attribute, cst.Subscript)) and not current.lpar:
        current = current.func if isinstance(current, cst.Call) else current.value
        known = found.get((id(current), limit))
        if known is not None:
            found[(id(node), limit)] = (node, known[1])
            return known[1]
        chain.append(current)
    if len(chain) < _LONG_CHAIN or dotted_name(node) is not None:  # type: ignore[arg-type]
        return None
    printer = cst.Module(body=[])
    texts: dict[int, str] = {}

    def text_of(position: int) -> str:  # position 0 is the innermost link
        if position not in texts:
            texts[position] = " ".join(printer.code_for_node(chain[len(chain) - 1 - position]).split())
        return texts[position]

    try:
        # From the innermost link outwards, doubling the step; then halving back to the first long enough link.
        low, high = 0, 0
        while len(text_of(high)) <= limit:
            if high == len(chain) - 1:
                return None
            low, high = high + 1, min(2 * high + 1, len(chain) - 1)
        while low < high:
            middle = (low + high) // 2
            if len(text_of(middle)) > limit:
                high = middle
            else:
                low = middle + 1
    except RecursionError:
        return None
    text = text_of(high)
    found[(id(node), limit)] = (node, text)
    for link in chain[: len(chain) - 1 - high]:  # each link above the one found starts with the same text
        found[(id(link), limit)] = (link, text)
    return text


def _inner_link(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """What the text of an unparenthesised call, attribute or subscript starts with (`a` in `a.f()[0]`)."""
    if isinstance(node, cst.Call) and not node.lpar:
        return node.func
    if isinstance(node, (cst.Attribute, cst.Subscript)) and not node.lpar:
        return node.value
    return None


def chain_text(node: cst.CSTNode, print_node: Callable[[cst.CSTNode], str],
               suffixes: dict[int, tuple[cst.CSTNode, str]]) -> str:
    """`print_node(node)`, for a long chain of calls, attributes and subscripts without rendering the chain
    again for each link asked about: each link's own text (`.f()` of `a.f()`) is printed once and kept in
    `suffixes` (a cache the caller keeps for one tree); a chain is the join of its links' texts. libcst's
    printer recurses once per link, so a long chain is also printed where it would run out of stack."""
    links: list[cst.CSTNode] = []
    current: Optional[cst.CSTNode] = node
    base: cst.CSTNode = node
    while current is not None:
        base = current
        inner = _inner_link(current)
        if inner is not None:
            links.append(current)
        current = inner
    if len(links) < _LONG_CHAIN:
        return print_node(node)
    parts: list[str] = []
    for link in (base, *reversed(links)):
        known = suffixes.get(id(link))
        if known is None:
            if link is base:
                text = print_node(link)
            else:
                placeholder = cst.Name("_")  # printed as `_`, the first character of the link's text
                bare = link.with_changes(**{"func" if isinstance(link, cst.Call) else "value": placeholder})
                text = print_node(bare)[1:]
            known = suffixes[id(link)] = (link, text)
        parts.append(known[1])
    return "".join(parts)
