"""What a call makes, where it is an object rather than a tensor.

Alternative constructors: a classmethod that returns `cls(...)` (`Encoder.from_pretrained(name)`,
`Condenser.make(ids)`) makes an instance of the class it is called on, as calling the class does.

Read here once, over `ast`, for both of the module's readings of what a call makes: the index's (what
`self.encoder = Encoder.from_pretrained(...)` holds, `module_index._built_class`) and the walker's (what
`encoder = Encoder.from_pretrained(...)` is, `calls.Calls._call_result`)."""

from __future__ import annotations

import ast
from typing import Any, Iterator, Optional

from viewlint.analysis.nodes import dotted

# Model classes of the Hugging Face libraries are loaded by these classmethods (`CLIPTextModel.from_pretrained(name)`).
_LOADERS = frozenset({"from_pretrained", "from_config", "from_single_file"})
# What the libraries also load so, that is no module: tokenizers, processors, configurations, schedulers, pipelines.
_NOT_MODULES = ("Tokenizer", "TokenizerFast", "Processor", "Extractor", "Config", "Configuration", "Scheduler",
                "Pipeline", "GenerationConfig")
# Words in the names of the libraries' model classes (`BertModel`, `T5EncoderModel`, `AutoencoderKL`, `UNet2DConditionModel`).
_MODEL_WORDS = ("Model", "Autoencoder", "UNet", "VQ", "Transformer", "Encoder", "Decoder", "For")


def library_model_factory(qualified: str) -> bool:
    """`torchvision.models.resnet18`, `torchvision.models.detection.fasterrcnn_resnet50_fpn`, `timm.create_model`,
    `transformers.CLIPTextModel.from_pretrained`: a function of a model library that builds a model (not its weights
    enums, its registry helpers, or a tokenizer it loads the same way)."""
    if qualified in ("timm.create_model", "torchvision.models.get_model", "open_clip.create_model"):
        return True
    parts = qualified.split(".")
    if len(parts) >= 3 and parts[0] in ("transformers", "diffusers") and parts[-1] in _LOADERS:
        name = parts[-2]
        return not name.endswith(_NOT_MODULES) and any(word in name for word in _MODEL_WORDS)
    return len(parts) >= 3 and parts[:2] == ["torchvision", "models"] and parts[-1].islower() \
        and not parts[-1].startswith(("get_", "list_", "_")) and parts[-1] not in ("utils", "feature_extraction")


# Class methods that build an instance of their class by name, wherever they are defined (a base class of another
# library: `Model.from_pretrained(path)`, `Vision._from_config(config)`).
ALTERNATE_CONSTRUCTORS = frozenset({"from_config", "_from_config", "from_pretrained"})
# How far up the module's own base classes an inherited classmethod is looked for.
_MAX_BASES = 4


def alternative_constructor(index: Any, callee: Optional[str]) -> Optional[str]:
    """The class a call of `callee` makes where `callee` is `C.m` of a class `C` of this module and `m` a classmethod
    of it (or of one of its bases here) that returns `cls(...)`, or one named as such (`ALTERNATE_CONSTRUCTORS`): `C`,
    also when `m` is inherited; else None."""
    if callee is None or callee.count(".") != 1:
        return None
    owner, method = callee.split(".")
    if owner not in index.classes:
        return None
    return owner if method in ALTERNATE_CONSTRUCTORS or _constructs(index, owner, method, 0) else None


def _constructs(index: Any, class_name: str, method: str, depth: int) -> bool:
    for class_def in index.class_defs.get(class_name, ()):
        for statement in class_def.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == method:
                return _returns_an_instance(statement)
        if depth < _MAX_BASES:
            for base in class_def.bases:
                name = dotted(base)
                if name is not None and name != class_name and _constructs(index, name, method, depth + 1):
                    return True
    return False


def _returns_an_instance(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A classmethod each of whose `return`s gives `cls(...)`, a call of another classmethod on `cls` (`cls.empty()`)
    or `None`, and one of which gives `cls(...)`."""
    if not any(dotted(d) == "classmethod" for d in function.decorator_list) or not function.args.args:
        return False
    cls = function.args.args[0].arg
    made = False
    for node in _own_returns(function):
        value = node.value
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            continue
        if not isinstance(value, ast.Call):
            return False
        if isinstance(value.func, ast.Name) and value.func.id == cls:
            made = True
        elif not (isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
                  and value.func.value.id == cls):
            return False
    return made


def _own_returns(function: ast.AST) -> Iterator[ast.Return]:
    """The `return` statements of `function` itself, not of functions or classes defined in it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
