"""Where the walker is: a stack of contexts (function, class, loop, block) that says hot or cold.

Hot paths run per step, per layer or per token: `forward`, `forward_*`, a module's
`__call__`, compiled or scripted functions, configured `hot-functions`, code marked
`# viewlint: hot`, and (through `viewlint.analysis.callgraph`) what they call in the same
module. Cold places run once or rarely: construction and loading (`__init__`,
`load_weights`...), tests, `if __name__ == "__main__":`, interval-guarded logging, error
paths. The innermost context that says hot or cold decides.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.call_regions import trains
from viewlint.analysis.guards import cold_test, joined, local_switches, main_guard
from viewlint.analysis.hotness import own_heat
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.once import local_bindings, may_run_once, methods_named
from viewlint.analysis.once import runs_once as once_runs_once
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.analysis.value_ops import never_eager
from viewlint.analysis.twins import register, registered, test_pairs, twin

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import CallGraph

HOT_MARKER = re.compile(r"#\s*viewlint:\s*hot\b")
# Globs of function names that build an object's layout once: views they store are the design.
SETUP_FUNCTION_NAMES = (
    "__init__", "__post_init__", "post_init", "_init*", "init_*", "setup", "setup_*", "_setup*", "build", "build_*",
    "_build*", "create_*", "_create_*", "allocate*", "_allocate*", "process_weights_after_loading",
)
# Context managers that mark deliberate host syncs (vLLM's `gpu_sync_allowed()`); `sync-allowed-contexts` adds more.
DEFAULT_SYNC_ALLOWED_CONTEXTS = ("gpu_sync_allowed", "sync_allowed", "allow_sync", "allow_host_sync")
# Class names of backends and layers written for the CPU (`IntelAMXAttnBackend`, `VisionAMXAttention`,
# `CPUGraphRunner`): their tensors are host tensors, so reading them waits for no device.
_CPU_CLASS_NAME = re.compile(r"(?:CPU|Cpu|AMX)(?=[A-Z_]|$)(?!Offload)")
# Names and words in an `if` test that guard logging or once-per-interval work.


@functools.lru_cache(maxsize=4096)
def is_setup_name(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, glob) for glob in SETUP_FUNCTION_NAMES)


@dataclass
class Context:
    """One level of the context stack."""

    kind: str  # module | class | function | loop | block
    name: str = ""
    hot: bool = False
    cold: bool = False
    class_name: Optional[str] = None
    node: Optional[cst.CSTNode] = None
    # Cold whatever is nested inside (tests, `if __name__ == "__main__":`), even a hot `forward`.
    cold_all: bool = False
    # Why a function is hot, for messages ("called from `Attention.forward`"); None: by its own name or marker.
    reason: Optional[str] = None
    # A `with gpu_sync_allowed():` block: host syncs in it are deliberate.
    sync_allowed: bool = False
    # In the `else` branch of the `if` this block is for (`else_branch`).
    in_else: bool = False
    # For a function hot only for its hot callers: the parameters every one of them leaves falsy (cold switches).
    falsy: frozenset[str] = frozenset()


class ContextStack:
    """The contexts around the walker's position, innermost last."""

    def __init__(self, module: cst.Module, index: ModuleIndex, hot_globs: tuple[str, ...],
                 callgraph: Optional["CallGraph"] = None) -> None:
        self.module = module
        self.index = index
        self.contexts: list[Context] = [Context(kind="module")]
        self.classes: list[str] = []
        self.configured_globs = tuple(hot_globs)
        self.callgraph = callgraph
        self._twins_known = False
        # Per function node: its local names and what they were last set to (for `runs_once`).
        self._bindings: dict[int, dict[str, list[ast.AST]]] = {}

    # ------------------------------------------------------------------ questions
    @property
    def in_function(self) -> bool:
        return any(c.kind == "function" for c in self.contexts)

    @property
    def function(self) -> Optional[Context]:
        for context in reversed(self.contexts):
            if context.kind == "function":
                return context
        return None

    @property
    def function_name(self) -> Optional[str]:
        context = self.function
        return context.name if context is not None else None

    @property
    def class_name(self) -> Optional[str]:
        return self.classes[-1] if self.classes else None

    def hot_context(self, header_of: Optional[cst.CSTNode] = None) -> Optional[Context]:
        decided: Optional[Context] = None
        for context in self.contexts:
            if header_of is not None and context.node is header_of:
                continue  # (what the header itself opens: what is nested in the header, a lambda, still counts)
            if context.cold_all:
                return None
            if context.cold:
                decided = None
            elif context.hot:
                decided = context
        return decided

    def hot_path_name_at(self, header_of: Optional[cst.CSTNode]) -> Optional[str]:
        context = self.hot_context(header_of)
        if context is None:
            return None
        if context.kind == "function":
            own = f"`{context.class_name}.{context.name}`" if context.class_name else f"`{context.name}`"
            return f"{own} ({context.reason})" if context.reason else own
        if context.reason:
            function = next((c for c in reversed(self.contexts) if c.kind == "function"), None)
            where = f" in `{function.class_name}.{function.name}`" if function is not None and function.class_name else \
                f" in `{function.name}`" if function is not None else ""
            return f"{context.reason}{where}"
        return "a `# viewlint: hot` block"

    @property
    def in_cold_block(self) -> bool:
        for context in reversed(self.contexts):
            if context.cold or context.cold_all:
                return True
            if context.hot:
                return any(c.cold_all for c in self.contexts)
        return False

    @property
    def in_loop(self) -> bool:
        for context in reversed(self.contexts):
            if context.kind == "loop":
                return True
            if context.kind == "function":
                return False
        return False

    # ------------------------------------------------------------------ entering and leaving
    def enter_function(self, node: cst.FunctionDef) -> Context:
        name = node.name.value
        owner = self.class_name if self.class_name is not None and self.contexts[-1].kind == "class" else None
        # Hot or cold by its own evidence, as the call graph reads it (`hotness.own_heat`, asked about the function's
        # `ast` twin). A `# viewlint: hot` marker beats a cold name.
        own = self.ast_of(node)
        heat = own_heat(self.index, owner, own, self.configured_globs, self.callgraph) if own is not None else None
        marked = self.has_hot_marker(node)
        cold = not marked and heat is False
        hot = marked or heat is True
        reason = None
        falsy: frozenset[str] = frozenset()
        if not hot and not cold and self.callgraph is not None:
            outer = self.function
            if outer is None:  # a module-level function or a method (nested functions follow their parent)
                reason = self.callgraph.hot_reason(owner, name, self.configured_globs)
                hot = reason is not None
                if hot:
                    falsy = self.callgraph.falsy_parameters(owner, name, self.configured_globs)
        context = Context(kind="function", name=name, hot=hot, cold=cold, class_name=self.class_name, node=node,
                          cold_all=name.startswith("test_"), reason=reason, falsy=falsy)
        self.contexts.append(context)
        return context

    def ast_of(self, node: cst.CSTNode) -> Optional[ast.AST]:
        """The `ast` twin of a function, class or loop being walked (`viewlint.analysis.twins`), or None. The module's
        twins are matched on the first question (a piece of a large file, or a function walked alone for its
        summary, has its own registered by whoever walks it)."""
        memo = self.index.memo
        if not self._twins_known:
            self._twins_known = True
            if not registered(memo, self.module) and self.index.tree is not None:
                register(memo, self.module, self.index.tree, memo.get("kept rows"))  # type: ignore[arg-type]
        return twin(memo, node)

    def enter_class(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)
        # Test classes (`TestAttention`) are cold, with every module they define inside.
        # So are debugging tools (`DebugUnderflowOverflow`): their hooks read values on purpose, when enabled.
        name = node.name.value
        self.contexts.append(Context(kind="class", name=name, node=node,
                                     cold_all=name.startswith("Test") or any(w in name for w in sem.DEBUG_CLASS_WORDS)
                                     or any(w in name for w in sem.OUTPUT_CHECKER_CLASS_WORDS),
                                     sync_allowed=_CPU_CLASS_NAME.search(name) is not None))

    def leave_class(self) -> None:
        self.classes.pop()
        self.contexts.pop()

    def enter_loop(self, node: cst.CSTNode) -> None:
        # A step loop as the call graph reads it (`CallGraph.step_loop_reason`, asked about the loop's `ast` twin).
        own = self.ast_of(node)
        graph = self.callgraph
        reason = graph.step_loop_reason(own, self.configured_globs) if own is not None and graph is not None else None
        self.contexts.append(Context(kind="loop", node=node, hot=self.has_hot_marker(node) or reason is not None,
                                     reason=reason))

    def enter_if(self, node: cst.If) -> None:
        own = self.ast_of(node)
        if isinstance(own, ast.If):
            for operand, parsed in test_pairs(node.test, own.test):
                self.index.memo[("test ast", id(operand))] = (operand, parsed)  # `_parsed`'s answer, from the twin
        test = own.test if isinstance(own, ast.If) else self._parsed(node.test)
        main = test is not None and main_guard(test)  # the script's entry block (`guards.main_guard`)
        cold = main or (self.is_cold_condition(node.test) and not self._runs_a_training_step(node, "body")) \
            or self.runs_once(node) or ends_in_error(node.body)
        self.contexts.append(Context(kind="block", node=node, cold=cold, hot=self.has_hot_marker(node), cold_all=main))

    def enter_with(self, node: cst.With, allowed: tuple[str, ...]) -> None:
        """`with gpu_sync_allowed():` (or a configured name): host syncs inside are deliberate."""
        names = {(dotted_name(item.item.func if isinstance(item.item, cst.Call) else item.item) or "").split(".")[-1]
                 for item in node.items}
        self.contexts.append(Context(kind="block", node=node, sync_allowed=bool(names & set(allowed))))

    @property
    def in_lambda(self) -> bool:
        """Inside a lambda: code whose holder decides when (and whether) it runs."""
        return any(isinstance(context.node, cst.Lambda) for context in self.contexts)

    @property
    def sync_allowed(self) -> bool:
        return any(context.sync_allowed for context in self.contexts)

    def enter_cold_block(self, node: cst.CSTNode) -> None:
        """A `raise` statement or an `except` handler: the error path, not the hot path. A lambda
        that takes no arguments is a thunk: it runs when whoever holds it decides to, most often
        never (the message of a failed check, a default made on a miss), so it is cold too; a
        lambda with parameters is a callback (`map`, `sorted(key=...)`) and keeps its place's heat."""
        cold = not isinstance(node, cst.Lambda) or _is_thunk(node)
        self.contexts.append(Context(kind="block", node=node, cold=cold))

    def else_branch(self) -> None:
        # The else branch of a cold guard is not cold, nor is the else of a block marked hot hot.
        context = self.contexts[-1]
        context.cold = context.cold_all = context.hot = False
        context.in_else = True

    @property
    def never_eager(self) -> bool:
        """In the body of an `if` only a traced, scripted or compiled run takes (`if torch.compiler.is_compiling():`)."""
        return any(isinstance(c.node, cst.If) and not c.in_else and never_eager(c.node.test) for c in self.contexts)

    def pop(self) -> None:
        self.contexts.pop()

    # ------------------------------------------------------------------ hot and cold evidence
    def has_hot_marker(self, node: cst.CSTNode) -> bool:
        """`# viewlint: hot` on the lines above the statement (or its decorators), or at the end of its header line.

        Above the module's first statement, libcst keeps those lines in the module's header.
        """
        lines = list(getattr(node, "leading_lines", ())) + list(getattr(node, "lines_after_decorators", ()))
        if self.module.body and node is self.module.body[0]:
            lines.extend(self.module.header)
        for line in lines:
            if line.comment is not None and HOT_MARKER.search(line.comment.value):
                return True
        body = getattr(node, "body", None)
        header = getattr(body, "header", None)
        if header is not None and header.comment is not None and HOT_MARKER.search(header.comment.value):
            return True
        return False

    def is_cold_guard(self, test: cst.BaseExpression) -> bool:
        """Whether `test` guards a cold block: `step % 100 == 0`, `self.debug`, `__name__ == "__main__"`.
        In `guard and t.any()`, the right operand runs only inside the guard."""
        parsed = self._parsed(test)
        return (parsed is not None and main_guard(parsed)) or self.is_cold_condition(test)

    def is_cold_condition(self, test: cst.BaseExpression) -> bool:
        """Logging or bookkeeping guarded by an interval (`if step % 100 == 0:`), a debug flag, the epoch, or a
        call of the module's own predicate for one: `guards.cold_test`'s reading, once per test."""
        key = ("cold", id(test))
        found = self.index.memo.get(key)
        if found is None or found[0] is not test:  # type: ignore[index]
            found = self.index.memo[key] = (test, self._cold(test))
        return found[1]  # type: ignore[index, no-any-return]

    def _cold(self, test: cst.BaseExpression) -> bool:
        if type(test) is cst.BooleanOperation:
            # Operand by operand (each read once, memoized): a chain of `and`s is not printed again per prefix.
            return joined(type(test.operator) is cst.And,
                          [self.is_cold_condition(test.left), self.is_cold_condition(test.right)])
        parsed = self._parsed(test)
        if parsed is None:
            return False
        switches = self.index.cold_switches
        local = self._local_switches()
        function = self.function
        if function is not None and function.falsy:
            local = local | function.falsy  # `if safe_merge:` where every hot caller leaves it False
        return cold_test(parsed, switches | local if local else switches)

    def _parsed(self, expression: cst.BaseExpression) -> Optional[ast.AST]:
        """The `ast` of an expression (a test), parsed from its text once per node."""
        key = ("test ast", id(expression))
        found = self.index.memo.get(key)
        if found is None or found[0] is not expression:  # type: ignore[index]
            try:
                parsed: Optional[ast.AST] = ast.parse("(" + self.module.code_for_node(expression) + ")", mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                parsed = None
            found = self.index.memo[key] = (expression, parsed)  # (kept with the node: an id alone may be reused)
        return found[1]  # type: ignore[index, no-any-return]

    def runs_once(self, node: cst.If) -> bool:
        """`once.runs_once` of a block (the first call only, once per key, an optimizer's lazy state): one reading for
        the walker and the call graph. The block is parsed only when its test is one that reading accepts."""
        test = self._parsed(node.test)
        if test is None or not may_run_once(test, self._local_bindings):
            return False
        if isinstance(test, ast.Attribute):
            # `if self.first:` runs once only where its block clears the flag: looked for before the block is parsed
            # (`if self.training:` blocks are many, and large).
            flag = dotted_name(node.test)
            if not any(type(n) is cst.AssignTarget and dotted_name(n.target) == flag  # type: ignore[attr-defined]
                       for n in descendants(node.body)):
                return False
        key = ("runs once", id(node))
        found = self.index.memo.get(key)
        if found is None or found[0] is not node:  # type: ignore[index]
            try:
                block = self.ast_of(node) or ast.parse(cst.Module(body=[node]).code).body[0]
                ran = once_runs_once(block, self._local_bindings, methods_named(self.index))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                ran = False
            found = self.index.memo[key] = (node, ran)
        return found[1]  # type: ignore[index, no-any-return]

    def trains(self, node: cst.CSTNode) -> Optional[str]:
        """What in `node` (a loop) runs a training step, for messages, or None: `loss.backward()`,
        `optimizer.step()` in it, or a call of a function of this module that runs one (`self.train_one_step()`,
        as the call graph reads it)."""
        if self._runs_a_training_step(node):
            return "a training step"
        graph = self.callgraph
        if graph is None:
            return None
        owner = self.class_name
        for child in descendants(node):
            if type(child) is not cst.Call:
                continue
            callee = dotted_name(child.func) or ""  # type: ignore[attr-defined]
            if callee.startswith("self.") and callee.count(".") == 1 and owner is not None:
                key = (owner, callee[5:])
            elif callee and "." not in callee:
                key = (None, callee)
            else:
                continue
            reason = graph.hot_reason(*key, self.configured_globs)  # type: ignore[arg-type]
            # (A function hot by its own name has no reason: whether it runs a step is read off its calls.)
            if (reason is not None and reason.startswith("runs")) or graph.runs_a_step_itself(*key):  # type: ignore[arg-type]
                return f"a training step (`{callee}()`)"
        return None

    def _runs_a_training_step(self, node: cst.CSTNode, part: Optional[str] = None) -> bool:
        """`optimizer.step()`, `loss.backward()` in `node` (a loop, or an `if`'s `body`), read off its `ast` twin as
        the call graph reads a block (`call_regions.trains`)."""
        own = self.ast_of(node)
        if own is None:
            return False
        roots = getattr(own, part) if part is not None else [own]
        return any(type(n) is ast.Call and trains(n) for root in roots for n in ast.walk(root))  # type: ignore[arg-type]

    def runs_a_step(self, callee: str) -> bool:
        """`self.update_weights` or `train_one_batch` (a call's callee) is a function of this module that runs a
        training step, as the call graph reads it."""
        graph = self.callgraph
        if graph is None or not callee:
            return False
        if callee.startswith("self.") and callee.count(".") == 1 and self.class_name is not None:
            owner = graph.defining_class(self.class_name, callee[5:])
            return owner is not None and graph.runs_a_step(owner, callee[5:], self.configured_globs)
        return "." not in callee and graph.runs_a_step(None, callee, self.configured_globs)

    def _local_bindings(self) -> dict[str, list[ast.AST]]:
        """The current function's local names and what they were last set to (`once.local_bindings`, read off the
        call graph's skeleton of the outermost function it knows)."""
        graph = self.callgraph
        outer = next((c for c in self.contexts if c.kind == "function"), None)
        if graph is None or outer is None:
            return {}
        info = graph.functions.get((outer.class_name, outer.name)) or graph.functions.get((None, outer.name))
        if info is None:
            return {}
        found = self._bindings.get(id(info.node))
        if found is None:
            found = self._bindings[id(info.node)] = local_bindings(graph.skeletons.get(info.key, ()))
        return found

    def _local_switches(self) -> frozenset[str]:
        """The current function's local names set to a debug switch or a cold test (`guards.switch_locals`, read
        over the outermost function the call graph knows)."""
        graph = self.callgraph
        outer = next((c for c in self.contexts if c.kind == "function"), None)
        if graph is None or outer is None:
            return frozenset()
        # (`FunctionKey` is a named tuple: a plain `(owner, name)` finds the same entry.)
        info = graph.functions.get((outer.class_name, outer.name)) or graph.functions.get((None, outer.name))
        # (Read off the call graph's skeleton of the function, which holds all its assignments.)
        return local_switches(self.index, info.node, graph.skeletons.get(info.key)) if info is not None else frozenset()




def _is_thunk(node: cst.Lambda) -> bool:
    params = node.params
    return not (params.params or params.posonly_params or params.kwonly_params
                or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None)


def warns_and_leaves(node: cst.If) -> bool:
    """`if mismatch: logger.warning(...); return None`: an error path that reports and gives up, like `raise`."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    smalls = [small for line in body if isinstance(line, cst.SimpleStatementLine) for small in line.body]
    if len(smalls) != len(body) or len(smalls) < 2 or not isinstance(smalls[-1], cst.Return):
        return False
    returned = smalls[-1].value
    if returned is not None and not (isinstance(returned, cst.Name) and returned.value in ("None", "False")):
        return False
    for small in smalls[:-1]:
        call = small.value if isinstance(small, cst.Expr) else None
        name = (dotted_name(call.func) or "") if isinstance(call, cst.Call) else ""
        head, _, method = name.rpartition(".")
        if not (method in ("warning", "warn", "error", "info", "debug", "warning_once", "exception")
                and ("log" in head.lower() or head == "warnings")):
            return False
    return True


def ends_in_error(body: cst.BaseSuite) -> bool:
    """A block whose last statement raises (`raise`, `assert False`, `torch._assert(False, ...)`): what it
    computes first (the bad index, for the message) runs only on the error path."""
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
    if isinstance(small, cst.Raise):
        return True
    if isinstance(small, cst.Assert) and isinstance(small.test, cst.Name) and small.test.value == "False":
        return True
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        name = (dotted_name(call.func) or "").split(".")[-1]
        first = call.args[0].value if call.args else None
        return name == "_assert" and isinstance(first, cst.Name) and first.value == "False"
    return False
