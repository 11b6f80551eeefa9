"""The module's call graph, read off CPython's `ast` before anything is parsed with libcst.

Which functions and methods the module defines, which of them each call may reach (by the
names `ModuleSummaries.resolve` follows: a superset of what it resolves), who calls whom,
which functions are recursive, and which methods touch which `self.<attr>`. The prefilter
asks it which parameters callers fill and which calls return something of this module's;
the summaries and the hot-path inference use it too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple, Optional

from viewlint.analysis import dispatch
from viewlint.analysis import semantics as sem
from viewlint.analysis import tree as tree_module
from viewlint.analysis.call_regions import COMPREHENSION_KINDS, Regions, classified, runs_a_step, step_loop
from viewlint.analysis.falsy import falsy_on_every_edge
from viewlint.analysis.hotness import class_and_base_names, own_heat
from viewlint.analysis.injected import passed_functions
from viewlint.analysis.graphs import in_cycles
from viewlint.analysis.guards import main_guard
from viewlint.analysis.annotation_classes import annotation_class
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import dotted, preorder
from viewlint.analysis.once import cached_once, methods_named

# Method names too common to resolve by name alone: containers', tensors' and Python's protocols (not linear algebra's
# `inverse`, `det`, `trace`: a module's own class with such a method is what `transform.inverse()` runs).
_UNRESOLVED_METHOD_NAMES = sem.STORING_METHODS | sem.MAYBE_VIEW_METHODS | sem.VIEW_METHODS \
    | (sem.FRESH_METHODS - sem.MATH_RESHAPING_METHODS) | frozenset({
    "get", "items", "keys", "values", "pop", "remove", "clear", "copy", "forward", "__call__", "__init__",
    "step", "zero_grad", "backward", "train", "eval", "run", "apply", "call", "close", "open", "read", "write",
    "format", "join", "split", "strip", "replace", "encode", "decode", "start", "stop", "reset", "load", "save",
    "build", "update", "register", "item", "size", "numel", "dim", "named_parameters", "parameters", "modules",
    "children", "state_dict", "load_state_dict", "to_dict", "from_dict", "wait", "result", "submit", "send",
})

# How far the summaries (`viewlint.analysis.summaries`) walk through this graph; the prefilter's
# `TensorContext` reads what functions return as far.
# How many callers of one function are walked to learn what it is passed.
MAX_CALLERS = 8
# Bases that define no method a class could be called for (`class Layer(ABC)`).
_EMPTY_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})
# How many calls up what the callers pass is followed (`forward` -> `self.attn(x, lens)` -> a method -> a helper).
CALLER_LEVELS = 3
# Functions longer than this (in lines) are not walked for summaries: helpers that return views or
# masks are short, and walking every long `forward` a call reaches would cost more than it tells.
MAX_SUMMARY_LINES = 40
# The walk that only records what a function passes to its callees may read longer functions (a step
# function that builds its helpers' host-side arguments).
MAX_CALLER_LINES = 150
# A helper whose every `return <value>` is a tuple display (`return q, k, v, buffer`, or `return None`) hands
# back several values that may be views of one another: only its walk tells the caller that, so what it returns
# is read up to this length (half as long again: on sglang, 3% more summary walks, 5% more lines walked).
MAX_TUPLE_SUMMARY_LINES = 60


class FunctionKey(NamedTuple):
    """A function of the module. A named tuple: hashed and compared in C (the call graph's passes
    hash keys hundreds of thousands of times on a large corpus)."""

    owner: Optional[str]  # the class that defines it, or None at module level
    name: str

    def __str__(self) -> str:
        if self.name == MAIN_BLOCK:
            return 'if __name__ == "__main__"'
        return f"{self.owner}.{self.name}" if self.owner else self.name


@dataclass
class FunctionInfo:
    key: FunctionKey
    node: ast.AST  # ast.FunctionDef or ast.AsyncFunctionDef
    positional: list[str]  # parameters filled by positional arguments, `self`/`cls` left out
    keyword_only: list[str]
    defaults: dict[str, ast.AST]
    bound: bool  # the first parameter (`self`/`cls`) is not passed by the caller
    returns_value: bool  # a `return <value>` or a `yield` in its own body
    annotated: frozenset[str] = frozenset()  # the parameters that have an annotation
    returns: Optional[ast.AST] = None  # its return annotation

    @property
    def lines(self) -> int:
        return (getattr(self.node, "end_lineno", None) or self.node.lineno) - self.node.lineno + 1  # type: ignore[attr-defined]



class CallGraph:
    """Functions, calls and `self` attributes of one module, by name."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.functions: dict[FunctionKey, FunctionInfo] = {}
        self.method_owners: dict[str, list[str]] = {}
        self.callers: dict[FunctionKey, list[FunctionKey]] = {}
        self.callees: dict[FunctionKey, set[FunctionKey]] = {}
        self.self_touches: dict[tuple[str, str], list[FunctionKey]] = {}
        self.recursive: set[FunctionKey] = set()
        self.by_node: dict[int, FunctionInfo] = {}  # id(ast function node) -> its info
        # Each function's nodes of the kinds `classified` reads (calls, branches, loops, cold blocks,
        # assignments), in preorder: collected by the one pass over its nodes, read by `hot_reasons`.
        self.skeletons: dict[FunctionKey, list[ast.AST]] = {}
        self._instances: dict[FunctionKey, dict[str, str]] = {}  # a function's names bound to instances it builds
        self._chosen: dict[FunctionKey, dict[str, list[FunctionKey]]] = {}  # and to functions of this module
        self.memo: dict[object, Any] = {}
        self._names: set[str] = set()
        self._scan()

    def call_targets(self, owner_key: FunctionKey, call: ast.Call) -> list[FunctionKey]:
        """The functions of this module a call inside `owner_key` may reach (`map(self.to_torch, arrays)` calls
        `self.to_torch` on each item)."""
        func = call.func
        if type(func) is ast.Name and func.id in ("map", "filter") and call.args \
                and type(call.args[0]) in (ast.Name, ast.Attribute):
            func = call.args[0]
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if last is None or (last not in self._names and last not in self.index.classes
                            and not (isinstance(func, ast.Name) and last in self._chosen_functions(owner_key))):
            return []
        instances = self._local_instances(owner_key) if isinstance(func, ast.Attribute) else {}
        return [k for k in self._ast_callees(owner_key.owner, func, instances, owner_key) if k in self.functions]

    def runs_once_per_key(self, owner: Optional[str], name: str) -> bool:
        """A cached function of the module that runs once per key, not once per step (see `cached_once`)."""
        return FunctionKey(owner, name) in cached_once(self)

    def hot_reason(self, owner: Optional[str], name: str, hot_globs: tuple[str, ...] = ()) -> Optional[str]:
        """Why a function not hot by its own name is hot (see `hot_reasons`), or None."""
        return hot_reasons(self, hot_globs).get(FunctionKey(owner, name))

    def step_loop_reason(self, loop: ast.AST, hot_globs: tuple[str, ...] = ()) -> Optional[str]:
        """What makes `loop` (a loop of this module) a step loop: `step_loop`'s reading, or one of its own calls
        reaching a function of this module that runs a training step (see `hot_reasons`). The one reading of it: the
        prefilter and the walker ask it too."""
        found = step_loop(loop)
        if found is not None:
            return found
        owners = self.memo.get("loop owners")
        if owners is None:
            owners = self.memo["loop owners"] = {id(n): key for key, skeleton in self.skeletons.items() for n in skeleton
                                                 if type(n) in (ast.For, ast.AsyncFor, ast.While)}
        key = owners.get(id(loop), _MODULE_LEVEL)  # (a loop at the top of a script calls the module's functions)
        hot_reasons(self, hot_globs)
        runners = self.memo[("step runners", hot_globs)]
        if not runners:
            return None
        nodes: list[ast.AST] = []
        for statement in getattr(loop, "body", []):
            nodes.extend(preorder(statement))
        inner = {id(n) for c in nodes if type(c) in COMPREHENSION_KINDS for n in ast.walk(c) if type(n) is ast.Call}
        own = [call for call, where in classified(None, nodes, direct_only=True) if where != "cold" and id(call) not in inner]
        return _runner_call(self, key, runners)(own)

    def runs_a_step(self, owner: Optional[str], name: str, hot_globs: tuple[str, ...] = ()) -> bool:
        """Whether calling the function runs a training step (its own `optimizer.step()`, or a call of one that does)."""
        hot_reasons(self, hot_globs)
        return FunctionKey(owner, name) in self.memo[("step runners", hot_globs)]

    def runs_a_step_itself(self, owner: Optional[str], name: str) -> bool:
        """Whether the function calls `loss.backward()`, `optimizer.step()` or the like itself (its own calls)."""
        return any(type(n) is ast.Call and runs_a_step(n) for n in self.skeletons.get(FunctionKey(owner, name), ()))  # type: ignore[arg-type]

    def falsy_parameters(self, owner: Optional[str], name: str, hot_globs: tuple[str, ...] = ()) -> frozenset[str]:
        """The parameters of a function hot only for being called from hot code that every such call leaves
        falsy (`self.merge()` of `merge(self, safe_merge=False)`): what `if safe_merge:` guards never runs hot."""
        hot_reasons(self, hot_globs)
        return self.memo[("falsy", hot_globs)].get(FunctionKey(owner, name), frozenset())

    # ------------------------------------------------------------------ the module's functions (from `ast`)
    def _scan(self) -> None:
        tree = self.index.tree
        if tree is None:
            return
        for statement in tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._add_function(None, statement)
            elif isinstance(statement, ast.If) and main_guard(statement.test):
                # The script's entry block calls the module's functions like any caller: what it passes them
                # is evidence of what their parameters hold (walked as a function named MAIN_BLOCK).
                self._add_function(None, _main_block_function(statement))
            elif isinstance(statement, ast.ClassDef):
                for member in statement.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self._add_function(statement.name, member)
                        self.method_owners.setdefault(member.name, [])
                        if statement.name not in self.method_owners[member.name]:
                            self.method_owners[member.name].append(statement.name)
        callees: dict[FunctionKey, set[FunctionKey]] = {}
        # Names a call must end with to reach a function of this module (its own name, or its class's).
        reachable = self._names = {key.name for key in self.functions} | set(self.index.classes) | {"cls"} \
            | {attribute for info in self.index.classes.values() for attribute in info.held_functions}
        scanned: set[int] = set()
        shapes = {}  # every function's shape first: which functions a call may reach reads the others' (`_passed_functions`)
        for key, info in self.functions.items():
            nodes = self.index.segment_nodes.get(id(info.node)) or preorder(info.node)
            # What the function's own tree says (kept across lints by the language server, see `tree.remembered`).
            shapes[key] = tree_module.remembered("call graph shape", info.node, lambda nodes=nodes: _shape(nodes))  # type: ignore[misc]
            self.skeletons[key] = shapes[key][0]
        for key, info in self.functions.items():
            found: set[FunctionKey] = set()
            skeleton, returns, calls, self_attributes = shapes[key]
            scanned.add(id(info))
            held = self._held_modules(key.owner, skeleton)
            for func, last in calls:
                if last in reachable or type(func) is ast.Name and func.id in self._chosen_functions(key):
                    found.update(self._ast_callees(key.owner, func, self._local_instances(key), key))
                if held and dotted(func) in held:
                    # `self.attn(x)`, `for block in self.blocks: block(x)`: a module this class holds runs its `forward`
                    # (one of their `forward`s, for an attribute built from a choice of classes)
                    for held_class in held[dotted(func)]:  # type: ignore[index]
                        callee = self.called_instance(held_class)
                        if callee is not None:
                            found.add(callee)
            if key.owner is not None:
                for attribute in self_attributes:
                    touches = self.self_touches.setdefault((key.owner, attribute), [])
                    if not touches or touches[-1] != key:
                        touches.append(key)
            info.returns_value = returns
            callees[key] = found
            self.callees[key] = found
            for callee in sorted(found, key=str):
                self.callers.setdefault(callee, []).append(key)
        for info in self.by_node.values():
            if id(info) not in scanned:  # a function defined again under the same name (the last one counts)
                info.returns_value = _returns_value(self.index.segment_nodes.get(id(info.node)) or preorder(info.node))
        self.recursive = in_cycles(callees)

    def _local_instances(self, key: FunctionKey) -> dict[str, str]:
        """{name: class of this module} for the names a function binds to an instance it builds (`d = Dumper()`), and
        its parameters annotated with one (`metric: CTRMetric`)."""
        found = self._instances.get(key)
        info = self.functions.get(key)
        if found is None and info is not None:
            found = {}
            classes = self.index.classes
            arguments = info.node.args  # type: ignore[attr-defined]
            for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                annotated = annotation_class(argument.annotation)
                if annotated in classes:
                    found[argument.arg] = annotated
            for node in self.index.segment_nodes.get(id(info.node)) or preorder(info.node):
                if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                        and type(node.value) is ast.Call and type(node.value.func) is ast.Name \
                        and node.value.func.id in classes:  # type: ignore[attr-defined]
                    name = node.targets[0].id  # type: ignore[attr-defined]
                    # Bound to two classes on two paths: neither is known to be the one.
                    found[name] = node.value.func.id if found.get(name, node.value.func.id) == node.value.func.id else ""  # type: ignore[attr-defined]
            found = self._instances[key] = {k: v for k, v in found.items() if v}
        return found or {}

    def chosen_functions(self, key: FunctionKey, name: str) -> list[FunctionKey]:
        """What calling the local `name` in function `key` runs, when it was bound to functions of this module."""
        return list(self._chosen_functions(key).get(name, ()))

    def _chosen_functions(self, key: FunctionKey) -> dict[str, list[FunctionKey]]:
        """{local name: the module functions it is bound to} in a function (`run = _grouped if grouped else _looped`)."""
        found = self._chosen.get(key)
        info = self.functions.get(key)
        if found is None and info is not None:
            resolve = lambda choice: self._ast_callees(key.owner, choice)  # noqa: E731
            found = _local_functions(self.index.segment_nodes.get(id(info.node)) or preorder(info.node), resolve)
            for name, keys in dispatch.parameter_functions(info.node, resolve).items():
                found.setdefault(name, []).extend(k for k in keys if k not in found.get(name, ()))
            for name, passed in (self._passed_functions().get(key.name, {}) if key.owner is None else {}).items():
                # `clip_fn(...)` where the module's callers pass `clip_grad_norm_` for `clip_fn`
                found.setdefault(name, []).extend(FunctionKey(None, f) for f in sorted(passed)
                                                  if FunctionKey(None, f) not in found.get(name, ()))
            self._chosen[key] = found
        return found or {}

    def _passed_functions(self) -> dict[str, dict[str, set[str]]]:
        """Module function -> parameter -> the module functions its callers here pass for it (`injected`), for the
        functions that call a parameter; once per module."""
        found = self.memo.get("passed functions")
        if found is None:
            calling = {k.name: info.positional for k, info in self.functions.items() if k.owner is None and any(
                type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in info.positional  # type: ignore[attr-defined]
                for n in self.skeletons.get(k, ()))}
            calls = (n for skeleton in self.skeletons.values() for n in skeleton if type(n) is ast.Call) if calling else ()
            found = self.memo["passed functions"] = passed_functions(calls, calling, self.index.function_names)  # type: ignore[arg-type]
        return found  # type: ignore[no-any-return]

    def _ast_callees(self, owner: Optional[str], func: ast.AST, instances: Optional[dict[str, str]] = None,
                     caller: Optional[FunctionKey] = None) -> list[FunctionKey]:
        """Every function of this module a call may reach, by the same names `resolve` follows (a superset)."""
        if isinstance(func, ast.Name):
            if FunctionKey(None, func.id) in self.functions:
                return [FunctionKey(None, func.id)]
            if caller is not None and func.id in self._chosen_functions(caller):
                return list(self._chosen_functions(caller)[func.id])  # `fn = _fast if fixed else _slow; fn(x)`
            built = owner if func.id == "cls" else func.id  # `cls(...)` in a classmethod builds this class
            if built in self.index.classes and FunctionKey(built, "__init__") in self.functions:
                return [FunctionKey(built, "__init__")]
            return []
        if not isinstance(func, ast.Attribute):
            return []
        method = func.attr
        receiver = dotted(func.value)
        if receiver in ("self", "cls"):
            defining = self.defining_class(owner, method)
            if defining is None:
                return self.held_functions(owner, method) or self.overrides(FunctionKey(owner, method))
            return [FunctionKey(defining, method), *self.overrides(FunctionKey(defining, method))]
        if receiver is not None and receiver in self.index.classes:
            defining = self.defining_class(receiver, method)
            return [FunctionKey(defining, method)] if defining else []
        found = []
        if receiver is not None and receiver.startswith("self.") and receiver.count(".") == 1 and owner is not None:
            info = self.index.classes.get(owner)
            held = info.attribute_classes.get(receiver[5:]) if info is not None else None
            defining = self.defining_class(held, method) if held else None
            if defining:
                found.append(FunctionKey(defining, method))
        if instances and receiver in instances:
            defining = self.defining_class(instances[receiver], method)  # `d = Dumper(); d.dump_first(batch)`
            return [FunctionKey(defining, method)] if defining else []
        if receiver is not None and "." not in receiver and receiver in self.index.module_instances:
            defining = self.defining_class(self.index.module_instances[receiver], method)
            if defining:
                found.append(FunctionKey(defining, method))
        if receiver is not None and receiver.split(".")[0] in self.index.aliases:
            return found  # `F.interpolate(...)`, `np.split(...)`: an imported module's function, not a method here
        unique = self.unique_method_owner(method, receiver)
        if unique is not None:
            found.append(FunctionKey(unique, method))
        return found

    def _add_function(self, owner: Optional[str], node: Any) -> None:
        arguments = node.args
        positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
        decorators = {(dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1] for d in node.decorator_list}
        bound = owner is not None and "staticmethod" not in decorators and bool(positional)
        defaults: dict[str, ast.AST] = {}
        for name, default in zip(reversed(positional), reversed(arguments.defaults)):
            defaults[name] = default
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if default is not None:
                defaults[arg.arg] = default
        key = FunctionKey(owner, node.name)
        self.by_node[id(node)] = self.functions[key] = FunctionInfo(key, node, positional[1:] if bound else positional,
                                           [a.arg for a in arguments.kwonlyargs], defaults, bound,
                                           False,  # `returns_value`: read by `_scan`'s pass over the nodes
                                           frozenset(a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                                                     if a.annotation is not None), node.returns)

    def called_instance(self, class_name: Optional[str]) -> Optional[FunctionKey]:
        """What calling an instance of `class_name` runs: a module's `forward` (whatever its bases are
        named: `BertPreTrainedModel`), another object's `__call__`."""
        if class_name is None:
            return None
        for method in ("forward", "__call__"):
            owner = self.defining_class(class_name, method)
            if owner is not None:
                return FunctionKey(owner, method)
        return None

    def _held_modules(self, owner: Optional[str], skeleton: tuple[ast.AST, ...]) -> dict[str, tuple[str, ...]]:
        """{callee as spelled: the classes of this module it may be} for the instances a method of `owner` calls:
        `self.<attr>` the class assigns one (or one of a choice), and the loop variable of `for block in self.blocks`
        (or `enumerate(self.blocks)`) over a `ModuleList` of one class."""
        info = self.index.classes.get(owner) if owner is not None else None
        if info is None:
            return {}
        held = {f"self.{attribute}": (name,) for attribute, name in info.attribute_classes.items() if name in self.index.classes}
        held.update((f"self.{attribute}", names) for attribute, names in info.attribute_class_choices.items())
        if info.module_list_classes:
            for node in skeleton:
                if type(node) is not ast.For and type(node) is not ast.AsyncFor:
                    continue
                target, iterated = node.target, node.iter  # type: ignore[attr-defined]
                if type(iterated) is ast.Call and dotted(iterated.func) == "enumerate" and iterated.args \
                        and type(target) is ast.Tuple and len(target.elts) == 2:
                    target, iterated = target.elts[1], iterated.args[0]
                if type(iterated) is ast.Subscript and type(iterated.slice) is ast.Slice:
                    iterated = iterated.value  # `self.layers[: config.num_hidden_layers]`: some of the same layers
                listed = dotted(iterated) or ""
                if type(target) is ast.Name and listed.startswith("self.") \
                        and info.module_list_classes.get(listed[5:]) in self.index.classes:
                    held[target.id] = (info.module_list_classes[listed[5:]],)
        return held

    def defining_class(self, class_name: Optional[str], method: str) -> Optional[str]:
        """The class (this one, or a base class defined in this module) whose body defines `method`."""
        seen: set[str] = set()
        while class_name is not None and class_name not in seen:
            seen.add(class_name)
            if FunctionKey(class_name, method) in self.functions:
                return class_name
            bases = [dotted(b) or "" for d in self.index.class_defs.get(class_name, []) for b in d.bases]
            class_name = next((b for b in bases if b in self.index.classes), None)
        return None

    def lacks_method(self, class_name: str, method: str) -> bool:
        """Whether an instance of `class_name`, a class of this module, has no `method` at all: neither it nor any base
        defines it, and every base outside this module is one that defines nothing (`object`, `ABC`, `Generic`).
        Calling it there would raise, so a call on a choice of classes never runs that one."""
        seen: set[str] = set()
        todo = [class_name]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if FunctionKey(name, method) in self.functions:
                return False
            definitions = self.index.class_defs.get(name)
            if not definitions:
                return False  # not a class of this module: what it defines is not known here
            for definition in definitions:
                for base in definition.bases:
                    base_name = dotted(base) or ""
                    if base_name in self.index.classes:
                        todo.append(base_name)
                    elif base_name.split(".")[-1] not in _EMPTY_BASES:
                        return False
        return True

    def held_functions(self, owner: Optional[str], attribute: str) -> list[FunctionKey]:
        """The module functions `self.<attribute>` may hold (`self._ortho = _orthogonalize_gradient`, `self.attn_fn =
        attn_fn` of `attn_fn=sdpa_forward`), for `self.<attribute>(...)`."""
        info = self.index.classes.get(owner or "")
        held = info.held_functions.get(attribute, ()) if info is not None else ()
        return [FunctionKey(None, name) for name in sorted(held) if FunctionKey(None, name) in self.functions]

    def overrides(self, key: FunctionKey) -> list[FunctionKey]:
        """The methods of this module's subclasses that `self.<name>(...)` runs where the class only declares it
        (`dispatch.is_abstract`) or does not define it at all (a base class's `sample` calling `self._get_samples`,
        which each subclass brings); none for a method with a body of its own."""
        info = self.functions.get(key)
        if key.owner is None or (info is not None and not dispatch.is_abstract(info.node)):
            return []
        tree = self.memo.get("subclasses")
        if tree is None:
            tree = self.memo["subclasses"] = dispatch.subclasses(self.index.class_defs)
        return [FunctionKey(name, key.name) for name in dispatch.overriding_classes(
            key.owner, key.name, tree, lambda owner, method: FunctionKey(owner, method) in self.functions)]

    def unique_method_owner(self, method: str, receiver: Optional[str] = None) -> Optional[str]:
        """The one class of this module that defines `method`, or that all classes defining it derive from (None when
        none or several unrelated ones do, or the
        name is too common to tell: `get`, `update`, `forward`), for a receiver of unknown type; where the receiver
        is a name (`rollout.generate`, `self.worker.run_batch`), only if the name shares a word with the class's
        (`module.generate(...)` in `HybridEngineRollout` is some model's, not the rollout's)."""
        if method in _UNRESOLVED_METHOD_NAMES or method.startswith("__"):
            return None
        roots = self.memo.get(("method root", method))
        if roots is None:  # several owners in one line of descent (overrides): the class they all derive from
            roots = self.memo[("method root", method)] = dispatch.common_root(self.method_owners.get(method, []), self.index.class_defs)
        if len(roots) != 1:
            return None
        if receiver is not None and receiver not in ("self", "cls") \
                and not sem.name_words(receiver.split(".")[-1]) & sem.name_words(roots[0]):
            return None
        return roots[0]


# The name under which the body of `if __name__ == "__main__":` is a function of the call graph: a caller only (no
# call reaches it, and it is never hot itself). What its step loops call runs per step, as in any function.
MAIN_BLOCK = "<main block>"
# The key a loop outside every function is read under (no function of the module has it).
_MODULE_LEVEL = FunctionKey(None, "<module>")


def _local_functions(nodes: list[ast.AST], resolve: Callable[[ast.AST], list[FunctionKey]]) -> dict[str, list[FunctionKey]]:
    """{local name: the functions of this module it is bound to} for `run = _grouped if use_grouped else _looped` and
    `prepare = self._prepare_fixed if self.fixed else self._prepare` (`resolve`: what a name or `self.<m>` reaches)."""
    found: dict[str, list[FunctionKey]] = {}
    for node in nodes:
        if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Name:  # type: ignore[attr-defined]
            continue
        value = node.value  # type: ignore[attr-defined]
        choices = (value.body, value.orelse) if type(value) is ast.IfExp else (value,)
        keys = [key for c in choices if type(c) in (ast.Name, ast.Attribute) for key in resolve(c)]
        if keys:
            found.setdefault(node.targets[0].id, []).extend(keys)  # type: ignore[attr-defined]
    return found


def _main_block_function(statement: ast.If) -> ast.FunctionDef:
    """The body of a module's `if __name__ == "__main__":` as a function without parameters."""
    arguments = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    function = ast.FunctionDef(name=MAIN_BLOCK, args=arguments, body=statement.body, decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        function.type_params = []  # type: ignore[attr-defined]
    return ast.copy_location(function, statement)


def _returns_value(nodes: list[ast.AST]) -> bool:
    """A `return <value>` or a `yield` in a function's preorder node list (a nested function's count
    too: a superset is enough, since a function that does not return anything is only a shortcut)."""
    return any((type(n) is ast.Return and n.value is not None) or type(n) is ast.Yield or type(n) is ast.YieldFrom  # type: ignore[attr-defined]
               for n in nodes)


def callgraph_of(index: ModuleIndex) -> CallGraph:
    """The call graph of the module `index` describes (built once, kept in the index's memo)."""
    found = index.memo.get("callgraph")
    if found is None:
        found = index.memo["callgraph"] = CallGraph(index)
    return found  # type: ignore[return-value]


# ---------------------------------------------------------------------- hot paths through the call graph
# The node kinds `classified` (and `switch_locals`) read from a function's preorder list.
def _shape(nodes: list[ast.AST]) -> tuple[tuple[ast.AST, ...], bool, tuple[tuple[ast.AST, str], ...], tuple[str, ...]]:
    """A function's nodes (its preorder list) as the call graph reads them: those of the kinds `classified`
    reads (its skeleton), whether it returns a value (a `return <value>` or a `yield`: see `_returns_value`),
    its calls (callee, the callee's last name) and the `self.<attr>`s it touches, in order."""
    Call, Attribute, Name, Return, Yield, YieldFrom = ast.Call, ast.Attribute, ast.Name, ast.Return, ast.Yield, ast.YieldFrom
    skeleton_kinds = _SKELETON_KINDS
    skeleton: list[ast.AST] = []
    returns = False
    calls: list[tuple[ast.AST, str]] = []
    self_attributes: list[str] = []
    for node in nodes:
        kind = type(node)
        if kind in skeleton_kinds:
            skeleton.append(node)
        elif kind is Return:
            returns = returns or node.value is not None  # type: ignore[attr-defined]
        elif kind is Yield or kind is YieldFrom:
            returns = True
        if kind is Call:
            func = node.func  # type: ignore[attr-defined]
            last = func.attr if type(func) is Attribute else func.id if type(func) is Name else None
            if last is not None:
                calls.append((func, last))
        elif kind is Attribute and type(node.value) is Name and node.value.id == "self":  # type: ignore[attr-defined]
            self_attributes.append(node.attr)  # type: ignore[attr-defined]
    return tuple(skeleton), returns, tuple(calls), tuple(self_attributes)


_SKELETON_KINDS = frozenset({
    ast.Call, ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.Raise, ast.FunctionDef,
    ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Assign, ast.AnnAssign,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,  # loops of their own (`call_regions.classified`)
})


def hot_reasons(graph: "CallGraph", hot_globs: tuple[str, ...] = ()) -> dict[FunctionKey, str]:
    """Why each function of the module is hot, for those that are not hot by their own name: it runs a
    training step (`backward()`, `optimizer.step()`), or it is called on every call of a hot function,
    or from inside a step loop. Computed once per module."""
    memo_key = ("hot", hot_globs)
    found = graph.memo.get(memo_key)
    if found is not None:
        return found
    configured = tuple(hot_globs)
    regions: dict[FunctionKey, Regions] = {}
    switches = graph.index.cold_switches
    methods = methods_named(graph.index)
    for key, info in graph.functions.items():
        scanned = Regions()
        skeleton = graph.skeletons[key]
        # Only calls of this module's functions and training steps are read below: a function with neither
        # keeps empty regions, without classifying its calls.
        if any(type(n) is ast.Call and (graph.call_targets(key, n) or runs_a_step(n)) for n in skeleton):  # type: ignore[arg-type]
            scanned.scan_nodes(info.node, skeleton, switches, methods=methods)
        regions[key] = scanned
    reasons: dict[FunctionKey, str] = {}
    hot: list[FunctionKey] = []
    # `functools.cache`/`lru_cache` functions (and a project's `*_lru_cache`): once per key, not per call.
    # Hot or cold by its own evidence (`hotness.own_heat`, which the walker asks too): heat does not travel into a
    # function that runs once (construction, loading, a cache once per key, a debugging tool's hooks).
    cold: set[FunctionKey] = set()
    for key, info in graph.functions.items():
        if key.name == MAIN_BLOCK:
            continue
        heat = own_heat(graph.index, key.owner, info.node, configured, graph)
        if heat is False:
            cold.add(key)
        elif heat:
            hot.append(key)
        elif regions[key].step is not None:
            reasons[key] = f"runs {regions[key].step}: a training step"
            hot.append(key)
    # A function that calls a step function (outside loops: once per call) runs the step too; one that calls
    # it in a loop runs many steps (`_run_denoising_loop`), and what it does around the loop is not per step.
    changed = True
    while changed:
        changed = False
        for key, scanned in regions.items():
            if key in reasons or key in hot or key.name == MAIN_BLOCK:
                continue
            for call in scanned.outside:
                for callee in graph.call_targets(key, call):
                    if callee in reasons and reasons[callee].startswith("runs"):
                        reasons[key] = reasons[callee]
                        hot.append(key)
                        changed = True
                        break
                if key in reasons:
                    break
    # A loop that calls a function of this module that runs a training step (`for batch in loader:
    # loss = self.update_weights(batch)`) is a step loop: what else it does, it does on every step.
    runners = frozenset({key for key, scanned in regions.items() if scanned.step is not None}
                        | {key for key, why in reasons.items() if why.startswith("runs")})
    graph.memo[("step runners", memo_key[1])] = runners
    if runners:
        for key, scanned in list(regions.items()):
            outside = {id(call) for call in scanned.outside}
            if any(callee in runners for call in scanned.warm if id(call) not in outside
                   for callee in graph.call_targets(key, call)):
                rescanned = Regions()
                node = graph.functions[key].node
                rescanned.scan_nodes(node, graph.index.segment_nodes.get(id(node)) or preorder(node), switches,
                                     steps=_runner_call(graph, key, runners), methods=methods)
                regions[key] = rescanned
    queue = list(hot)
    seen = set(hot)
    for callee, why in (*_hooks(graph), *_step_callbacks(graph)):
        if callee not in seen and callee not in reasons and callee not in cold:
            reasons[callee] = why
            seen.add(callee)
            queue.append(callee)
    loop_calls: list[tuple[FunctionKey, ast.Call, str]] = []
    for key, scanned in regions.items():
        for call, why in scanned.loop:
            loop_calls.append((key, call, why))
    for caller, call, why in loop_calls:
        for callee in graph.call_targets(caller, call):
            if callee not in seen and callee not in cold:
                reasons[callee] = f"called from {why} in `{caller}`"
                seen.add(callee)
                queue.append(callee)
    while queue:
        caller = queue.pop(0)
        for call in regions[caller].warm:
            for callee in graph.call_targets(caller, call):
                if callee in seen or callee in cold:
                    continue
                origin = reasons.get(caller)
                reasons[callee] = f"called from `{caller}`" if origin is None or origin.startswith("runs") \
                    else f"called from `{caller}`, {origin}"
                seen.add(callee)
                queue.append(callee)
    graph.memo[memo_key] = reasons
    hot_set = set(hot) | set(reasons)
    edges = [(caller, call) for caller, call, _ in loop_calls]
    edges += [(caller, call) for caller in hot_set for call in regions[caller].warm]
    graph.memo[("falsy", memo_key[1])] = falsy_on_every_edge(graph, edges, reasons)
    graph.memo[("hot by kind", memo_key[1])] = frozenset(hot)
    return reasons


def _runner_call(graph: "CallGraph", key: FunctionKey, runners: frozenset[FunctionKey]) -> Callable[[list[ast.Call]], Optional[str]]:
    """For the loops of function `key`: the first of a loop's own calls that reaches a function running a training
    step, as a reason ("a loop that runs `self.update_weights()`, a training step")."""
    def reason(calls: list[ast.Call]) -> Optional[str]:
        for call in calls:
            if any(callee in runners for callee in graph.call_targets(key, call)):
                return f"a loop that runs `{dotted(call.func)}()`, a training step"
        return None
    return reason


def hot_by_kind(graph: "CallGraph", hot_globs: tuple[str, ...] = ()) -> frozenset[FunctionKey]:
    """The functions hot by their own name or kind (a `forward`, an optimizer's `step`, a metric's `update`) or for
    running a training step: those `hot_reasons` gives no reason for."""
    hot_reasons(graph, hot_globs)
    return graph.memo[("hot by kind", hot_globs)]  # type: ignore[no-any-return]


def _hooks(graph: "CallGraph") -> Iterator[tuple[FunctionKey, str]]:
    """The functions of this module registered as module hooks (`m.register_forward_hook(record)`, a `partial` of one):
    each runs on every forward (or backward) of the module it is attached to."""
    for key, skeleton in graph.skeletons.items():
        for node in skeleton:
            if type(node) is not ast.Call or type(node.func) is not ast.Attribute \
                    or node.func.attr not in sem.HOOK_REGISTRATIONS or not node.args:  # type: ignore[attr-defined]
                continue
            hook = node.args[0]  # type: ignore[attr-defined]
            if type(hook) is ast.Call and (dotted(hook.func) or "").split(".")[-1] == "partial" and hook.args:
                hook = hook.args[0]  # `functools.partial(record, name=name)`
            for callee in graph.call_targets(key, ast.Call(func=hook, args=[], keywords=[])):
                yield callee, f"a hook `{key}` registers with `.{node.func.attr}()`, run on every pass"  # type: ignore[attr-defined]


def _step_callbacks(graph: "CallGraph") -> Iterator[tuple[FunctionKey, str]]:
    """A training callback's per-step methods (`TrainerCallback.on_step_end`, a Lightning `Callback`'s
    `on_train_batch_end`): the trainer calls them on every step."""
    for key in graph.functions:
        if key.owner is None or key.name not in sem.PER_STEP_CALLBACKS:
            continue  # (a debugging tool's are cold: `hot_reasons` leaves them out)
        if any(name.endswith("Callback") for name in class_and_base_names(graph.index, key.owner)):
            yield key, "a callback the trainer runs on every step"
