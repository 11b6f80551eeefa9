"""Module-level facts gathered before the walk: imports, module containers, classes, summaries."""

from __future__ import annotations

import ast

from dataclasses import dataclass, field
from typing import Optional, Sequence

import libcst as cst

from viewlint.analysis import dispatch, semantics
from viewlint.analysis.annotation_classes import annotation_class
from viewlint.analysis.class_choices import constructed_classes
from viewlint.analysis.constructors import alternative_constructor
from viewlint.analysis.config_paths import guards_of
from viewlint.analysis.guards import cold_predicates, is_debug_switch, predicate_key
from viewlint.analysis.injected import note_injected_classes
from viewlint.analysis.made_tensors import made_tensor
from viewlint.analysis.host_values import HOST_TYPES, host_names as method_host_names, is_host_expression, is_number_literal
from viewlint.analysis.module_lists import item_class, listed_class, listed_order
from viewlint.analysis.retained_parameters import retained_parameters
from viewlint.analysis.nodes import assignments as _assignments, callee_name, dotted, preorder, qualify_name as _qualify_name
from viewlint.analysis import tree as tree_module
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.values import MAX_CLASSES, Device


@dataclass
class ClassInfo:
    name: str
    is_dataclass_like: bool = False
    # For a dataclass-like class: its fields in order (the annotated names of its body).
    fields: list[str] = field(default_factory=list)
    # self.<attr> names initialised with a container literal or constructor.
    container_attributes: set[str] = field(default_factory=set)
    # self.<attr> names initialised with an instance of a class defined in this module.
    attribute_classes: dict[str, str] = field(default_factory=dict)
    # self.<attr> names initialised with an instance of one of several classes defined here, chosen by a local name or
    # a table (`attention_class = A if cross else B; self.attn = attention_class(config)`): see `class_choices`.
    attribute_class_choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # self.<attr> built by `__init__` as one of several classes by a setting it keeps (`if norm_type == "ada_norm_zero":
    # self.norm1 = AdaLayerNormZero(dim) else: self.norm1 = nn.LayerNorm(dim)`): each class's constraints, for a test of
    # the same setting elsewhere (`config_paths`).
    attribute_guards: dict[str, dict[str, tuple]] = field(default_factory=dict)
    # method name -> indices of positional parameters (excluding self) that the method retains.
    retaining_methods: dict[str, set[int]] = field(default_factory=dict)
    retaining_keywords: dict[str, set[str]] = field(default_factory=dict)  # method name -> keyword names it retains
    is_module: bool = False  # derives from nn.Module (or a name ending in Module/Layer/Attention)
    # The `torch.nn` layer it extends (`class ScaledEmbedding(nn.Embedding)`: "torch.nn.Embedding"), whose `forward`
    # its own `super().forward(x)` runs.
    layer_base: Optional[str] = None
    is_optimizer: bool = False  # derives from torch.optim.Optimizer (or a name ending in Optimizer): `step` runs every step
    is_autograd_function: bool = False  # derives from torch.autograd.Function: `forward(ctx, ...)` gets what `apply` gets
    mixed_into_module: bool = False  # a base of a module class of this module (a mixin whose `self` is a module)
    # Methods that run once per step by the class's kind (`semantics.per_step_methods`): an optimizer's `step`, a
    # metric's `update`, a diffusion scheduler's `step`.
    per_step_methods: frozenset[str] = frozenset()
    # self.<attr> -> the plain names assigned to it (`self._ortho = _orthogonalize`): the functions it may hold.
    held_functions: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> names holding a parameter or buffer: `nn.Parameter(...)`, `register_buffer("attr", ...)`.
    tensor_attributes: set[str] = field(default_factory=set)
    # self.<attr> names holding a submodule: `nn.Linear(...)`, or a module class defined here.
    # self.<attr> -> the `torch.nn` module class it is assigned (`self.proj = nn.Linear(...)`; several, `|`-separated,
    # when methods assign it different ones; `torch.nn.Module` when more than a few).
    torch_module_attributes: dict[str, str] = field(default_factory=dict)
    # self.<attr> -> the class of the modules an `nn.ModuleList` it is assigned holds
    # (`self.layers = nn.ModuleList([DecoderLayer(config, i) for i in range(n)])`).
    module_list_classes: dict[str, str] = field(default_factory=dict)
    # self.<attr> -> the classes at its known positions: from the start while the appends that fill it are
    # unconditional, and from the end likewise (`self.layer[0]`, `self.layer[-1]` of a T5 block).
    module_list_order: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    submodule_attributes: set[str] = field(default_factory=set)
    # self.<attr> names whose parameter is a matrix (2-D or more): `nn.Parameter(torch.empty(n, m))`,
    # or the submodules whose `.weight` is one (`nn.Linear`, `*Linear`, `*Embedding`, `Conv*`).
    matrix_attributes: set[str] = field(default_factory=set)
    parameter_ranks: dict[str, int] = field(default_factory=dict)  # self.<param> -> its rank where written out (-1: several)
    # self.<attr> names only ever assigned host values: literals or config reads (`self.mim_weight = config.mim_weight`);
    # and those some method assigns a number (`self._current_weight = 0.0`): no parameter, whatever its name says.
    host_attributes: set[str] = field(default_factory=set)
    number_attributes: set[str] = field(default_factory=set)
    # self.<attr> names annotated with a class (`self.cache: EmbeddingCache = ...`, or in the class body).
    attribute_annotations: dict[str, str] = field(default_factory=dict)
    methods: set[str] = field(default_factory=set)  # the names of the methods its body defines
    # The source of its `forward`'s (or `__call__`'s) return annotation: what a call gives, read where it is imported.
    call_returns: Optional[str] = None
    # method name -> the source of its return annotation (`update` -> "tuple[torch.Tensor, torch.Tensor]"), and the
    # names of the classes it derives from: what a method of an instance gives, read where the class is imported.
    method_returns: dict[str, str] = field(default_factory=dict)
    base_names: list[str] = field(default_factory=list)
    # Class-level names bound to a container in the class body (`cache = defaultdict(dict)`) -> "dict", "list", "set".
    class_containers: dict[str, str] = field(default_factory=dict)
    # Class-level annotations (a dataclass's fields): name -> the annotation's source.
    field_annotations: dict[str, str] = field(default_factory=dict)
    assigned_attributes: set[str] = field(default_factory=set)  # every self.<attr> some method assigns
    # Attribute paths below `self` (`forward_metadata.prefix_lens`, `lens`) that every method sets to a tensor
    # moved to the CPU (`x.to("cpu")`, `x.cpu()`): reads of them elsewhere in the class are host reads.
    cpu_paths: set[str] = field(default_factory=set)
    # self.<attr> names every assignment of which makes a new tensor (`torch.zeros(n, device="cuda")`, `torch.empty(n)
    # .cuda()`) -> (where all of them put it, unknown for `device=device`; whether all of them are laid out row-major:
    # the walker forgets it where the module restrides any tensor in place).
    made_tensors: dict[str, tuple[Device, bool]] = field(default_factory=dict)
    # self.<attr> names bound to a function, not a call of one: `self.attn_fn = F.scaled_dot_product_attention`.
    function_attributes: dict[str, str] = field(default_factory=dict)
    # self.<attr> -> the `__init__` parameter it is set from, where no method sets it again (`self.states = states`).
    constructor_parameters: dict[str, str] = field(default_factory=dict)
    # self.<attr> -> whether the `nn.Linear` it is assigned adds a bias: True (the default, `bias=True`), False
    # (`bias=False`), None (`bias=config.attention_bias`, or assigned layers that differ).
    linear_bias: dict[str, Optional[bool]] = field(default_factory=dict)


@dataclass
class ModuleIndex:
    """What the walker needs to know about the whole module before it reads any function."""

    aliases: dict[str, str] = field(default_factory=dict)
    module_containers: set[str] = field(default_factory=set)
    module_names: set[str] = field(default_factory=set)
    module_instances: dict[str, str] = field(default_factory=dict)  # name -> class defined here
    # Module-level names annotated with a class (`cache: Optional[EmbeddingCache] = None`): name -> class name.
    module_annotations: dict[str, str] = field(default_factory=dict)
    # Names imported relatively: name -> (level, module, imported name).
    relative_imports: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    retaining_functions: dict[str, set[int]] = field(default_factory=dict)  # name -> retained parameter indices
    retaining_function_keywords: dict[str, set[str]] = field(default_factory=dict)
    cached_functions: set[str] = field(default_factory=set)
    # Module-level type aliases of typing containers: name -> what it stands for (`Activations = Dict[int, Batch]`).
    type_aliases: dict[str, ast.expr] = field(default_factory=dict, repr=False, compare=False)
    # self.<attr> containers some method sets back to None after taking them: batches being collected.
    drained_attributes: set[str] = field(default_factory=set)
    # Module-level functions that repeat the heads of their first argument (HF's `repeat_kv`:
    # `expand(...)` then `reshape(...)`, or `repeat_interleave`): their result is a full copy.
    head_repeat_functions: set[str] = field(default_factory=set)
    # Module-level switches read from the environment that turn on checking or debugging
    # (`_validate_replay = envs.SGLANG_VALIDATE_REPLAY.get()`, `DEBUG = os.environ.get("X_DEBUG")`):
    # what they guard is opt-in diagnostics, not the hot path.
    debug_switches: set[str] = field(default_factory=set)
    # Functions and methods whose whole body returns a cold test (`def is_gradient_accumulation_boundary(self):
    # return (self.micro_steps + 1) % self.gas == 0`): what a call of one guards is cold too.
    cold_predicates: set[str] = field(default_factory=set)
    # Top-level functions with a return annotation: name -> the annotation (read by modules that import them).
    function_returns: dict[str, ast.expr] = field(default_factory=dict, repr=False, compare=False)
    function_names: set[str] = field(default_factory=set)  # every top-level function
    # The preorder node list of each top-level statement and top-level class member, by id():
    # walked once here and reused by the prefilter.
    segment_nodes: dict[int, list[ast.AST]] = field(default_factory=dict, repr=False, compare=False)
    source: str = field(default="", repr=False, compare=False)  # the module's text
    tree: Optional[ast.Module] = field(default=None, repr=False, compare=False)  # and its full `ast`
    # Facts a rule derives from the tree once per module (keyed "<CODE>.<what>").
    memo: dict[str, object] = field(default_factory=dict, repr=False, compare=False)
    # Class name -> the preorder node lists of its members (every class of that name).
    class_segments: dict[str, list[list[ast.AST]]] = field(default_factory=dict, repr=False, compare=False)
    class_defs: dict[str, list[ast.ClassDef]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def cold_switches(self) -> frozenset[str]:
        """The names whose truth marks cold work, as `guards.cold_test` reads them: the debug switches and
        the cold predicates."""
        found = self.memo.get("cold_switches")
        if found is None:
            found = self.memo["cold_switches"] = frozenset(self.debug_switches) | frozenset(
                predicate_key(name) for name in self.cold_predicates)
        return found  # type: ignore[return-value]

    def layer_class(self, owner: Optional[str], attribute: str, depth: int = 4) -> Optional[str]:
        """The `torch.nn` class of `self.<attribute>` in class `owner`, or in the nearest of its bases defined in this
        module that assigns it (`class Scaled(TinyCausalLM)` uses the `self.lm_head` its base builds)."""
        info = self.classes.get(owner or "")
        if info is None:
            return None
        found = info.torch_module_attributes.get(attribute)
        if found is not None or depth <= 0 or attribute in info.assigned_attributes:
            return found
        for base in info.base_names:
            if base != owner:
                found = self.layer_class(base, attribute, depth - 1)
                if found is not None:
                    return found
        return None

    def class_member_nodes(self, name: str) -> list[list[ast.AST]]:
        return self.class_segments.get(name, [])

    @property
    def defined_functions(self) -> set[str]:
        """Names of every function defined anywhere in the module (a call to one is not a tensor
        method); found on first use."""
        found = self.memo.get("defined_functions")
        if found is None:
            found = self.memo["defined_functions"] = {
                node.name  # type: ignore[attr-defined]
                for nodes in self.segment_nodes.values() for node in nodes
                if type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef
            }
        return found  # type: ignore[return-value]

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """The fully qualified name of `node` through import aliases (`F.pad` -> `torch.nn.functional.pad`)."""
        return _qualify_name(self, dotted_name(node))

    def imports_torch(self) -> bool:
        return any(t == "torch" or t.startswith("torch.") for t in self.aliases.values())


_CONTAINER_TAILS = semantics.CONTAINER_CLASS_NAMES
# Subscripted names that make a module-level assignment a type alias.
_TYPING_CONTAINERS = frozenset({"Dict", "dict", "List", "list", "Tuple", "tuple", "Optional", "Union", "Sequence",
                                "Mapping", "MutableMapping", "DefaultDict", "OrderedDict", "Set", "set"})


def _is_container_expression(node: ast.AST, index: "ModuleIndex") -> bool:
    if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(node, ast.IfExp):  # `layers if layers is not None else []`: a container either way
        return _is_container_expression(node.body, index) or _is_container_expression(node.orelse, index)
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        qualified = _qualify_name(index, name)
        return name in semantics.CONTAINER_CONSTRUCTORS or (qualified is not None and qualified.split(".")[-1] in _CONTAINER_TAILS)
    return False


def _annotated_container_parameter(node: ast.AST, fn: ast.AST) -> bool:
    """`self.blocks = blocks` of a parameter annotated a list or a dict of items (`blocks: list[Block]`)."""
    if type(node) is not ast.Name or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    arguments = fn.args
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if argument.arg == node.id:
            annotation = argument.annotation
            if type(annotation) is ast.BinOp and type(annotation.op) is ast.BitOr:  # `list[Block] | None`
                annotation = annotation.left
            return type(annotation) is ast.Subscript and (dotted(annotation.value) or "").split(".")[-1] in _ITEM_CONTAINERS
    return False


_ITEM_CONTAINERS = frozenset({"list", "List", "dict", "Dict"})


def _container_kind(node: ast.AST) -> str:
    """"list" for a list or a deque, "set" for a set, "dict" for the rest (`{}`, `defaultdict(dict)`, `OrderedDict()`)."""
    if isinstance(node, ast.IfExp):
        return _container_kind(node.body if isinstance(node.body, (ast.Dict, ast.List, ast.Set, ast.Call, ast.DictComp,
                                                                    ast.ListComp, ast.SetComp)) else node.orelse)
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, (ast.Set, ast.SetComp)):
        return "set"
    name = (dotted(node.func) or "").split(".")[-1] if isinstance(node, ast.Call) else ""
    return "list" if name in ("list", "deque") else "set" if name == "set" else "dict"


def _decorator_names(decorators: list[ast.expr], index: "ModuleIndex") -> list[str]:
    names = []
    for decorator in decorators:
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted(expr)
        names.append(_qualify_name(index, name) or name or "")
    return names


def _scan_imports(body: list[ast.stmt], index: "ModuleIndex") -> None:
    for stmt in body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    index.aliases[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    index.aliases[head] = head
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                index.aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        elif isinstance(stmt, ast.ImportFrom) and stmt.level:
            # `from .cache import Cache`: kept apart (a relative name is not a qualified one).
            for alias in stmt.names:
                if alias.name != "*":
                    index.relative_imports[alias.asname or alias.name] = (stmt.level, stmt.module or "", alias.name)
        elif isinstance(stmt, (ast.If, ast.Try)):
            # `try: import x except ImportError` and `if TYPE_CHECKING:` blocks.
            _scan_imports(stmt.body, index)


# Methods and attributes whose result may be all of its receiver's storage (not a part of it: a function that
# keeps a slice of its argument is where the slice is made, and is reported there).
def _moved_to_cpu(value: ast.AST) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.to(device="cpu")`, `x.to("cpu", non_blocking=True)`."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    if value.func.attr == "cpu":
        return True
    if value.func.attr != "to":
        return False
    targets = value.args[:1] + [k.value for k in value.keywords if k.arg == "device"]
    return any(isinstance(t, ast.Constant) and t.value == "cpu" for t in targets)


def _self_annotations(nodes: list[ast.AST]) -> tuple[tuple[str, str], ...]:
    """`self.<attr>: Cache = ...` anywhere in a function: (attr, the class its annotation names), in order."""
    found = []
    for node in nodes:
        if type(node) is ast.AnnAssign and type(node.target) is ast.Attribute and type(node.target.value) is ast.Name \
                and node.target.value.id == "self":  # type: ignore[attr-defined]
            annotated = annotation_class(node.annotation)  # type: ignore[attr-defined]
            if annotated is not None:
                found.append((node.target.attr, annotated))  # type: ignore[attr-defined]
    return tuple(found)


def _self_paths(nodes: list[ast.AST]) -> list[tuple[str, ast.AST]]:
    """`self.<a> = value` and `self.<a>.<b> = value` anywhere in a function: (`a` or `a.b`, value)."""
    found = []
    for node in nodes:
        if type(node) is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                name = dotted(target) if type(target) is ast.Attribute else None
                if name is not None and name.startswith("self.") and name.count(".") <= 2:
                    found.append((name[5:], node.value))  # type: ignore[attr-defined]
    return found


def _self_assignments(nodes: list[ast.AST]) -> list[tuple[str, ast.AST]]:
    """`self.<attr> = value` anywhere in a function (its preorder node list)."""
    found = []
    for node in nodes:
        kind = type(node)
        if kind is ast.Assign or kind is ast.AnnAssign:
            for target, value in _assignments(node):  # type: ignore[arg-type]
                if value is None:
                    continue
                pairs = [(target, value)]
                if type(target) in (ast.Tuple, ast.List):
                    # `self.a, self.b = a, b`: element by element (from an unpacked call: what it returns).
                    values = value.elts if type(value) in (ast.Tuple, ast.List) and len(value.elts) == len(target.elts) \
                        else [ast.Call(func=ast.Name(id="<unpacked>", ctx=ast.Load()), args=[], keywords=[])] * len(target.elts)
                    pairs = list(zip(target.elts, values))
                for element, assigned in pairs:
                    if type(element) is ast.Attribute and type(element.value) is ast.Name and element.value.id == "self":
                        found.append((element.attr, assigned))
    return found


def _registered_tensors(nodes: list[ast.AST]) -> set[str]:
    """Names registered as buffers or parameters: `self.register_buffer("inv_freq", ...)`."""
    found = set()
    for node in nodes:
        if type(node) is ast.Call and node.args and type(node.func) is ast.Attribute \
                and node.func.attr in ("register_buffer", "register_parameter") and dotted(node.func) in (
                    "self.register_buffer", "self.register_parameter"):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.add(first.value)
    return found


def _built_rank(parameter: ast.Call, index: "ModuleIndex") -> Optional[int]:
    """How many dimensions `nn.Parameter(torch.empty(n, m))` / `nn.Parameter(torch.randn((n, m)))` has: the sizes its
    factory is given (None when they are not written out)."""
    if not parameter.args or not isinstance(parameter.args[0], ast.Call):
        return None
    factory = parameter.args[0]
    callee = dotted(factory.func)
    qualified = _qualify_name(index, callee) or ""
    if qualified not in semantics.FACTORY_FUNCTIONS or qualified in ("torch.tensor", "torch.arange", "torch.full"):
        return None
    sizes = [a for a in factory.args]
    if any(isinstance(a, ast.Starred) for a in sizes):
        return None
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        return None if any(isinstance(e, ast.Starred) for e in sizes[0].elts) else len(sizes[0].elts)
    return len(sizes) if sizes else None


def _repeats_heads(fn: ast.FunctionDef, nodes: list[ast.AST]) -> bool:
    """`def repeat_kv(hidden_states, n_rep): ... .expand(...) ... .reshape(...)` (two parameters at least)."""
    if len(fn.args.args) < 2:
        return False
    returns = False
    called: set[str] = set()
    for node in nodes:
        kind = type(node)
        if kind is ast.Return:
            returns = True
        elif kind is ast.Call:
            name = callee_name(node.func)  # type: ignore[attr-defined]
            if name is not None:
                called.add(name)
    expanded_copy = "reshape" in called or ("contiguous" in called and "view" in called)  # `.contiguous().view(...)` copies too
    return returns and (("expand" in called and expanded_copy) or "repeat_interleave" in called)


def _segment(statement: ast.stmt) -> list[ast.AST]:
    """`preorder(statement)`; kept across lints (as a tuple: shared, it must not change) while the language
    server runs, which keeps the `ast` trees of the statements an edit left alone (`viewlint.lsp.incremental`)."""
    if tree_module.PARSE_CACHE is None:
        return preorder(statement)
    return tree_module.remembered("preorder", statement, lambda: tuple(preorder(statement)))  # type: ignore[arg-type, return-value]


def build_index_from_ast(tree: ast.Module, source: str = "") -> "ModuleIndex":
    """Scan module-level statements and class bodies once, on Python's own (fast) syntax tree.

    Each top-level statement and class member is walked once (`segment_nodes`); everything
    below reads those node lists, and the prefilter reuses them.
    """
    index = ModuleIndex(source=source, tree=tree)
    segment_nodes = index.segment_nodes
    # (function, its class or None, its body's nodes in preorder)
    functions: list[tuple[ast.FunctionDef, Optional[ClassInfo], list[ast.AST]]] = []
    _scan_imports(tree.body, index)
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            members = index.class_segments.setdefault(stmt.name, [])
            index.class_defs.setdefault(stmt.name, []).append(stmt)
            for member in stmt.body:
                segment_nodes[id(member)] = nodes = _segment(member)
                members.append(nodes)
        else:
            segment_nodes[id(stmt)] = _segment(stmt)
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            annotated = annotation_class(stmt.annotation)
            if annotated is not None:
                index.module_annotations[stmt.target.id] = annotated
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target, value in _assignments(stmt):
                if isinstance(target, ast.Name):
                    index.module_names.add(target.id)
                    if value is not None and _is_container_expression(value, index):
                        index.module_containers.add(target.id)
                    if value is not None and is_debug_switch(target.id, value):
                        index.debug_switches.add(target.id)
                    if isinstance(value, ast.Subscript) and (dotted(value.value) or "").split(".")[-1] in _TYPING_CONTAINERS:
                        index.type_aliases[target.id] = value  # `Activations = Dict[int, Dict[int, Batch]]`
        elif isinstance(stmt, ast.ClassDef):
            info = ClassInfo(name=stmt.name)
            decorators = _decorator_names(stmt.decorator_list, index)
            info.is_dataclass_like = any(d.split(".")[-1] in {"dataclass", "define", "attrs", "frozen"} for d in decorators)
            bases = [dotted(b) or "" for b in stmt.bases]
            info.is_dataclass_like |= any(b.split(".")[-1] in {"NamedTuple", "TypedDict", "BaseModel"} for b in bases)
            if info.is_dataclass_like:
                info.fields = [m.target.id for m in stmt.body if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)]
            info.is_module = any(b.split(".")[-1] in {"Module", "ModuleList"} or b.endswith(("Module", "Layer", "Attention")) for b in bases)
            info.is_optimizer = any(b.split(".")[-1].endswith("Optimizer") for b in bases)
            # What a base defined above in this module is (`class ProdigyLite(Optimizer)`, then `class Prodigy(ProdigyLite)`).
            defined = [index.classes[b] for b in bases if b in index.classes]
            info.is_module |= any(base.is_module for base in defined)
            info.layer_base = next((q for q in (_qualify_name(index, b) for b in bases) if q is not None
                                    and semantics.nn_module_class(q) and q.split(".")[-1] not in _GENERIC_MODULES),
                                   next((base.layer_base for base in defined if base.layer_base is not None), None))
            info.is_module |= info.layer_base is not None
            info.is_optimizer |= any(base.is_optimizer for base in defined)
            info.is_autograd_function = any((_qualify_name(index, b) or "") in _AUTOGRAD for b in bases) or any(
                base.is_autograd_function for base in defined)
            for base in defined if info.is_module else ():
                base.mixed_into_module = True  # `class LM(nn.Module, SamplingMixin)`: the mixin's `self(...)` runs the model
            index.classes[info.name] = info
            functions.extend(
                (m, info, segment_nodes[id(m)]) for m in stmt.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
            info.methods = {m.name for m in stmt.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            every_method = frozenset(info.methods.union(*(base.methods for base in defined)))
            info.per_step_methods = semantics.per_step_methods(
                stmt.name, [b.split(".")[-1] for b in bases if b], info.is_optimizer, [base.per_step_methods for base in defined],
                info.is_module and "compute" in every_method, every_method)
            info.base_names = [b.split(".")[-1] for b in bases if b]
            for member in stmt.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.returns is not None:
                    info.method_returns[member.name] = ast.unparse(member.returns)
                    if member.name in ("forward", "__call__") and info.call_returns is None:
                        info.call_returns = info.method_returns[member.name]
            for member in stmt.body:
                if isinstance(member, ast.Assign) and len(member.targets) == 1 and isinstance(member.targets[0], ast.Name) \
                        and _is_container_expression(member.value, index):
                    # `cache = defaultdict(dict)` in the class body: `Allocator.cache[t]` looks a key up.
                    info.class_containers[member.targets[0].id] = _container_kind(member.value)
                if isinstance(member, ast.Assign) and len(member.targets) == 1 and isinstance(member.targets[0], ast.Name):
                    held = member.value.args[0] if isinstance(member.value, ast.Call) and len(member.value.args) == 1 \
                        and dotted(member.value.func) in ("staticmethod", "classmethod") else member.value  # `f = staticmethod(g)`
                    if isinstance(held, ast.Name):
                        info.held_functions.setdefault(member.targets[0].id, set()).add(held.id)
                if isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    annotated = annotation_class(member.annotation)
                    if annotated is not None:
                        info.attribute_annotations[member.target.id] = annotated
                    info.field_annotations[member.target.id] = ast.unparse(member.annotation)
            for member in stmt.body:
                if isinstance(member, ast.FunctionDef) and member.name == "__init__":
                    # `self.value: Optional[torch.Tensor] = None` in `__init__`: the field as its class declares it
                    # (`child.value` of `child: TreeNode`), where the class body does not.
                    for node in segment_nodes[id(member)]:
                        if type(node) is ast.AnnAssign and type(node.target) is ast.Attribute \
                                and type(node.target.value) is ast.Name and node.target.value.id == "self" \
                                and node.target.attr not in info.field_annotations:  # type: ignore[attr-defined]
                            info.field_annotations[node.target.attr] = ast.unparse(node.annotation)  # type: ignore[attr-defined]
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nodes = segment_nodes[id(stmt)]
            functions.append((stmt, None, nodes))  # type: ignore[arg-type]
            index.function_names.add(stmt.name)
            if stmt.returns is not None:
                index.function_returns[stmt.name] = stmt.returns
            if _repeats_heads(stmt, nodes):  # type: ignore[arg-type]
                index.head_repeat_functions.add(stmt.name)
            if any(d.split(".")[-1] in {"cache", "lru_cache"} for d in _decorator_names(stmt.decorator_list, index)):
                index.cached_functions.add(stmt.name)

    index.cold_predicates = cold_predicates(fn for fn, _, _ in functions)
    # Module-level instances of classes defined here (`cache = MultiModalCache(...)`).
    for stmt in tree.body:
        for target, value in _assignments(stmt):
            if isinstance(target, ast.Name) and isinstance(value, ast.Call) and dotted(value.func) in index.classes:
                index.module_instances[target.id] = dotted(value.func)  # type: ignore[assignment]

    # self.<attr> initialisations, in any method; attributes whose every assignment is a literal
    # or a config read are flags and hyperparameters, not tensors.
    assigned: dict[tuple[str, str], bool] = {}
    made: dict[tuple[str, str], Optional[tuple[Device, bool]]] = {}  # (class, attr) -> (device, row-major)
    kept: dict[tuple[str, str], Optional[str]] = {}  # (class, attr) -> the `__init__` parameter, if its one assignment
    # Containers a method sets back to None after taking them (`pending, self.group = self.group, None`): a
    # batch being collected, handed on when it closes, not a store that outlives the calls.
    drained: set[str] = set()
    # Fields a config dataclass of the module declares as plain numbers or strings (`ctc_weight: float = 0.0`): an
    # `__init__` parameter of that name with no annotation of its own takes that value (fairseq builds a criterion
    # from its config's fields by name: `@register_criterion("ctc", dataclass=CtcCriterionConfig)`).
    config_fields = frozenset(name for cls in index.classes.values() if cls.is_dataclass_like
                              for name, annotated in cls.field_annotations.items() if annotated in HOST_TYPES)
    for fn, info, nodes in functions:
        if info is None:
            continue
        # What the function's own tree says (kept across lints by the language server, see `_segment`).
        remembered = tree_module.remembered
        for attribute, annotated in remembered("self annotations", fn, lambda: _self_annotations(nodes)):
            info.attribute_annotations[attribute] = annotated
        host_names = set(remembered("host names", fn, lambda: method_host_names(fn, nodes))) if fn.name == "__init__" else set()
        if fn.name == "__init__" and config_fields:
            host_names.update(a.arg for a in [*fn.args.args, *fn.args.kwonlyargs] if a.annotation is None and a.arg in config_fields)
        for attribute, value in remembered("self assignments", fn, lambda: tuple(_self_assignments(nodes))):
            if type(value) is ast.Constant and value.value is None and fn.name != "__init__" \
                    and not semantics.looks_long_lived(attribute):  # type: ignore[attr-defined]
                drained.add(attribute)
            info.assigned_attributes.add(attribute)
            key = (info.name, attribute)
            host = is_host_expression(value, frozenset(host_names)) if host_names else is_host_expression(value)
            assigned[key] = assigned.get(key, True) and host
            if is_number_literal(value):
                info.number_attributes.add(attribute)
            from_parameter = fn.name == "__init__" and type(value) is ast.Name and value.id in {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs]}
            kept[key] = value.id if key not in kept and from_parameter else None  # type: ignore[attr-defined]
            found = made_tensor(value, lambda name: _qualify_name(index, name))
            if key not in made:
                made[key] = found
            elif made[key] is not None:
                before = made[key]
                made[key] = None if found is None or before is None else (
                    before[0] if before[0] is found[0] else Device.UNKNOWN, before[1] and found[1])
            if host and host_names:
                host_names.add(f"self.{attribute}")
            if type(value) is ast.Attribute:
                qualified = _qualify_name(index, dotted(value))
                if qualified is not None and qualified.startswith("torch."):
                    info.function_attributes[attribute] = qualified
            for choice in (value.body, value.orelse) if type(value) is ast.IfExp else (value,):
                if type(choice) is ast.Name:  # `self._ortho = _fixed if c else _ortho`, `self.attn_fn = attn_fn` (its default)
                    default = dispatch.name_defaults(fn).get(choice.id)  # type: ignore[attr-defined]
                    info.held_functions.setdefault(attribute, set()).update({choice.id, default} - {None})  # type: ignore[attr-defined]
            if _is_container_expression(value, index) or _annotated_container_parameter(value, fn):
                info.container_attributes.add(attribute)
            elif isinstance(value, ast.Call):
                callee = dotted(value.func)
                callee = alternative_constructor(index, callee) or callee  # `Vision._from_config(config)`: an instance
                if callee not in index.classes:
                    callee = _chosen_class(value, nodes, index, info, attribute) or callee  # `attention_class(config)`
                if callee in index.classes or (callee is not None and "." not in callee and (
                        item_class(value, index) == callee or _imported_class_name(callee, index))):
                    _holds_class(info, attribute, callee, index)  # a class of this module, or one imported from the project
                qualified = _qualify_name(index, callee) or callee or ""
                short = qualified.split(".")[-1]
                if qualified == "torch.nn.ModuleList":
                    held = listed_class(value, index, nodes, attribute)
                    if held is not None:
                        info.module_list_classes[attribute] = held
                        order = listed_order(fn, attribute, index) if not value.args or (
                            isinstance(value.args[0], ast.List) and not value.args[0].elts) else ((), ())
                        if order != ((), ()):
                            info.module_list_order[attribute] = order
                if semantics.nn_module_class(qualified):
                    # Assigned different layers by different methods (`nn.Linear` or `nn.Conv2d` by the config): one
                    # of them, `|`-separated (calls give what any of them gives).
                    known = set(info.torch_module_attributes[attribute].split("|")) if attribute in info.torch_module_attributes else set()
                    known.add(_last_layer(value, index) if qualified == "torch.nn.Sequential" else qualified)
                    info.torch_module_attributes[attribute] = "|".join(sorted(known)) if len(known) <= MAX_CLASSES \
                        else "torch.nn.Module"
                    if qualified == "torch.nn.Linear":
                        bias = _linear_bias(value)
                        given = _bias_argument(value)
                        if bias is None and type(given) is ast.Name and fn.name == "__init__":
                            # `bias=bias`, the constructor's own parameter: settled by how this module builds the class.
                            bias = built_with(info.name, fn, given.id, functions, tree, index)
                        info.linear_bias[attribute] = bias if info.linear_bias.get(attribute, bias) == bias else None
                if qualified in semantics.PARAMETER_CONSTRUCTORS or qualified in semantics.BUFFER_CONSTRUCTORS:
                    info.tensor_attributes.add(attribute)
                    rank = _built_rank(value, index)
                    if rank is not None and rank >= 2:
                        info.matrix_attributes.add(attribute)
                    if rank is not None and info.parameter_ranks.get(attribute, rank) == rank:
                        info.parameter_ranks[attribute] = rank  # `nn.Parameter(torch.randn(dim))`: 1-D
                    else:
                        info.parameter_ranks[attribute] = -1  # made with another rank elsewhere, or an unknown one
                elif short.endswith(("Linear", "Embedding")) or short.startswith(("Conv", "LazyConv")):
                    info.submodule_attributes.add(attribute)
                    info.matrix_attributes.add(attribute)
                elif (qualified.startswith("torch.nn.") and qualified.split(".")[-1][:1].isupper()) or (
                    callee in index.classes and index.classes[callee].is_module
                ):
                    info.submodule_attributes.add(attribute)
        info.tensor_attributes.update(remembered("registered tensors", fn, lambda: frozenset(_registered_tensors(nodes))))
    moved: dict[tuple[str, str], bool] = {}
    for fn, info, nodes in functions:
        if info is not None:
            for path, value in tree_module.remembered("self paths", fn, lambda: tuple(_self_paths(nodes))):
                moved[(info.name, path)] = moved.get((info.name, path), True) and _moved_to_cpu(value)
    for (class_name, path), on_cpu in moved.items():
        if on_cpu:
            index.classes[class_name].cpu_paths.add(path)
    for (class_name, attribute), host in assigned.items():
        if host:
            index.classes[class_name].host_attributes.add(attribute)
    for (class_name, attribute), found in made.items():
        if found is not None:
            index.classes[class_name].made_tensors[attribute] = found
    for (class_name, attribute), parameter in ((k, p) for k, p in kept.items() if p is not None):
        index.classes[class_name].constructor_parameters[attribute] = parameter
    note_injected_classes(index, functions)  # `self.client = client`, every construction passing a `Client()`
    for fn, info, nodes in functions:
        if info is not None and fn.name == "__init__" and (info.attribute_class_choices or info.torch_module_attributes):
            guarded = guards_of(fn, lambda call: _built_class(call, index))
            info.attribute_guards = {a: g for a, g in guarded.items() if len(g) > 1 and len(g) <= MAX_CLASSES}
    if drained:  # a subclass drains what its base collects: by name, across the module's classes
        index.drained_attributes.update(drained)
        for info in index.classes.values():
            info.container_attributes.difference_update(drained)
    # Which functions and methods keep a parameter alive.
    for fn, info, nodes in functions:
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        positional = params[1:] if info is not None and params and params[0] in ("self", "cls") else params
        if not positional:
            continue
        retained = retained_parameters(fn, nodes, positional, index, info)
        if not retained:
            continue
        positions = {i for i, p in enumerate(positional) if p in retained}
        if info is not None:
            info.retaining_methods[fn.name] = positions
            info.retaining_keywords[fn.name] = set(retained)
        else:
            index.retaining_functions[fn.name] = positions
            index.retaining_function_keywords[fn.name] = set(retained)
    return index


def build_index(module: cst.Module) -> "ModuleIndex":
    """The index of a libcst module (re-parsed with `ast`; the engine passes its own tree instead)."""
    source = module.code
    return build_index_from_ast(ast.parse(source), source)


# `torch.nn` classes that say nothing of what their subclass's `forward` returns.
_AUTOGRAD = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})  # as code names it
_GENERIC_MODULES = frozenset({"Module", "ModuleList", "ModuleDict", "Sequential", "ParameterList", "ParameterDict"})


def _holds_class(info: ClassInfo, attribute: str, callee: str, index: ModuleIndex) -> None:
    """Note that `self.<attribute>` is assigned an instance of `callee`. Assigned instances of different classes (by
    the branches of an `if` on the config: `self.mlp = SparseMoeBlock(config)` or `MLP(config)`), it holds one of them:
    a choice (`attribute_class_choices`) where each is a class of this module, else no class known (an empty choice,
    which later assignments do not undo)."""
    earlier = info.attribute_class_choices.get(attribute)
    if earlier is None:
        held = info.attribute_classes.get(attribute)
        if held is None or held == callee:
            info.attribute_classes[attribute] = callee
            return
        earlier = (held,)
    info.attribute_classes.pop(attribute, None)
    choices = tuple(sorted(set(earlier) | {callee})) if earlier else ()
    known = choices and len(choices) <= MAX_CLASSES and all(c in index.classes or _imported_class_name(c, index) for c in choices)
    info.attribute_class_choices[attribute] = choices if known else ()


def _built_class(call: ast.Call, index: ModuleIndex) -> Optional[str]:
    """The class `self.<attr> = <call>` builds, as a call of it is read (`A`, an imported `B`, `torch.nn.LayerNorm`)."""
    callee = dotted(call.func)
    if callee is None:
        return None
    if callee in index.classes or _imported_class_name(callee, index):
        return callee
    qualified = _qualify_name(index, callee)
    return qualified if qualified is not None and semantics.nn_module_class(qualified) else None


def _imported_class_name(name: str, index: ModuleIndex) -> bool:
    """A class imported from another module of the package by name (`from .normalization import AdaLayerNormZero`)."""
    return name in index.relative_imports and name[:1].isupper()


def _chosen_class(value: ast.Call, nodes: Sequence[ast.AST], index: ModuleIndex, info: ClassInfo, attribute: str) -> Optional[str]:
    """`self.<attribute> = attention_class(config)` with the class chosen by a local name or a table (`class_choices`):
    the one class it names (returned, to be read as if spelled out), or, of several, None after noting the classes of
    this module it holds (`attribute_class_choices`) or the `torch.nn` layers (`torch_module_attributes`, `|`-separated)."""
    choices = constructed_classes(value, nodes, index)
    if not choices or len(choices) > MAX_CLASSES:
        return None  # a registry of many classes: each call would walk every one's `forward`
    if len(choices) == 1:
        return choices[0]
    if all(c in index.classes for c in choices):
        info.attribute_class_choices[attribute] = choices
        return None
    qualified = [_qualify_name(index, c) or c for c in choices]
    if all(semantics.nn_module_class(q) for q in qualified):
        known = set(info.torch_module_attributes.get(attribute, "").split("|")) - {""}
        info.torch_module_attributes[attribute] = "|".join(sorted(known | set(qualified)))
    return None


def _last_layer(call: ast.Call, index: ModuleIndex) -> str:
    """What calling `nn.Sequential(a, b, nn.Linear(...))` gives is what its last layer gives: that layer's `torch.nn`
    class, where the call lists its layers and the last is one (or a choice of two: `nn.Linear(...) if n else
    nn.Identity()`, `|`-separated); else `torch.nn.Sequential` (nothing known)."""
    if call.args and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args):
        last = call.args[-1]
        choices = [last.body, last.orelse] if isinstance(last, ast.IfExp) else [last]
        layers = [_qualify_name(index, dotted(c.func)) or "" if isinstance(c, ast.Call) else "" for c in choices]
        if all(semantics.nn_module_class(layer) and layer != "torch.nn.Sequential" for layer in layers):
            return "|".join(sorted(set(layers)))
    return "torch.nn.Sequential"


def _bias_argument(call: ast.Call) -> Optional[ast.expr]:
    """What `nn.Linear(n, m, ...)` is given for its bias: its third positional argument or `bias=`."""
    return call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "bias"), None)


def _linear_bias(call: ast.Call) -> Optional[bool]:
    """Whether `nn.Linear(n, m, ...)` adds a bias: its third positional argument or `bias=`, True when left out."""
    given = _bias_argument(call)
    if given is None:
        return True
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, bool) else None


def built_with(class_name: str, init: ast.FunctionDef, parameter: str,
               functions: Sequence[tuple[ast.FunctionDef, Optional["ClassInfo"], Sequence[ast.AST]]],
               tree: ast.Module, index: "ModuleIndex") -> Optional[bool]:
    """The constant a flag parameter of `class_name.__init__` has in every construction of the class in this module
    (`WhisperAttention(embed_dim=..., config=config)` leaves `bias: bool = True` as it is), subclasses' included
    (built by name where they inherit the constructor, through `super().__init__(...)` where they define their own):
    None where a construction passes anything else or `**kwargs`, where two disagree, or where the module builds none
    (nothing shows how)."""
    arguments = init.args
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]][1:]
    defaults = dict(zip([a.arg for a in [*arguments.posonlyargs, *arguments.args]][-len(arguments.defaults):],
                        arguments.defaults)) if arguments.defaults else {}
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    # The classes whose construction runs this `__init__` by name, and those whose own `__init__` calls it.
    by_name, extending = {class_name}, set()
    for _ in range(4):
        for info in index.classes.values():
            if info.name not in by_name and by_name & set(info.base_names):
                (extending if "__init__" in info.methods else by_name).add(info.name)

    def constant(node: Optional[ast.expr]) -> Optional[bool]:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None

    def constructs(node: ast.Call, owner: Optional["ClassInfo"], fn: ast.FunctionDef) -> bool:
        if dotted(node.func) in by_name:
            return True
        func = node.func  # `super().__init__(...)` in the `__init__` of a class that extends it
        return owner is not None and owner.name in extending and fn.name == "__init__" and type(func) is ast.Attribute \
            and func.attr == "__init__" and type(func.value) is ast.Call and dotted(func.value.func) == "super"

    seen: set[Optional[bool]] = set()
    top = [node for statement in tree.body if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           for node in ast.walk(statement)]
    for fn, owner, nodes in [(init, None, top), *functions]:
        for node in nodes:
            if type(node) is not ast.Call or not constructs(node, owner, fn):  # type: ignore[arg-type]
                continue
            if any(k.arg is None for k in node.keywords) or any(type(a) is ast.Starred for a in node.args):
                return None  # `**kwargs` or `*args`: what it passes is not shown
            given = next((k.value for k in node.keywords if k.arg == parameter), None)
            if given is None and parameter in positional and positional.index(parameter) < len(node.args):
                given = node.args[positional.index(parameter)]
            seen.add(constant(given) if given is not None else constant(defaults.get(parameter)))
            if len(seen) > 1 or None in seen:
                return None
    return seen.pop() if seen else None
