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
from viewlint.analysis.guards import cold_test, joined, local_switches
from viewlint.analysis.annotation_classes import cst_parameters_with_classes
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import preorder
from viewlint.analysis.once import local_bindings, may_run_once
from viewlint.analysis.once import runs_once as once_runs_once
from viewlint.analysis.tree import children, descendants, dotted_name, remembered

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import CallGraph

HOT_MARKER = re.compile(r"#\s*viewlint:\s*hot\b")
# Globs of function names that run once (construction, loading, saving, printing): never a hot path.
COLD_FUNCTION_NAMES = (
    "__init__", "__post_init__", "post_init", "load_weights", "load_*", "_load_*", "from_pretrained", "from_config",
    "load_state_dict", "_load_from_state_dict", "state_dict", "save_*", "setup", "build", "reset_parameters",
    "_init*", "init_weights", "*_init_weights", "create_weights", "process_weights_after_loading", "__repr__",
    "__str__", "extra_repr", "capture", "capture_*", "_capture*", "*_capture_cuda_graph*",  # CUDA-graph capture: at startup
)
# Globs of function names that build an object's layout once: views they store are the design.
SETUP_FUNCTION_NAMES = (
    "__init__", "__post_init__", "post_init", "_init*", "init_*", "setup", "setup_*", "_setup*", "build", "build_*",
    "_build*", "create_*", "_create_*", "allocate*", "_allocate*", "process_weights_after_loading",
)
# Method names that are hot in any class (PyTorch's convention, used by modules and forward mixins alike).
# Methods that run per layer or per step: a module's `forward`, and a LightningModule's (or a trainer's) `training_step`.
# (`*_forward`: what a forward pass runs by name: a hook's `pre_forward`, a backend's `call_begin_forward`, a model's
# `_micro_batch_forward`, `eager_attention_forward`.)
HOT_FUNCTION_NAMES = ("forward", "forward_*", "_forward", "_forward_*", "*_forward", *sem.TRAINING_STEP_NAMES)
# `__call__` is hot only on a module-like class or when it takes a tensor: processors and collators are not.
HOT_CALL_NAMES = ("__call__",)
HOT_DECORATORS = ("torch.compile", "torch.jit.script", "torch.compiler.compile", "torch._dynamo.optimize")
# Context managers that mark deliberate host syncs (vLLM's `gpu_sync_allowed()`); `sync-allowed-contexts` adds more.
DEFAULT_SYNC_ALLOWED_CONTEXTS = ("gpu_sync_allowed", "sync_allowed", "allow_sync", "allow_host_sync")
# Serving conventions: methods that run once per scheduler step (vLLM's attention metadata builders'
# `build`, SGLang's attention backends' `init_forward_metadata`, TensorRT-LLM's `AttentionMetadata.prepare`, and the
# functions that build a step's attention metadata by name: `build_attn_metadata`, `_prepare_step_attn_metadata`),
# hot although their names are not.
DEFAULT_HOT_FUNCTIONS = ("*MetadataBuilder.build", "*MetadataBuilder.build_*", "*Backend.init_forward_metadata*",
                         "*Metadata.prepare", "*Metadata.prepare_*", "*_attn_metadata", "*_attention_metadata",
                         "*ModelRunner.execute_model", "*ModelRunner._prepare_inputs", "*ModelRunner._prepare_sample")
# Class names of backends and layers written for the CPU (`IntelAMXAttnBackend`, `VisionAMXAttention`,
# `CPUGraphRunner`): their tensors are host tensors, so reading them waits for no device.
_CPU_CLASS_NAME = re.compile(r"(?:CPU|Cpu|AMX)(?=[A-Z_]|$)(?!Offload)")
# Names and words in an `if` test that guard logging or once-per-interval work.


@functools.lru_cache(maxsize=4096)
def is_setup_name(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, glob) for glob in SETUP_FUNCTION_NAMES)


@functools.lru_cache(maxsize=4096)
def is_cold_name(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, glob) for glob in COLD_FUNCTION_NAMES)


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
    # For a function hot only for its hot callers: the parameters every one of them leaves falsy (cold switches).
    falsy: frozenset[str] = frozenset()


def words(node: cst.CSTNode) -> str:
    """The names, attribute names and literals of an expression, space-separated: what the cold-guard
    checks look for (`step`, `debug`, `"__main__"`), without printing the expression."""
    word_types = _WORD_TYPES
    return " ".join(child.value for child in descendants(node) if type(child) in word_types)  # type: ignore[attr-defined]


# The nodes `words` reads (exact types: libcst's `isinstance` runs Python code for its ABCs).
_WORD_TYPES = frozenset({cst.Name, cst.SimpleString, cst.Integer, cst.FormattedStringText})


class ContextStack:
    """The contexts around the walker's position, innermost last."""

    def __init__(self, module: cst.Module, index: ModuleIndex, hot_globs: tuple[str, ...],
                 callgraph: Optional["CallGraph"] = None) -> None:
        self.module = module
        self.index = index
        self.contexts: list[Context] = [Context(kind="module")]
        self.classes: list[str] = []
        self.configured_globs = tuple(hot_globs)
        self.hot_globs = self.configured_globs + DEFAULT_HOT_FUNCTIONS
        self._hot_name = sem.glob_matcher(self.hot_globs)
        self._hot_qualified_name = sem.glob_matcher(tuple(glob for glob in self.hot_globs if "." in glob))
        self.callgraph = callgraph
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
        # A `# viewlint: hot` marker beats a cold name; a `hot-functions` glob (even `*`) does not.
        marked = self.has_hot_marker(node)
        # A `Class.method` glob names this very method: it beats a cold name (`*MetadataBuilder.build`).
        named = self._matches_qualified_glob(node)
        cold = not marked and not named and (is_cold_name(name) or self._debug_only(node) or self._cached_once(node))
        hot = marked or named or (not cold and (self._matches_hot_glob(node) or self._is_hot_function(node)))
        reason = None
        falsy: frozenset[str] = frozenset()
        if not hot and not cold and self.callgraph is not None:
            outer = self.function
            if outer is None:  # a module-level function or a method (nested functions follow their parent)
                owner = self.class_name if self.contexts[-1].kind == "class" else None
                reason = self.callgraph.hot_reason(owner, name, self.configured_globs)
                hot = reason is not None
                if hot:
                    falsy = self.callgraph.falsy_parameters(owner, name, self.configured_globs)
        context = Context(kind="function", name=name, hot=hot, cold=cold, class_name=self.class_name, node=node,
                          cold_all=name.startswith("test_"), reason=reason, falsy=falsy)
        self.contexts.append(context)
        return context

    def _cached_once(self, node: cst.FunctionDef) -> bool:
        """A cached function that runs once per key: as the call graph reads it (`once.cached_once`: not keyed by
        a tensor), for a function of the module or a method."""
        if not is_cached_function(node):
            return False
        if self.callgraph is not None and self.function is None:
            owner = self.class_name if self.contexts[-1].kind == "class" else None
            if (owner, node.name.value) in self.callgraph.functions:  # type: ignore[comparison-overlap]
                return self.callgraph.runs_once_per_key(owner, node.name.value)
        return True

    def _debug_only(self, node: cst.FunctionDef) -> bool:
        """The body starts with `if not <debug flag>: return` (`if not diagnostics_enabled(): return`)."""
        statements = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
        if statements and isinstance(statements[0], cst.SimpleStatementLine) and isinstance(statements[0].body[0], cst.Expr) \
                and isinstance(statements[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            statements = statements[1:]  # the docstring
        if len(statements) < 2 or not isinstance(statements[0], cst.If) or statements[0].orelse is not None:
            return False
        guard = statements[0]
        body = guard.body.body if isinstance(guard.body, cst.IndentedBlock) else ()
        returns = len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Return)
        test = guard.test
        return returns and isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
            and self.is_cold_condition(test.expression)

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
        reason = step_loop(node, self)
        self.contexts.append(Context(kind="loop", node=node, hot=self.has_hot_marker(node) or reason is not None,
                                     reason=reason))

    def enter_if(self, node: cst.If) -> None:
        text = self.words(node.test)
        main_guard = "__name__" in text and "__main__" in text
        cold = main_guard or (self.is_cold_condition(node.test) and not _runs_a_training_step(node.body)) or self.runs_once(node) \
            or ends_in_error(node.body)
        self.contexts.append(Context(kind="block", node=node, cold=cold, hot=self.has_hot_marker(node), cold_all=main_guard))

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

    def pop(self) -> None:
        self.contexts.pop()

    # ------------------------------------------------------------------ hot and cold evidence
    def _matches_qualified_glob(self, node: cst.FunctionDef) -> bool:
        if not (self.class_name and self.contexts[-1].kind == "class"):
            return False
        qualified = f"{self.class_name}.{node.name.value}"
        return self._hot_qualified_name(qualified) is not None

    def _matches_hot_glob(self, node: cst.FunctionDef) -> bool:
        """Named like a configured `hot-functions` glob, as `name` or as `Class.name`."""
        name = node.name.value
        qualified = f"{self.class_name}.{name}" if self.class_name and self.contexts[-1].kind == "class" else name
        return self._hot_name(name) is not None or self._hot_name(qualified) is not None

    def _is_hot_function(self, node: cst.FunctionDef) -> bool:
        """`forward`/`forward_*` methods, a module's (or tensor-taking) `__call__`, compiled or scripted functions."""
        name = node.name.value
        if self.class_name is not None and self.contexts[-1].kind == "class":
            info = self.index.classes.get(self.class_name)
            if not (info is not None and info.is_module) and is_preprocessing_class(self.contexts[-1].node):
                return False  # pipelines, pipeline stages, processors: once per request, not per layer or step
            if sem.glob_matcher(HOT_FUNCTION_NAMES)(name):
                own = self._ast_method(node)
                return own is None or not hands_over_to_host(self.index, own)
            if info is not None and name in info.per_step_methods:
                return True  # an optimizer's or a diffusion scheduler's `step`, a metric's `update`
            if name in HOT_CALL_NAMES:
                if info is not None and info.is_module:
                    return True
                if takes_tensor(node):
                    return True
        params = node.params
        if sem.takes_a_step_batch(cst_parameters_with_classes(params), self.class_name if self.contexts[-1].kind == "class" else None):
            return True  # `prepare_lora_batch(self, forward_batch)`: what prepares or runs one step's batch
        for decorator in node.decorators:
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            qualified = self.index.qualify(expr) or dotted_name(expr) or ""
            if qualified in HOT_DECORATORS or (qualified.endswith((".compile", ".jit.script")) and "torch" in qualified):
                return True
        return False

    def _ast_method(self, node: cst.FunctionDef) -> Optional[ast.AST]:
        """The `ast` of a method of the class being walked (the same-named one at the same place among them)."""
        cls = self.contexts[-1].node
        if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
            return None
        name = node.name.value
        place = [m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == name].index(node) \
            if node in cls.body.body else -1
        for definition in self.index.class_defs.get(cls.name.value, ()):
            methods = [m for m in definition.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == name]
            if 0 <= place < len(methods):
                return methods[place]
        return None

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

    def words(self, node: cst.CSTNode) -> str:
        """`words(node)`, once per node of the file (an `if` test is read on entering the `if`, again by
        the cold-guard checks, and again in each summary walk of its function)."""
        key = ("words", id(node))
        found = self.index.memo.get(key)
        if found is None or found[0] is not node:  # type: ignore[index]
            found = self.index.memo[key] = (node, words(node))
        return found[1]  # type: ignore[index, no-any-return]

    def is_cold_guard(self, test: cst.BaseExpression) -> bool:
        """Whether `test` guards a cold block: `step % 100 == 0`, `self.debug`, `__name__ == "__main__"`.
        In `guard and t.any()`, the right operand runs only inside the guard."""
        text = self.words(test)
        return ("__name__" in text and "__main__" in text) or self.is_cold_condition(test)

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
                block = ast.parse(cst.Module(body=[node]).code).body[0]
                ran = once_runs_once(block, self._local_bindings)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                ran = False
            found = self.index.memo[key] = (node, ran)
        return found[1]  # type: ignore[index, no-any-return]

    def trains(self, node: cst.CSTNode) -> Optional[str]:
        """What in `node` (a loop) runs a training step, for messages, or None: `loss.backward()`,
        `optimizer.step()` in it, or a call of a function of this module that runs one (`self.train_one_step()`,
        as the call graph reads it)."""
        if _runs_a_training_step(node):
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




def step_loop(loop: cst.CSTNode, stack: Optional["ContextStack"] = None) -> Optional[str]:
    """What makes a loop a step loop: its body runs `backward()`, `optimizer.step()` or a model outside cold
    blocks and error handlers (the same reading as `viewlint.analysis.call_regions.step_loop`, on libcst)."""
    body = getattr(loop, "body", None)
    if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and dotted_name(loop.iter.func) == "range" \
            and loop.iter.args and (ran := sem.decode_bound(dotted_name(loop.iter.args[-1].value))) is not None:
        return ran  # `for _ in range(max_new_tokens):` runs once per token
    return _step_call(body, stack) if body is not None else None


_NOT_A_STEP_OF_THIS_LOOP = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ExceptHandler, cst.Raise, cst.For, cst.While})


_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})


def _step_call(root: cst.CSTNode, stack: Optional["ContextStack"], runners: bool = True) -> Optional[str]:
    """`runners`: a call of a function of this module that runs a training step counts too (not inside a
    comprehension, which is a loop of its own: `[self.train_step(b) for b in loader]` runs the steps)."""
    pending: list[cst.CSTNode] = [root]
    skipped = _NOT_A_STEP_OF_THIS_LOOP
    while pending:
        node = pending.pop()
        kind = type(node)  # exact types: libcst's `isinstance` runs Python code for its ABCs
        if kind in skipped:
            continue  # a nested loop that runs the step is the step loop, not this one
        if runners and kind in _COMPREHENSIONS:
            found = _step_call(node, stack, runners=False)
            if found is not None:
                return found
            continue
        if kind is cst.If and stack is not None:
            # The guard is read only when its body runs a step (most bodies do not: reading it is the cost).
            found = _step_call(node.test, stack, runners)
            if found is not None:
                return found
            found = _step_call(node.body, stack, runners)
            if found is not None and not stack.is_cold_guard(node.test):
                return found
            if node.orelse is not None:
                pending.append(node.orelse)
            continue
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute:
                method = func.attr.value
                if method in sem.STEP_METHODS:
                    ran = sem.runs_a_step(method, dotted_name(func.value) or "", dotted_name(func) or "",
                                          len(node.args))  # type: ignore[attr-defined]
                    if ran is not None:
                        return f"a loop that runs {ran}"
            callee = dotted_name(func) or ""
            if sem.names_a_model(callee):
                return f"a loop that runs `{callee}(…)`"
            if runners and stack is not None and stack.runs_a_step(callee):
                return f"a loop that runs `{callee}()`, a training step"  # (`callgraph.hot_reasons` reads it so too)
        pending.extend(reversed(children(node)))
    return None


def _runs_a_training_step(body: cst.CSTNode) -> bool:
    """`optimizer.step()`, `loss.backward()` in `body`: a block that runs one is the step, whatever interval guards it
    (`if do_sync_step:` around the optimizer's step; the reading of `call_regions.classified`)."""
    for node in descendants(body):
        if type(node) is not cst.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if sem.steps_an_optimizer(dotted_name(func) or ""):
            return True  # `self.optimizers_step()`
        if type(func) is cst.Attribute and func.attr.value in sem.STEP_METHODS \
                and sem.runs_a_step(func.attr.value, dotted_name(func.value) or "", dotted_name(func) or "", len(node.args)) is not None:  # type: ignore[attr-defined]
            return True
    return False


def _is_thunk(node: cst.Lambda) -> bool:
    params = node.params
    return not (params.params or params.posonly_params or params.kwonly_params
                or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None)


def is_cached_function(node: cst.FunctionDef) -> bool:
    """Decorated with a cache (`functools.lru_cache`, `cache`, a project's `*_lru_cache`): once per key."""
    return any("cache" in (dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "")
               .split(".")[-1] for d in node.decorators)


def hands_over_to_host(index: ModuleIndex, node: ast.AST) -> bool:
    """A `forward` (its `ast`) that hands tensors over to the host: one that returns a `.cpu()` tensor, the end of
    a pipeline (a vocoder's waveform), run once per output; or one that hands a tensor it is given to NumPy
    (`im.cpu().numpy()` of its first input, for an ONNX or TFLite session), a bridge to another runtime, run once per
    batch. A per-layer module hands device tensors on. The one reading of it, for the walker and the call graph."""
    key = ("hands over to host", id(node))
    found = index.memo.get(key)
    if found is None or found[0] is not node:  # type: ignore[index]
        # (Kept across lints while the language server runs: it reads the function's subtree alone.)
        found = index.memo[key] = (node, remembered("hands over to host", node, lambda: _hands_over(index, node)))
    return found[1]  # type: ignore[index, no-any-return]


def _hands_over(index: ModuleIndex, node: ast.AST) -> bool:
    arguments = getattr(node, "args", None)
    # Its first input (`im` of `forward(self, im)`): a model's metadata handed to NumPy (`grid_thw.cpu().numpy()` beside
    # the pixels it runs on) is not its input leaving for another runtime.
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args) if a.arg not in ("self", "cls")] \
        if isinstance(arguments, ast.arguments) else []
    given = positional[:1]
    for child in index.segment_nodes.get(id(node)) or preorder(node):
        kind = type(child)
        if kind is ast.Return and _is_method_call(child.value, "cpu"):  # type: ignore[attr-defined]
            return True
        if kind is ast.Call and _is_method_call(child, "numpy") and _is_method_call(child.func.value, "cpu") \
                and _root_name(child.func.value.func.value) in given:  # type: ignore[attr-defined]
            return True
    return False


def _is_method_call(node: Optional[ast.AST], method: str) -> bool:
    return type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == method  # type: ignore[attr-defined]


def _root_name(node: ast.AST) -> Optional[str]:
    """`im` of `im` or `im.permute(0, 2, 3, 1).contiguous()`: a name, through the methods called on it (a field read
    off it, `batch.positions`, is another tensor)."""
    while type(node) is ast.Call and type(node.func) is ast.Attribute:  # type: ignore[attr-defined]
        node = node.func.value  # type: ignore[attr-defined]
    return node.id if type(node) is ast.Name else None  # type: ignore[attr-defined]


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


def is_preprocessing_class(node: Optional[cst.CSTNode]) -> bool:
    """Feature extractors, processors, tokenizers, collators, pipelines and their stages (by class or base name)."""
    if not isinstance(node, cst.ClassDef):
        return False
    names = [node.name.value] + [(dotted_name(b.value) or "").split(".")[-1] for b in node.bases]
    return sem.names_preprocessing(names)


def takes_tensor(node: cst.FunctionDef) -> bool:
    """A parameter annotated with a tensor type (`torch.Tensor`, `Optional[torch.FloatTensor]`)."""
    params = list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params)
    for param in params:
        if param.annotation is not None:
            text = cst.Module(body=[]).code_for_node(param.annotation.annotation)
            if "Tensor" in text:
                return True
    return False
