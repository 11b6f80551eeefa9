"""Module-level facts gathered before the walk: imports, module containers, classes, summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from viewlint.analysis import semantics


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _import_alias_target(alias: cst.ImportAlias) -> tuple[str, str]:
    full = dotted_name(alias.name) or ""  # type: ignore[arg-type]
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value, full
    return full.split(".")[0], full.split(".")[0]


@dataclass
class ClassInfo:
    name: str
    is_dataclass_like: bool = False
    # self.<attr> names initialised with a container literal or constructor.
    container_attributes: set[str] = field(default_factory=set)
    # self.<attr> names initialised with an instance of a class defined in this module.
    attribute_classes: dict[str, str] = field(default_factory=dict)
    # method name -> indices of positional parameters (excluding self) that the method retains.
    retaining_methods: dict[str, set[int]] = field(default_factory=dict)
    # method name -> keyword names it retains.
    retaining_keywords: dict[str, set[str]] = field(default_factory=dict)
    is_module: bool = False  # derives from nn.Module (or a name ending in Module/Layer/Attention)
    # self.<attr> names holding a parameter or buffer: `nn.Parameter(...)`, `register_buffer("attr", ...)`.
    tensor_attributes: set[str] = field(default_factory=set)
    # self.<attr> names holding a submodule: `nn.Linear(...)`, or a module class defined here.
    submodule_attributes: set[str] = field(default_factory=set)


@dataclass
class ModuleIndex:
    """What the walker needs to know about the whole module before it reads any function."""

    aliases: dict[str, str] = field(default_factory=dict)
    module_containers: set[str] = field(default_factory=set)
    module_names: set[str] = field(default_factory=set)
    module_instances: dict[str, str] = field(default_factory=dict)  # name -> class defined here
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    # function name -> retained parameter indices / keyword names
    retaining_functions: dict[str, set[int]] = field(default_factory=dict)
    retaining_function_keywords: dict[str, set[str]] = field(default_factory=dict)
    cached_functions: set[str] = field(default_factory=set)
    # Module-level functions that repeat the heads of their first argument (HF's `repeat_kv`:
    # `expand(...)` then `reshape(...)`, or `repeat_interleave`): their result is a full copy.
    head_repeat_functions: set[str] = field(default_factory=set)

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """The fully qualified name of `node` through import aliases (`F.pad` -> `torch.nn.functional.pad`)."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def imports_torch(self) -> bool:
        return any(t == "torch" or t.startswith("torch.") for t in self.aliases.values())


def _is_container_expression(node: cst.BaseExpression, index: ModuleIndex) -> bool:
    if isinstance(node, (cst.Dict, cst.List, cst.Set, cst.DictComp, cst.ListComp, cst.SetComp)):
        return True
    if isinstance(node, cst.Call):
        name = dotted_name(node.func)
        qualified = index.qualify(node.func)
        return (name in semantics.CONTAINER_CONSTRUCTORS) or (
            qualified is not None and qualified.split(".")[-1] in {"OrderedDict", "defaultdict", "deque", "WeakValueDictionary"}
        )
    if isinstance(node, cst.Subscript):  # OrderedDict[int, X]() is a Call; a bare annotation is not
        return False
    return False


def _assign_targets(stmt: cst.BaseSmallStatement) -> list[tuple[cst.BaseExpression, Optional[cst.BaseExpression]]]:
    if isinstance(stmt, cst.Assign):
        return [(t.target, stmt.value) for t in stmt.targets]
    if isinstance(stmt, cst.AnnAssign):
        return [(stmt.target, stmt.value)]
    return []


def _decorator_names(decorators: tuple[cst.Decorator, ...] | list[cst.Decorator], index: ModuleIndex) -> list[str]:
    names = []
    for decorator in decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        names.append(index.qualify(expr) or dotted_name(expr) or "")
    return names


class _RetentionScanner(cst.CSTVisitor):
    """Finds which parameters a function stores into a long-lived place (self containers, module containers)."""

    def __init__(self, params: list[str], index: ModuleIndex, class_info: Optional[ClassInfo]) -> None:
        self.params = params
        self.index = index
        self.class_info = class_info
        self.retained: set[str] = set()
        # local name -> parameter it wraps (`entry = Entry(embedding=param)`)
        self.derived: dict[str, str] = {}

    def _param_in(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name):
            if node.value in self.params:
                return node.value
            return self.derived.get(node.value)
        if isinstance(node, cst.Call):
            for arg in node.args:
                found = self._param_in(arg.value)
                if found:
                    return found
        if isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                found = self._param_in(element.value)
                if found:
                    return found
        return None

    def _long_lived_container(self, node: cst.BaseExpression) -> bool:
        name = dotted_name(node)
        if name is None:
            return False
        if name.startswith("self.") and self.class_info is not None:
            attribute = name[5:]
            return attribute in self.class_info.container_attributes
        return name in self.index.module_containers

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Subscript) and self._long_lived_container(t.value):
                found = self._param_in(node.value)
                if found:
                    self.retained.add(found)
            elif isinstance(t, cst.Name):
                found = self._param_in(node.value)
                if found:
                    self.derived[t.value] = found

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in semantics.STORING_METHODS:
            if self._long_lived_container(func.value):
                for arg in node.args:
                    found = self._param_in(arg.value)
                    if found:
                        self.retained.add(found)


def _parameters(fn: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)]


def build_index(module: cst.Module) -> ModuleIndex:
    """Scan module-level statements and class bodies once."""
    index = ModuleIndex()
    functions: list[tuple[cst.FunctionDef, Optional[ClassInfo]]] = []

    def scan_imports(body: tuple[cst.CSTNode, ...] | list[cst.CSTNode]) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import):
                        for alias in small.names:
                            local, target = _import_alias_target(alias)
                            index.aliases[local] = target if alias.asname else local
                            if alias.asname is None:
                                index.aliases[local] = local
                    elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                        base = dotted_name(small.module) or ""
                        if isinstance(small.names, cst.ImportStar):
                            continue
                        for alias in small.names:
                            name = dotted_name(alias.name) or ""  # type: ignore[arg-type]
                            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
                            index.aliases[local] = f"{base}.{name}"
            elif isinstance(stmt, (cst.If, cst.Try)):
                # `try: import x except ImportError` and `if TYPE_CHECKING:` blocks.
                scan_imports(stmt.body.body)  # type: ignore[union-attr]

    scan_imports(module.body)

    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                for target, value in _assign_targets(small):
                    if isinstance(target, cst.Name):
                        index.module_names.add(target.value)
                        if value is not None and _is_container_expression(value, index):
                            index.module_containers.add(target.value)
        elif isinstance(stmt, cst.ClassDef):
            info = ClassInfo(name=stmt.name.value)
            decorators = _decorator_names(stmt.decorators, index)
            info.is_dataclass_like = any(d.split(".")[-1] in {"dataclass", "define", "attrs", "frozen"} for d in decorators)
            bases = [dotted_name(b.value) or "" for b in stmt.bases]
            info.is_dataclass_like |= any(b.split(".")[-1] in {"NamedTuple", "TypedDict", "BaseModel"} for b in bases)
            info.is_module = any(b.split(".")[-1] in {"Module", "ModuleList"} or b.endswith(("Module", "Layer", "Attention")) for b in bases)
            index.classes[info.name] = info
            for member in stmt.body.body:  # type: ignore[union-attr]
                if isinstance(member, cst.FunctionDef):
                    functions.append((member, info))
        elif isinstance(stmt, cst.FunctionDef):
            functions.append((stmt, None))
            if _repeats_heads(module, stmt):
                index.head_repeat_functions.add(stmt.name.value)
            decorators = _decorator_names(stmt.decorators, index)
            if any(d.split(".")[-1] in {"cache", "lru_cache"} for d in decorators):
                index.cached_functions.add(stmt.name.value)

    # Module-level instances of classes defined here (`cache = MultiModalCache(...)`).
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                for target, value in _assign_targets(small):
                    if isinstance(target, cst.Name) and isinstance(value, cst.Call):
                        callee = dotted_name(value.func)
                        if callee in index.classes:
                            index.module_instances[target.value] = callee

    # self.<attr> initialisations, in any method.
    for fn, info in functions:
        if info is None:
            continue
        for attribute, value in _self_assignments(fn):
            if _is_container_expression(value, index):
                info.container_attributes.add(attribute)
            elif isinstance(value, cst.Call):
                callee = dotted_name(value.func)
                if callee in index.classes:
                    info.attribute_classes[attribute] = callee
                qualified = index.qualify(value.func) or callee or ""
                if qualified in semantics.PARAMETER_CONSTRUCTORS:
                    info.tensor_attributes.add(attribute)
                elif (qualified.startswith("torch.nn.") and qualified.split(".")[-1][:1].isupper()) or (
                    callee in index.classes and index.classes[callee].is_module
                ):
                    info.submodule_attributes.add(attribute)
        info.tensor_attributes.update(_registered_tensors(fn))

    # Which functions and methods keep a parameter alive.
    for fn, info in functions:
        params = _parameters(fn)
        positional = params[1:] if info is not None and params and params[0] in ("self", "cls") else params
        scanner = _RetentionScanner(positional, index, info)
        fn.body.visit(scanner)
        if not scanner.retained:
            continue
        positions = {i for i, p in enumerate(positional) if p in scanner.retained}
        if info is not None:
            info.retaining_methods[fn.name.value] = positions
            info.retaining_keywords[fn.name.value] = set(scanner.retained)
        else:
            index.retaining_functions[fn.name.value] = positions
            index.retaining_function_keywords[fn.name.value] = set(scanner.retained)
    return index


def _repeats_heads(module: cst.Module, fn: cst.FunctionDef) -> bool:
    """`def repeat_kv(hidden_states, n_rep): ... .expand(...) ... .reshape(...)` (two parameters at least)."""
    if len(fn.params.params) < 2:
        return False
    text = module.code_for_node(fn.body)
    return "return" in text and ((".expand(" in text and ".reshape(" in text) or "repeat_interleave(" in text)


class _SelfAssignments(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = dotted_name(target.target) if isinstance(target.target, cst.Attribute) else None
            if name and name.startswith("self.") and name.count(".") == 1:
                self.found.append((name[5:], node.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = dotted_name(node.target) if isinstance(node.target, cst.Attribute) else None
        if name and name.startswith("self.") and name.count(".") == 1 and node.value is not None:
            self.found.append((name[5:], node.value))


class _RegisteredTensors(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        # `self.register_buffer("inv_freq", ...)` / `self.register_parameter("scale", ...)`
        if dotted_name(node.func) in ("self.register_buffer", "self.register_parameter") and node.args:
            first = node.args[0].value
            if isinstance(first, cst.SimpleString):
                self.found.add(first.value.strip("'\""))


def _registered_tensors(fn: cst.FunctionDef) -> set[str]:
    """Names registered as buffers or parameters in a method body."""
    visitor = _RegisteredTensors()
    fn.body.visit(visitor)
    return visitor.found


def _self_assignments(fn: cst.FunctionDef) -> list[tuple[str, cst.BaseExpression]]:
    visitor = _SelfAssignments()
    fn.body.visit(visitor)
    return visitor.found
