"""Hot or cold by a function's own evidence: its name, its class, its decorators, its parameters, a configured glob.

The one reading of it, off `ast`, for every consumer: the call graph starts its hot paths from it (and stops them at
cold functions), the prefilter keeps what it calls hot, and the walker asks it about the function it enters (through
the function's `ast` twin, `viewlint.analysis.twins`). Only what `ast` cannot hold stays with the walker: a
`# viewlint: hot` comment.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.annotation_classes import parameters_with_classes
from viewlint.analysis.bindings import tensor_annotation
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import dotted, preorder, qualify_name
from viewlint.analysis.once import cached_once, debug_only_rest, is_cached
from viewlint.analysis.host_detour import round_trip_roots
from viewlint.analysis.tree import dotted_name, remembered

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import CallGraph

# Globs of function names that run once (construction, loading, saving, printing): never a hot path.
COLD_FUNCTION_NAMES = (
    "__init__", "__post_init__", "post_init", "load_weights", "load_*", "_load_*", "from_pretrained", "from_config",
    "load_state_dict", "_load_from_state_dict", "state_dict", "save_*", "setup", "build", "reset_parameters",
    "_init*", "init_weights", "*_init_weights", "create_weights", "process_weights_after_loading", "__repr__",
    "__str__", "extra_repr", "capture", "capture_*", "_capture*", "*_capture_cuda_graph*",  # CUDA-graph capture: at startup
)

# Method names that are hot in any class (PyTorch's convention, used by modules and forward mixins alike).
# Methods that run per layer or per step: a module's `forward`, and a LightningModule's (or a trainer's) `training_step`.
# (`*_forward`: what a forward pass runs by name: a hook's `pre_forward`, a backend's `call_begin_forward`, a model's
# `_micro_batch_forward`, `eager_attention_forward`.)
HOT_FUNCTION_NAMES = ("forward", "forward_*", "_forward", "_forward_*", "*_forward", *sem.TRAINING_STEP_NAMES)
# `__call__` is hot only on a module-like class or when it takes a tensor: processors and collators are not.
HOT_CALL_NAMES = ("__call__",)
HOT_DECORATORS = ("torch.compile", "torch.jit.script", "torch.compiler.compile", "torch._dynamo.optimize")

# Serving conventions: methods that run once per scheduler step (vLLM's attention metadata builders'
# `build`, SGLang's attention backends' `init_forward_metadata`, TensorRT-LLM's `AttentionMetadata.prepare`, and the
# functions that build a step's attention metadata by name: `build_attn_metadata`, `_prepare_step_attn_metadata`),
# hot although their names are not.
DEFAULT_HOT_FUNCTIONS = ("*MetadataBuilder.build", "*MetadataBuilder.build_*", "*Backend.init_forward_metadata*",
                         "*Metadata.prepare", "*Metadata.prepare_*", "*_attn_metadata", "*_attention_metadata",
                         "*ModelRunner.execute_model", "*ModelRunner._prepare_inputs", "*ModelRunner._prepare_sample")


_COLD_NAME = sem.glob_matcher(COLD_FUNCTION_NAMES)


def is_cold_name(name: str) -> bool:
    return _COLD_NAME(name) is not None


def own_heat(index: ModuleIndex, owner: Optional[str], node: ast.AST, hot_globs: tuple[str, ...] = (),
             graph: Optional["CallGraph"] = None) -> Optional[bool]:
    """True: `node` (a function or method of class `owner`; None for a module-level or nested function) is hot by its
    own evidence; False: it runs once (construction, loading, a debug-only body, a cache that runs once per key, a
    debugging tool's method); None: neither, what calls it decides. `hot_globs`: the configured `hot-functions` (the
    defaults are added here). `graph`: the module's call graph, which says which caches run once per key. Read once per
    function and settings (the call graph, the prefilter and the walker all ask)."""
    memo = index.memo.get(("own heat", hot_globs))
    if memo is None:
        memo = index.memo[("own heat", hot_globs)] = {}
    found = memo.get(id(node))  # type: ignore[attr-defined]
    if found is None or found[0] is not node:
        found = memo[id(node)] = (node, _own_heat(index, owner, node, hot_globs, graph))  # type: ignore[index]
    return found[1]  # type: ignore[no-any-return]


def _own_heat(index: ModuleIndex, owner: Optional[str], node: ast.AST, hot_globs: tuple[str, ...],
              graph: Optional["CallGraph"]) -> Optional[bool]:
    name = getattr(node, "name", "")
    matches, matches_qualified = _matchers(hot_globs)
    qualified = f"{owner}.{name}" if owner is not None else name
    if owner is not None and matches_qualified(qualified):
        return True  # a `Class.method` glob beats a cold name (`*MetadataBuilder.build`)
    decorators = _decorators(index, node)
    if is_cold_name(name) or debug_only_rest(node, index.cold_switches) is not None or _cached_once(index, node, graph) \
            or any(_kernel_language(d) for d in decorators):
        return False
    if _checking_tool(owner):
        return False  # a debugging tool's hooks (`DebugUnderflowOverflow.forward_hook`), an output checker
    if matches(name) or (owner is not None and matches(qualified)):
        return True
    if owner is not None:
        info = index.classes.get(owner)
        is_module = info is not None and info.is_module
        if not is_module and preprocessing_class(index, owner):
            return None  # pipelines, pipeline stages, processors: once per request, not per layer or step
        if _HOT_NAME(name):
            return True if not hands_over_to_host(index, node) else None
        if info is not None and name in info.per_step_methods:
            return True  # an optimizer's or a diffusion scheduler's `step`, a metric's `update`
        if name in HOT_CALL_NAMES and (is_module or _takes_tensor(index, node)):
            return True  # a module's `__call__`, or one given a tensor (a processor's is not)
    arguments = getattr(node, "args", None)
    if isinstance(arguments, ast.arguments) and sem.takes_a_step_batch(parameters_with_classes(arguments), owner):
        return True  # `prepare_lora_batch(self, forward_batch)`: what prepares or runs one step's batch
    if any(d in HOT_DECORATORS or (d.endswith((".compile", ".jit.script")) and "torch" in d) for d in decorators):
        return True
    return None


_HOT_NAME = sem.glob_matcher(HOT_FUNCTION_NAMES)


@functools.lru_cache(maxsize=64)
def _matchers(hot_globs: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """Tests for the configured globs and the defaults: any of them, and the `Class.method` ones."""
    globs = tuple(hot_globs) + DEFAULT_HOT_FUNCTIONS
    return sem.glob_matcher(globs), sem.glob_matcher(tuple(glob for glob in globs if "." in glob))


def _decorators(index: ModuleIndex, node: ast.AST) -> list[str]:
    """Each decorator's name, qualified through the module's imports (`torch.compile`, `cutlass.cute.kernel`)."""
    names = []
    for decorator in getattr(node, "decorator_list", ()):
        name = dotted(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
        names.append(qualify_name(index, name) or name)
    return names


def _cached_once(index: ModuleIndex, node: ast.AST, graph: Optional["CallGraph"]) -> bool:
    """A cached function that runs once per key: as `once.cached_once` reads the module's functions and methods (not
    those keyed by a tensor); a nested one, always."""
    if not is_cached(node):
        return False
    info = graph.by_node.get(id(node)) if graph is not None else None
    return info is None or info.key in cached_once(graph)  # type: ignore[arg-type]


def _kernel_language(decorator: str) -> bool:
    """A decorator of a kernel written in another language that compiles Python (`@triton.jit`, `@cute.kernel`,
    `@cute.jit`, `@numba.jit`): the body runs on the device as one kernel, or is traced once; no statement in it is an
    eager PyTorch call, so none syncs the host or copies a tensor."""
    return "." in decorator and decorator.rsplit(".", 1)[-1] in ("jit", "kernel") and not decorator.startswith("torch.")


def _takes_tensor(index: ModuleIndex, node: ast.AST) -> bool:
    """A parameter annotated with a torch tensor type (`torch.Tensor`, `Optional[torch.FloatTensor]`; not a CuTe
    DSL kernel's `cute.Tensor`)."""
    arguments = getattr(node, "args", None)
    return isinstance(arguments, ast.arguments) and any(tensor_annotation(a.annotation, arrays=False, index=index)
                                                        for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))


def _checking_tool(owner: Optional[str]) -> bool:
    """A method of a debugging tool or an output checker: what it reads, it reads on purpose (when enabled)."""
    return owner is not None and any(word in owner for word in (*sem.DEBUG_CLASS_WORDS, *sem.OUTPUT_CHECKER_CLASS_WORDS))


def preprocessing_class(index: ModuleIndex, name: str) -> bool:
    """Feature extractors, processors, tokenizers, collators, pipelines and their stages (by class or base name)."""
    return sem.names_preprocessing(class_and_base_names(index, name))


def class_and_base_names(index: ModuleIndex, name: str) -> list[str]:
    """A class's name and the last parts of its bases' names (`Trainer`, `TrainerCallback`)."""
    return [name] + [(dotted(b) or "").split(".")[-1] for d in index.class_defs.get(name, []) for b in d.bases]


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
            if _root_name(child.func.value.func.value) not in _brought_back(index, node, child):  # type: ignore[attr-defined]
                return True
    return False


def _brought_back(index: ModuleIndex, function: ast.AST, call: ast.AST) -> set[str]:
    """The names the simple statement holding `call` takes to the host and straight back to the device: a detour
    (`torch.from_numpy(x.cpu().numpy().T.copy()).cuda()`), not a hand-over to another runtime."""
    row = getattr(call, "lineno", 0)
    for statement in ast.walk(function):
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)) \
                and statement.lineno <= row <= (statement.end_lineno or statement.lineno):
            text = ast.get_source_segment(index.source, statement) if index.source else None
            return round_trip_roots(text, lambda f: qualify_name(index, dotted_name(f))) if text else set()
    return set()


def _is_method_call(node: Optional[ast.AST], method: str) -> bool:
    return type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == method  # type: ignore[attr-defined]


def _root_name(node: ast.AST) -> Optional[str]:
    """`im` of `im` or `im.permute(0, 2, 3, 1).contiguous()`: a name, through the methods called on it (a field read
    off it, `batch.positions`, is another tensor)."""
    while type(node) is ast.Call and type(node.func) is ast.Attribute:  # type: ignore[attr-defined]
        node = node.func.value  # type: ignore[attr-defined]
    return node.id if type(node) is ast.Name else None  # type: ignore[attr-defined]
