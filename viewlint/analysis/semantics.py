"""PyTorch semantics as tables: which operations return views, which may, which copy.

Every rule asks these questions through the walker's facts; nothing else in
viewlint should hard-code an operation name.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Callable, Iterable, Optional

# The host-sync tables live in `host_syncs`; they are asked here too, as they always were.
from viewlint.analysis.host_syncs import (
    HOST_SCALAR_METHODS as HOST_SCALAR_METHODS, HOST_BOOL_READS as HOST_BOOL_READS,
    HOST_SCALAR_BUILTINS as HOST_SCALAR_BUILTINS, SECOND_ITEM_INDICES as SECOND_ITEM_INDICES,
    SIZE_ARGUMENT_METHODS as SIZE_ARGUMENT_METHODS, SIZE_ARGUMENT_FUNCTIONS as SIZE_ARGUMENT_FUNCTIONS,
    SCALAR_KEYWORDS as SCALAR_KEYWORDS, HOST_INT_PARAMETERS as HOST_INT_PARAMETERS,
    DATA_DEPENDENT_SHAPE_METHODS as DATA_DEPENDENT_SHAPE_METHODS,
    DATA_DEPENDENT_SHAPE_FUNCTIONS as DATA_DEPENDENT_SHAPE_FUNCTIONS,
)
from viewlint.analysis.math_methods import MATH_COMPARISON_METHODS, MATH_ELEMENTWISE_METHODS, MATH_RESHAPING_METHODS

# Methods whose result is always a view of the receiver (same storage).
VIEW_METHODS = frozenset(
    {
        "narrow", "select", "view", "view_as", "transpose", "permute", "t", "expand", "expand_as",
        "squeeze", "unsqueeze", "unflatten", "diagonal", "unfold", "as_strided", "detach",
        "movedim", "moveaxis", "swapaxes", "swapdims", "adjoint", "conj", "resolve_conj",
        "resolve_neg", "indices", "values", "crow_indices", "col_indices", "align_to",
        "refine_names", "rename", "view_as_real", "view_as_complex", "broadcast_to",
    }
)
# Of those, the names that non-tensor objects commonly have too: trust them only on known tensors.
AMBIGUOUS_VIEW_METHODS = frozenset(
    {"select", "view", "expand", "squeeze", "indices", "values", "conj", "rename", "align_to", "adjoint"}
)
# View ops whose result may cover only part of the input's storage (with basic slicing, split
# pieces and iteration rows): a stored result pins the whole input. `t`, `view`, `detach` cover it all;
# `as_strided` is layout plumbing (TMA-aligned strides, padded scales) whose caller manages storage on purpose.
PARTIAL_VIEW_OPS = frozenset(
    {"narrow", "select", "diagonal", "real", "imag", "indices", "values", "crow_indices", "col_indices", "iteration"}
)
# Methods returning a tuple of views of the receiver.
SEQUENCE_VIEW_METHODS = frozenset(
    {"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes"}
)
# `str.split` exists: `.split` is only a tensor split on a known tensor or with tensor-style arguments.
AMBIGUOUS_SEQUENCE_METHODS = frozenset({"split"})
# Attributes that are views of the tensor they are read from.
VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# Attributes that are views only when the receiver is a known tensor (`.data` is everywhere).
AMBIGUOUS_VIEW_ATTRIBUTES = frozenset({"data"})

# Methods that return the receiver itself (or a view of it) whenever they can, and copy otherwise.
# Applied to a view, they do not give it its own storage: the false "ownership fixes".
MAYBE_VIEW_METHODS = frozenset(
    {
        "reshape", "reshape_as", "flatten", "ravel", "contiguous", "to", "type", "type_as", "float", "half",
        "bfloat16", "double", "int", "long", "short", "bool", "byte", "char", "cpu", "cuda",
        "requires_grad_", "squeeze_", "unsqueeze_", "as_subclass", "pin_memory", "coalesce",
    }
)
# Of those, the ones ``--fix`` and messages call "ownership fixes" (the others are casts).
OWNERSHIP_FIX_METHODS = frozenset({"contiguous", "reshape", "reshape_as", "flatten", "to", "type", "float", "half", "bfloat16", "double", "cpu", "cuda"})
MAYBE_VIEW_METHODS_NEED_TENSOR = frozenset({"to", "type", "float", "int", "bool", "cpu", "cuda", "long", "double", "half", "short", "byte", "char",
                                            "flatten", "ravel", "bfloat16", "requires_grad_"})

# torch.* functions returning a view of their first argument.
VIEW_FUNCTIONS = frozenset(
    {
        "torch.narrow", "torch.select", "torch.transpose", "torch.permute", "torch.t", "torch.squeeze",
        "torch.unsqueeze", "torch.diagonal", "torch.as_strided", "torch.detach", "torch.movedim",
        "torch.moveaxis", "torch.swapaxes", "torch.swapdims", "torch.view_as_real", "torch.view_as_complex",
        "torch.broadcast_to", "torch.unflatten", "torch.real", "torch.imag", "torch.adjoint",
    }
)
# torch.* functions returning a tuple of views of their first argument.
SEQUENCE_VIEW_FUNCTIONS = frozenset(
    {"torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split", "torch.hsplit", "torch.vsplit", "torch.dsplit"}
)
# torch.* functions that return their input (or a view of it) when they can.
MAYBE_VIEW_FUNCTIONS = frozenset({"torch.reshape", "torch.flatten", "torch.ravel", "torch.as_tensor", "torch.asarray", "torch.from_numpy",
                                  "torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d"})
# Ops whose result may have its `_base` set over storage of its own (checked on torch 2.13): `repeat_interleave` by an
# int views the copy it expanded into, `F.bilinear` and `nn.Bilinear` a product, `nn.LSTM` and `nn.MultiheadAttention`
# their outputs. What they return owns all it reaches; whether `_base` is set is not claimed.
BASE_SETTING_OPS = frozenset({"repeat_interleave", "bilinear", "Bilinear"})
# `math.<function>`s that return an `int` (the others return a `float`); neither is ever a tensor (`math.log(t)` of a
# one-element tensor gives a float too).
MATH_INT_FUNCTIONS = frozenset({"floor", "ceil", "trunc", "factorial", "gcd", "lcm", "comb", "perm", "isqrt", "prod"})
# torch.* functions returning a tuple of expanded views of their arguments, one each (checked on torch 2.13:
# `torch.meshgrid(a, b)[0]._base` is set).
BROADCAST_VIEW_FUNCTIONS = frozenset({"torch.meshgrid", "torch.broadcast_tensors"})
# torch.* functions computing a product and returning it reshaped or permuted: a view of it, or of their one input
# (`torch.einsum("ij,jk->ik", a, b)._base` and `torch.einsum("abc->cba", x)._base` are set; checked on torch 2.13).
PRODUCT_VIEW_FUNCTIONS = frozenset({"torch.einsum", "torch.tensordot"})

# Factories: a fresh, contiguous tensor. On the CPU unless a device is given.
FACTORY_FUNCTIONS = frozenset(
    {
        "torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.rand", "torch.randn",
        "torch.randint", "torch.randperm", "torch.arange", "torch.range", "torch.linspace", "torch.logspace",
        "torch.eye", "torch.tensor", "torch.empty_strided", "torch.normal", "torch.bernoulli",
        "torch.multinomial", "torch.poisson", "torch.tril_indices", "torch.triu_indices",
    }
)
# Of those, the ones that sample from a tensor they are given (`torch.multinomial(probs, 1)`): on its device, not the CPU.
SAMPLING_FUNCTIONS = frozenset({"torch.multinomial", "torch.bernoulli", "torch.normal", "torch.poisson"})
# Factories that allocate without initialising: buffers made to be filled (or carved into views).
EMPTY_FACTORIES = frozenset({"torch.empty", "torch.empty_strided"})
# `*_like` factories follow the input's strides (preserve_format): fresh, but not provably contiguous.
LIKE_FACTORY_FUNCTIONS = frozenset(
    {"torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.rand_like", "torch.randn_like", "torch.randint_like"}
)
# Functions whose result is a new, contiguous tensor.
FRESH_CONTIGUOUS_FUNCTIONS = frozenset(
    {
        "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
        "torch.matmul", "torch.mm", "torch.bmm", "torch.baddbmm", "torch.addmm",
        "torch.nn.functional.linear", "torch.index_select", "torch.masked_select", "torch.nonzero",
        "torch.argwhere", "torch.gather", "torch.take", "torch.repeat_interleave", "torch.outer",
    }
)
# Of those, the ones whose result follows the inputs' memory format: `torch.cat` of channels_last
# inputs is channels_last (checked on torch 2.13), so they are contiguous only when the inputs are.
LAYOUT_FOLLOWING_FUNCTIONS = frozenset(
    {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack", "torch.dstack"}
)
# Ops that always copy the elements they select (a write into their result never reaches the input).
GATHER_FUNCTIONS = frozenset({"torch.index_select", "torch.masked_select", "torch.gather", "torch.take"})
GATHER_METHODS = frozenset({"index_select", "masked_select", "gather", "take"})
# Reductions: without a `dim`, the result is a 0-dim tensor.
REDUCTIONS = frozenset(
    {"sum", "mean", "max", "min", "prod", "norm", "std", "var", "any", "all", "amax", "amin", "logsumexp",
     "count_nonzero", "argmax", "argmin", "median", "nansum", "nanmean"}
)
# Methods returning a boolean tensor of the receiver's shape.
BOOL_RESULT_METHODS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
     "logical_xor", "isin", "bool", "isneginf", "isposinf", "isreal"}
) | MATH_COMPARISON_METHODS
# Methods returning a tensor of the receiver's shape (its rank is kept).
ELEMENTWISE_METHODS = frozenset(
    {"abs", "neg", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "clamp", "clamp_min", "clamp_max", "clip", "round", "floor", "ceil",
     "sign", "square", "pow", "add", "sub", "mul", "div", "masked_fill", "reciprocal", "sin", "cos", "float_power",
     "fmod", "remainder", "lerp", "nan_to_num", "where", "clone", "trunc", "exp2", "log2", "log1p", "expm1"}
) | MATH_ELEMENTWISE_METHODS
# `torch.<name>` calls that do not return tensors (checked before the generic "a torch function returns a tensor").
NON_TENSOR_TORCH_FUNCTIONS = frozenset(
    {"numel", "broadcast_shapes", "result_type", "promote_types", "can_cast", "device", "dtype", "Size", "no_grad",
     "enable_grad", "inference_mode", "autocast", "compile", "save", "load", "cond", "vmap", "typename", "finfo",
     "iinfo", "empty_cache", "from_dlpack", "seed", "initial_seed", "Generator", "Tensor", "tensor_split_sizes",
     "equal", "allclose", "is_nonzero", "are_deterministic_algorithms_enabled", "cuda", "distributed", "library", "ops"}
)
NON_TENSOR_TORCH_PREFIXES = ("is_", "get_", "set_", "use_", "manual_", "sym_", "_")
# Functions returning a new tensor whose layout we do not claim (elementwise ops keep input strides).
FRESH_FUNCTIONS = frozenset(
    {
        "torch.where", "torch.clone", "torch.exp", "torch.log", "torch.sigmoid", "torch.tanh", "torch.relu",
        "torch.softmax", "torch.log_softmax", "torch.sum", "torch.mean", "torch.max", "torch.min",
        "torch.abs", "torch.sqrt", "torch.rsqrt", "torch.add", "torch.sub", "torch.mul", "torch.div",
        "torch.clamp", "torch.cumsum", "torch.argmax", "torch.argmin", "torch.argsort", "torch.sort",
        "torch.topk", "torch.nn.functional.softmax", "torch.nn.functional.silu", "torch.nn.functional.gelu",
        "torch.nn.functional.relu", "torch.nn.functional.pad", "torch.nn.functional.normalize",
        "torch.nn.functional.scaled_dot_product_attention", "torch.nn.functional.embedding",
        "torch.nn.functional.layer_norm", "torch.nn.functional.dropout", "torch.masked_fill", "torch.lerp",
        "torch.maximum", "torch.minimum", "torch.pow", "torch.square", "torch.neg", "torch.bucketize",
        "torch.searchsorted", "torch.unique", "torch.flip", "torch.roll", "torch.tile", "torch.cumprod",
        "torch.any", "torch.all", "torch.isnan", "torch.isinf", "torch.isfinite", "torch.logical_not",
        "torch.logical_and", "torch.logical_or", "torch.logical_xor", "torch.eq", "torch.ne", "torch.gt", "torch.ge",
        "torch.lt", "torch.le", "torch.isin", "torch.count_nonzero", "torch.unique_consecutive", "torch.nan_to_num",
        "torch.amax", "torch.amin", "torch.logsumexp", "torch.prod", "torch.norm", "torch.ceil", "torch.floor",
        "torch.round", "torch.trunc", "torch.sign", "torch.diff", "torch.kthvalue", "torch.median", "torch.mode",
        "torch.std", "torch.var", "torch.bincount", "torch.histc", "torch.cdist", "torch.addcmul",
        "torch.addcdiv", "torch.erf", "torch.exp2", "torch.log2", "torch.log1p", "torch.expm1", "torch.reciprocal",
        "torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence",
    }
)
# Of those, the elementwise ones: their result is laid out as their inputs are (contiguous where every tensor input is).
ELEMENTWISE_FUNCTIONS = frozenset(
    name for name in FRESH_FUNCTIONS
    if name.rsplit(".", 1)[-1] in {
        "where", "exp", "log", "sigmoid", "tanh", "relu", "silu", "gelu", "dropout", "abs", "sqrt", "rsqrt", "add",
        "sub", "mul", "div", "clamp", "masked_fill", "lerp", "maximum", "minimum", "pow", "square", "neg", "isnan",
        "isinf", "isfinite", "logical_not", "logical_and", "logical_or", "logical_xor", "eq", "ne", "gt", "ge", "lt",
        "le", "nan_to_num", "ceil", "floor", "round", "trunc", "sign", "addcmul", "addcdiv", "erf", "exp2", "log2",
        "log1p", "expm1", "reciprocal"}
)
# Namespaces whose functions all compute tensors.
TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.special.", "torch.linalg.", "torch.fft.")
# torch functions whose first argument must be a tensor (a Python number or list raises a TypeError; checked on torch
# 2.13): of the functions above, all but those that take a sequence of tensors, an equation, or a number first
# (`torch.add(2.0, t)`, `torch.pow(2, t)`, `torch.isin(3, t)` run).
TENSOR_INPUT_FUNCTIONS = (VIEW_FUNCTIONS | SEQUENCE_VIEW_FUNCTIONS | GATHER_FUNCTIONS | FRESH_FUNCTIONS
                          | FRESH_CONTIGUOUS_FUNCTIONS | LIKE_FACTORY_FUNCTIONS) - {
    "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack", "torch.dstack",
    "torch.einsum", "torch.add", "torch.sub", "torch.mul", "torch.div", "torch.pow", "torch.remainder",
    "torch.bucketize", "torch.isin"}
# A mark in a function's usage (`Facts.usage_of`): the name is passed where only a tensor is taken (`torch.exp(x)`,
# `self.loss_fn(x, y)` of an `nn.CrossEntropyLoss`); the mark is followed by what takes it.
TENSOR_INPUT_MARK = "<input of> "
_KNOWN_TORCH_RESULTS = (VIEW_FUNCTIONS | SEQUENCE_VIEW_FUNCTIONS | MAYBE_VIEW_FUNCTIONS | FACTORY_FUNCTIONS
                        | LIKE_FACTORY_FUNCTIONS | FRESH_CONTIGUOUS_FUNCTIONS | FRESH_FUNCTIONS | BROADCAST_VIEW_FUNCTIONS
                        | PRODUCT_VIEW_FUNCTIONS)


# Methods that add their arguments to the list they are called on (`pieces.append(p)`).
ACCUMULATING_METHODS = frozenset({"append", "extend", "insert", "appendleft"})
# Methods of an optimizer (a class deriving from `torch.optim.Optimizer`) that run on every training step.
OPTIMIZER_STEP_NAMES = frozenset({"step"})


def per_step_methods(name: str, bases: list[str], optimizer: bool, inherited: list[frozenset[str]],
                     computes: bool = False, methods: frozenset[str] = frozenset()) -> frozenset[str]:
    """The methods a class of this kind runs once per training or sampling step, by its name and its bases' last names:
    an optimizer's `step`; a metric's `update` and `_update` (a class named or based on `*Metric`, or a module with
    `update` and `compute`: called for every batch); a loss's `__call__` (a class named or based on `*Loss`); a
    diffusion scheduler's `step` (once per denoising step; not a learning-rate scheduler's, which only does host
    arithmetic); a reinforcement-learning environment's `step` (a class named or based on `*Env` with a `step` and a
    `reset*` method, Gym's protocol: once per environment step; not a class of environment variables)."""
    found: set[str] = set().union(*inherited) if inherited else set()
    names = [name, *bases]
    if optimizer:
        found |= OPTIMIZER_STEP_NAMES
    if computes or any(n.endswith("Metric") for n in names):
        found |= {"update", "_update"}  # (`_update`: what torchrec's and torchmetrics' `update` delegates to)
    if any(n.endswith("Scheduler") for n in names) and not any("LR" in n or "Lr" in n for n in names):
        found.add("step")
    if any(n.endswith("Loss") for n in names):
        found.add("__call__")  # a loss object, called once per step (a module's `forward` is hot anyway)
    if any(n.endswith(("Env", "Environment")) for n in names) and "step" in methods \
            and any(m.startswith("reset") for m in methods):
        found.add("step")  # `Go2Env.step(actions)`: a vectorised simulator's step, every environment step
    return frozenset(found)
# Methods that run one training step by convention (Lightning's, the Hugging Face Trainer's): hot themselves, and a
# loop that calls one is a step loop.
TRAINING_STEP_NAMES = ("training_step", "train_step")
# The method names `runs_a_step` reads: a cheap test before the callee's names are printed.
STEP_METHODS = frozenset({"backward", "step", *TRAINING_STEP_NAMES})
# Views that reorder dimensions (methods, and attributes): of a matrix not contiguous, so a `.contiguous()` or a
# reshape after them copies (`weight.t().contiguous()`, `w.T.contiguous()[0] = 1`).
TRANSPOSING_METHODS = frozenset({"t", "transpose", "permute", "movedim", "moveaxis", "swapaxes", "swapdims"})
TRANSPOSING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})
# The same as the origins the evaluator gives their views (`.t()`, `.T`).
TRANSPOSING_ORIGINS = frozenset({f".{m}()" for m in TRANSPOSING_METHODS} | {f".{a}" for a in TRANSPOSING_ATTRIBUTES})
# How many tokens a decode loop makes: a loop over `range(<one of these>)` runs once per generated token.
DECODE_BOUNDS = frozenset({"max_new_tokens", "max_gen_len", "max_gen_tokens", "max_decode_steps", "num_tokens_to_generate",
                           "max_generation_length"})


def decode_bound(bound: Optional[str]) -> Optional[str]:
    """`a decode loop over range(max_new_tokens)` where `bound` (the dotted name given to `range`, last if several
    arguments) names how many tokens are made (`max_new_tokens`, `self.max_gen_len`), else None."""
    if bound is None or bound.split(".")[-1] not in DECODE_BOUNDS:
        return None
    return f"a decode loop over `range({bound})`"


def runs_a_step(method: str, receiver: str, callee: str, arguments: int = 0) -> Optional[str]:
    """What a method call runs when it runs a training step, for messages, or None: `loss.backward()`,
    `optimizer.step()`, a denoising `self.scheduler.step(noise_pred, t, latents)`, `self.training_step(...)`.
    `receiver` and `callee` are the dotted names of the receiver and of the whole callee (empty when they are not
    names), `arguments` how many arguments the call passes; read on `ast` by the call graph and on libcst by the
    walker's loops.

    A learning-rate schedule's step (`lr_scheduler.step()`, `self.scheduler.step()`, `scheduler.step(val_loss)`) is
    not one: it runs once per epoch, or beside the optimizer's step, which says so itself."""
    if method == "backward" or method in TRAINING_STEP_NAMES:
        return f"`{callee or method}()`"
    last = receiver.split(".")[-1].lower()
    if method == "step" and any(word in last for word in OPTIMIZER_WORDS):
        if "sched" in last and (arguments < 2 or last.startswith("lr") or "lr_" in last):
            return None
        return f"`{receiver}.step()`"
    return None
# Spellings of the same dtype (`torch.float` is `torch.float32`), for comparing dtypes.
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "long": "int64", "int": "int32", "half": "float16",
                  "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}
# The dtype a factory makes without `dtype=` (default dtype float32; integer factories int64).
FLOAT_DEFAULT_FACTORIES = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.rand", "torch.randn",
                                     "torch.linspace", "torch.logspace", "torch.eye"})
INT64_DEFAULT_FACTORIES = frozenset({"torch.randint", "torch.randperm", "torch.tril_indices", "torch.triu_indices"})
# String devices (`"cuda:0"`, `"cpu"`).
DEVICE_STRING_PREFIXES = ("cuda", "cpu", "mps", "xpu", "npu", "meta", "hpu")


def canonical_dtype(qualified: Optional[str]) -> Optional[str]:
    """`torch.half` -> "float16"; None for anything that is not `torch.<dtype>`."""
    if not qualified or not qualified.startswith("torch.") or qualified.count(".") != 1:
        return None
    name = qualified[6:]
    return _DTYPE_ALIASES.get(name, name) if name in DTYPE_NAMES else None


def generic_torch_op(qualified: str) -> bool:
    """`torch.<op>` named like an op (lower case, not a predicate, getter or setting): a new tensor."""
    parts = qualified.split(".")
    return len(parts) == 2 and parts[0] == "torch" and parts[1][:1].islower() \
        and parts[1] not in NON_TENSOR_TORCH_FUNCTIONS and not parts[1].startswith(NON_TENSOR_TORCH_PREFIXES)


# `torch.nn` classes that are not modules (tensors, containers, namespaces).
_NN_NON_MODULES = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "ModuleList",
                             "ModuleDict", "ParameterList", "ParameterDict"})
# `torch.nn` modules whose call returns a tuple of tensors.
NN_TUPLE_MODULES = frozenset({"RNN", "LSTM", "GRU", "MultiheadAttention", "AdaptiveLogSoftmaxWithLoss"})
# `torch.nn` modules whose call may return its input itself (in eval mode, or always).
NN_IDENTITY_MODULES = frozenset({"Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                 "FeatureAlphaDropout"})
# `torch.nn` modules that reshape their input, a view of it where its strides allow (`nn.Flatten` is `x.flatten(1)`).
NN_RESHAPING_MODULES = frozenset({"Flatten", "Unflatten"})
# `torch.nn` modules whose output is contiguous whatever the layout of their input (a layer norm normalises a
# contiguous copy, a linear layer's product and an embedding's gather are new row-major tensors). Not `GroupNorm` or
# `RMSNorm`: on a channels-last input they give a channels-last output.
NN_CONTIGUOUS_OUTPUT_MODULES = frozenset({"LayerNorm", "Linear", "Embedding"})
# `torch.nn` modules that compute element by element: their output is laid out as their input is.
NN_ELEMENTWISE_MODULES = frozenset({"GELU", "SiLU", "ReLU", "ReLU6", "Tanh", "Sigmoid", "LeakyReLU", "Mish", "Hardswish",
                                    "Hardsigmoid", "ELU", "SELU", "Softplus", "Dropout", "AlphaDropout"})
# `nn.Parameter(t)`, `nn.Buffer(t)`: the tensor `t`, as a module's parameter or buffer.
TENSOR_WRAPPING_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                                     "torch.nn.parameter.Buffer"})


def nn_module_class(qualified: str) -> bool:
    """`torch.nn.Linear`, `torch.nn.Module`: a module class of `torch.nn` (not `nn.Parameter`, `nn.ModuleList`)."""
    parts = qualified.split(".")
    return len(parts) >= 3 and parts[0] == "torch" and parts[1] == "nn" and parts[-1][:1].isupper() \
        and parts[-1] not in _NN_NON_MODULES and parts[2] not in ("functional", "init", "utils", "parameter")


def torch_call_gives_tensor(qualified: str) -> bool:
    """Whether a call of this (fully qualified) `torch` function gives a tensor, or tensors, the walker
    knows of (`Evaluator._torch_function`). Others give nothing known: `torch.cuda.get_device_capability()`,
    `torch.distributed.get_rank()`, `torch.is_tensor(x)`."""
    return qualified in _KNOWN_TORCH_RESULTS or qualified.startswith(TENSOR_NAMESPACES) or generic_torch_op(qualified) \
        or qualified in TENSOR_WRAPPING_CLASSES
# Tensor methods returning a new tensor (never a view of the receiver).
FRESH_METHODS = frozenset(
    {
        "clone", "add", "sub", "mul", "div", "matmul", "mm", "bmm", "sum", "mean", "max", "min", "abs",
        "exp", "log", "sqrt", "rsqrt", "pow", "softmax", "log_softmax", "sigmoid", "tanh", "relu", "neg",
        "clamp", "clamp_min", "clamp_max", "clip", "masked_fill", "index_select", "index_copy", "index_put", "index_add", "index_fill",
        "scatter", "scatter_add", "scatter_reduce", "gather", "repeat", "repeat_interleave", "cumsum",
        "argmax", "argmin", "argsort", "nonzero", "masked_select", "flip", "roll", "norm", "prod", "std",
        "var", "round", "floor", "ceil", "sign", "square", "lerp", "where", "new_empty", "new_zeros",
        "new_ones", "new_full", "new_tensor", "sort", "topk", "unique", "cumprod", "float_power",
        "fmod", "remainder", "logical_not", "logical_and", "logical_or", "eq", "ne", "lt", "le", "gt", "ge",
        "isnan", "isinf", "isfinite", "any", "all", "sin", "cos", "reciprocal", "tril", "triu", "outer",
        "amax", "amin", "logsumexp", "count_nonzero", "nan_to_num", "unique_consecutive", "isin",
        "diff",
    }
) | MATH_ELEMENTWISE_METHODS | MATH_COMPARISON_METHODS | MATH_RESHAPING_METHODS
# Methods whose result is a new contiguous tensor whatever the receiver's layout.
FRESH_CONTIGUOUS_METHODS = frozenset(
    {"matmul", "mm", "bmm", "index_select", "masked_select", "repeat", "repeat_interleave", "gather", "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "outer"}
)  # (not `nonzero`/`argwhere`: torch 2.13 returns them transposed, stride (1, n))
# Factories whose layout is not row-major: explicit strides, or the strides of an input tensor.
NON_CONTIGUOUS_FACTORIES = frozenset({"torch.empty_strided", "torch.normal", "torch.bernoulli"})
# In-place methods that change the receiver's strides (its contiguity is unknown afterwards).
RESTRIDING_INPLACE_METHODS = frozenset({"t_", "transpose_", "as_strided_", "swapdims_", "swapaxes_", "set_", "unsqueeze_", "squeeze_"})
# Conversions: methods that cast to a fixed dtype, and methods that move to a device.
DTYPE_CAST_METHODS = frozenset({"float", "half", "bfloat16", "double", "long", "int", "short", "bool", "byte", "char"})
DEVICE_MOVE_METHODS = frozenset({"cuda", "cpu", "xpu", "mps", "npu"})
# Conversions that copy a whole tensor whenever they change anything (its dtype or its device).
CONVERTING_METHODS = DTYPE_CAST_METHODS | DEVICE_MOVE_METHODS | {"to", "type"}
# Conversions that keep a tensor's shape (looked through when reading which dimensions have size 1).
SHAPE_KEEPING_CONVERSIONS = frozenset({"to", "float", "half", "bfloat16", "double", "long", "int", "bool", "type",
                                       "type_as", "byte"})
# The dtype each cast method converts to, as `torch.<name>` (for the `.to(device=…, dtype=…)` rewrite).
CAST_METHOD_DTYPES = {
    "float": "torch.float32", "half": "torch.float16", "bfloat16": "torch.bfloat16", "double": "torch.float64",
    "long": "torch.int64", "int": "torch.int32", "short": "torch.int16", "bool": "torch.bool", "byte": "torch.uint8",
    "char": "torch.int8",
}
# Names of torch dtypes (`torch.<name>`).
DTYPE_NAMES = frozenset(
    {
        "float32", "float16", "bfloat16", "float", "half", "int8", "uint8", "int32", "int64", "int16", "float64",
        "double", "long", "int", "short", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
        "float8_e5m2fnuz", "complex64", "complex128", "cfloat", "cdouble",
    }
)
# Out-of-place updates with an in-place twin that writes only the selected elements (`buf = buf.index_copy(…)`).
OUT_OF_PLACE_UPDATE_METHODS = frozenset(
    {"index_copy", "index_put", "index_fill", "index_add", "scatter", "scatter_add", "scatter_reduce", "masked_fill", "masked_scatter"}
)
# Attribute names that hold a module's parameters or buffers on a submodule (`self.q_proj.weight`).
PARAMETER_ATTRIBUTE_NAMES = frozenset({"weight", "bias"})
# Calls whose result stored on `self` in `__init__` is a parameter or buffer tensor.
PARAMETER_CONSTRUCTORS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "Parameter", "nn.Parameter"})
# `nn.Buffer(t)`: a module's buffer, a tensor object of its own over `t`'s storage (no grad, not a view of `t`).
BUFFER_CONSTRUCTORS = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer", "Buffer", "nn.Buffer"})
# Results that are Python scalars or lists (already on the host).
HOST_VALUE_METHODS = frozenset({"item", "tolist", "numel", "dim", "ndimension", "element_size", "size", "stride", "storage_offset", "nelement", "is_contiguous", "data_ptr", "get_device"})
# Index-producing results (always at least 1-D): an advanced index when used in [].
INDEX_TENSOR_METHODS = frozenset({"nonzero", "argsort", "argwhere"})

# In-place methods: a trailing underscore is PyTorch's convention; these dunder-free names qualify.
NON_INPLACE_UNDERSCORE = frozenset({"_", "__"})
# Out-of-place methods with an in-place twin (`name` -> `name_`), for discarded-result rules.
# Tensor conversions that return a new tensor (or the tensor itself) and never change their receiver: as a bare
# statement on a tensor (`x.to(device)`, `x.cuda()`, `x.half()`) the conversion is lost. Modules convert in place.
DISCARDABLE_CONVERSIONS = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "long", "int", "bool", "contiguous", "pin_memory"})
# Views, reshapes and copies whose result is all they give (`gate.unsqueeze(0)` as a statement leaves `gate` as it was);
# `torch.where`/`torch.cat`/`torch.stack` and the view functions as statements lose their result the same way.
DISCARDABLE_VIEWS = frozenset({"unsqueeze", "squeeze", "transpose", "t", "permute", "view", "view_as", "reshape", "flatten", "expand", "expand_as", "detach", "clone", "movedim", "narrow", "select", "where", "cat", "stack", "concat"})
# Of those, the reshapes only tensors and arrays have, out of place on both: as a statement their result is lost whatever
# the receiver is (`y.reshape(n, m)` of a model's output, which a tensor or an array alike leave as they were).
ARRAY_RESHAPES = frozenset({"reshape", "unsqueeze", "permute", "view_as", "reshape_as", "movedim"})
HAS_INPLACE_TWIN = frozenset(
    {
        "index_copy", "index_put", "index_fill", "index_add", "masked_fill", "masked_scatter", "scatter",
        "scatter_add", "scatter_reduce", "clamp", "clamp_min", "clamp_max", "add", "sub", "mul", "div",
        "addcmul", "addcdiv", "lerp", "pow", "sqrt", "exp", "abs", "neg",
        "sigmoid", "relu", "tanh", "floor", "round", "clip", "put", "baddbmm", "addmm",
    }
)  # (not `copy`/`fill`/`zero`: torch.Tensor has only their `_` forms, and numpy's `fill` is in place)
# Of those, the names only tensors have (not numpy arrays, sets, queues or comm groups): a bare
# `obj.index_copy(...)` is a discarded tensor result even when `obj` is not known to be a tensor.
TENSOR_ONLY_TWIN_METHODS = frozenset(
    {"index_copy", "index_put", "index_fill", "index_add", "masked_fill", "masked_scatter", "scatter_reduce", "addcmul", "addcdiv", "clamp_min", "clamp_max"}
)
# In-place methods that change only metadata (flags, shape, names, storage binding), never element values.
METADATA_INPLACE_METHODS = frozenset(
    {
        "requires_grad_", "squeeze_", "unsqueeze_", "t_", "transpose_", "resize_", "resize_as_", "as_strided_",
        "set_", "detach_", "share_memory_", "swapdims_", "swapaxes_",
    }
)
# In-place writes that store one value in every element: well defined on overlapping memory (expanded tensors).
UNIFORM_FILL_METHODS = frozenset({"fill_", "zero_"})
# Conversions that return the receiver itself when nothing changes and a new tensor otherwise:
# an in-place write on their result reaches the receiver only when they did not copy.
MAYBE_COPY_METHODS = frozenset(
    {
        "reshape", "reshape_as", "flatten", "ravel", "contiguous", "to", "type", "type_as", "float", "half",
        "bfloat16", "double", "int", "long", "short", "bool", "byte", "char", "cpu", "cuda",
    }
)
# Of those, the ones that never copy a contiguous receiver (reshapes of contiguous memory are views).
LAYOUT_ONLY_COPY_METHODS = frozenset({"reshape", "reshape_as", "flatten", "ravel", "contiguous"})
# Of those, the ones that return a view of a contiguous receiver, never the receiver itself (`flatten` of a 1-D
# tensor returns it).
RESHAPE_METHODS = frozenset({"reshape", "reshape_as", "ravel"})
# Those that return a view of their input whenever its strides allow, whatever the layout (`flatten` too).
RESHAPE_LIKE_METHODS = RESHAPE_METHODS | {"flatten"}
# View ops whose result is contiguous when what they view is (`x.view(b, -1)`, `x.unsqueeze(0)`); `detach` and the
# like keep the layout whatever it is.
CONTIGUITY_KEEPING_VIEW_OPS = frozenset({".view()", ".view_as()", ".unsqueeze()", ".squeeze()", ".unflatten()",
                                         ".reshape()", ".reshape_as()", ".ravel()"})
LAYOUT_KEEPING_VIEW_OPS = frozenset({".detach()", ".data", ".conj()", ".resolve_conj()", ".resolve_neg()",
                                     ".view(dtype)", ".rename()", ".refine_names()"})
# Methods whose result shares memory between elements when a dimension was broadcast (stride 0).
EXPANDING_VIEW_ORIGINS = frozenset({".expand()", ".expand_as()", ".broadcast_to()", "torch.broadcast_to"})
# Views that keep a contiguous tensor contiguous (`.view(torch.uint8)` of a contiguous buffer is contiguous).
CONTIGUITY_PRESERVING_VIEW_METHODS = frozenset({"view", "view_as", "detach", "unsqueeze", "squeeze"})

TORCH_NN_INIT_PREFIX = "torch.nn.init."

LONG_LIVED_NAME_PARTS = ("cache", "pool", "store", "registry", "memo")
# Methods that store their argument in the receiver.
STORING_METHODS = frozenset({"append", "appendleft", "extend", "insert", "add", "set", "put", "store", "setdefault", "update", "__setitem__", "push", "register"})
# Methods whose positional arguments a container holds after the call (`pieces.append(p)`, `d.setdefault(k, v)`).
ADDING_METHODS = frozenset({"append", "appendleft", "extend", "insert", "add", "put", "put_nowait", "setdefault", "update", "push"})
# Of those (STORING_METHODS), the ones only containers have: a `self.<attr>.append(v)` is a store whatever the attr is called.
CONTAINER_ONLY_METHODS = frozenset({"append", "appendleft", "extend", "insert", "setdefault", "__setitem__"})
# Methods of queues and lists that hand an item on to whoever takes it later (a consumer, a writer thread).
QUEUE_METHODS = frozenset({"put", "put_nowait", "append", "appendleft", "push"})
# Classes (last part of the name) whose instances are containers.
CONTAINER_CLASS_NAMES = frozenset(
    {"Queue", "SimpleQueue", "LifoQueue", "PriorityQueue", "JoinableQueue", "deque", "OrderedDict", "defaultdict",
     "Counter", "WeakValueDictionary", "ChainMap"}
)
# Methods only torch tensors have: a name they are called on is a tensor.
TENSOR_ONLY_METHODS = frozenset({
    "cuda", "bool", "long", "half", "bfloat16", "detach", "numel", "unsqueeze", "masked_fill", "masked_fill_",
    "index_select", "contiguous", "is_contiguous", "data_ptr", "element_size", "untyped_storage", "storage",
    "masked_scatter", "index_put_", "index_copy_", "index_add_", "index_fill_", "new_zeros", "new_ones",
    "new_empty", "new_full", "new_tensor", "pin_memory", "is_pinned", "expand_as", "view_as",
    "narrow", "unbind", "chunk", "type_as", "scatter_", "scatter_add_", "copy_", "zero_", "fill_", "clamp_",
    "requires_grad_", "retain_grad", "backward", "argwhere", "is_floating_point",
    "int", "float", "double", "softmax", "log_softmax", "sigmoid", "masked_select", "count_nonzero",
})
# Of those, the ones `nn.Module`s have too (`model.cuda()`, `net.half()`), and `pin_memory`, which PyTorch asks custom
# batch types to define: their use says nothing of a tensor.
# Parameters that only a per-step function takes: SGLang hands each forward step's batch (`forward_batch: ForwardBatch`)
# to the functions that prepare and run it, once per step.
PER_STEP_PARAMETERS = frozenset({"forward_batch"})
# The classes of those batches under other names: SGLang's scheduler batches and vLLM's per-step `SchedulerOutput` (a
# `ForwardBatch` under another name is most often a debugging tool's: `maybe_inaccurate_forward_batch`).
PER_STEP_BATCH_CLASSES = frozenset({"ScheduleBatch", "ModelWorkerBatch", "SchedulerOutput"})


def takes_a_step_batch(parameters: Iterable[tuple[str, Optional[str]]], owner: Optional[str] = None) -> bool:
    """A function with one of these parameters prepares or runs one step's batch: hot. `parameters`: (name, the class
    its annotation names), as the walker, the call graph and the prefilter read them (`parameters_with_classes`). A
    method of the batch's class given another (`merge_batch(self, other: ScheduleBatch)`) runs as often as requests."""
    return any(name in PER_STEP_PARAMETERS or ((annotated or "").split(".")[-1] in PER_STEP_BATCH_CLASSES
                                               and (annotated or "").split(".")[-1] != owner)
               for name, annotated in parameters)
# Registering a function to run on every forward or backward pass of a module (or every backward of a tensor).
HOOK_REGISTRATIONS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_hook", "register_module_forward_hook",
    "register_module_forward_pre_hook",
})
# A training callback's methods that a trainer runs on every step (transformers' `TrainerCallback`, Lightning's `Callback`).
PER_STEP_CALLBACKS = frozenset({
    "on_step_begin", "on_step_end", "on_substep_end", "on_pre_optimizer_step", "on_optimizer_step",
    "on_train_batch_start", "on_train_batch_end", "on_before_backward", "on_after_backward",
    "on_before_optimizer_step", "on_before_zero_grad",
})
# What `nn.Module`'s own methods of these names return: the module itself (moved, cast or switched in place).
MODULE_SELF_METHODS = frozenset({
    "eval", "train", "to", "cuda", "cpu", "xpu", "half", "float", "double", "bfloat16", "type", "requires_grad_",
    "apply", "share_memory", "to_empty",
})
MODULE_SHARED_METHODS = frozenset({"cuda", "half", "bfloat16", "float", "double", "requires_grad_", "pin_memory"})
# What using a name says: only tensors have these methods.
TENSOR_USAGE_METHODS = TENSOR_ONLY_METHODS - MODULE_SHARED_METHODS
# Methods and attributes that arrays (torch or NumPy) have and plain Python values do not.
ARRAY_METHODS = TENSOR_ONLY_METHODS | frozenset({
    "any", "all", "sum", "mean", "max", "min", "argmax", "argmin", "argsort", "tolist", "reshape", "flatten",
    "astype", "shape", "dtype", "ndim", "nonzero", "cumsum", "squeeze", "transpose", "T", "prod", "std", "item",
})
# Builtins that are never modules or tensor functions (a call of one says nothing of tensors).
BUILTIN_NAMES = frozenset({
    "print", "len", "range", "enumerate", "zip", "map", "filter", "sorted", "reversed", "min", "max", "sum", "abs",
    "round", "any", "all", "isinstance", "issubclass", "getattr", "setattr", "hasattr", "delattr", "id", "hash", "repr",
    "str", "int", "float", "bool", "list", "tuple", "dict", "set", "frozenset", "type", "super", "iter", "next",
    "open", "vars", "dir", "callable", "format", "divmod", "pow", "ord", "chr", "bytes", "bytearray", "object",
    "slice", "property", "staticmethod", "classmethod", "globals", "locals", "input", "exec", "eval", "compile",
})
# Calls that build an empty or filled container.
CONTAINER_CONSTRUCTORS = frozenset(
    {"dict", "list", "set", "OrderedDict", "defaultdict", "deque", "collections.OrderedDict", "collections.defaultdict", "collections.deque", "WeakValueDictionary", "weakref.WeakValueDictionary"}
)


def is_partial_view_op(origin: str) -> bool:
    """`torch.split`, `.chunk()`, `.narrow()`, `.real`, `iteration`: the result may be part of the input."""
    name = origin.rsplit(".", 1)[-1].removesuffix("()")
    return name in PARTIAL_VIEW_OPS or name in SEQUENCE_VIEW_METHODS


def inplace_twin(method: str) -> bool:
    """`mul_`, `add_`: the in-place twin of a tensor method (what it returns is the tensor it wrote into)."""
    return method.endswith("_") and method[:-1] in HAS_INPLACE_TWIN


def is_inplace_method(name: str) -> bool:
    """PyTorch's in-place convention: ``add_``, ``copy_``, not ``__init__`` or ``_private``."""
    return name.endswith("_") and not name.startswith("_") and name not in NON_INPLACE_UNDERSCORE


# torch.* functions returning a boolean tensor (a mask when used as an index).
BOOL_RESULT_FUNCTIONS = frozenset(
    {
        "torch.isnan", "torch.isinf", "torch.isfinite", "torch.logical_not", "torch.logical_and", "torch.logical_or",
        "torch.logical_xor", "torch.eq", "torch.ne", "torch.gt", "torch.ge", "torch.lt", "torch.le", "torch.isin",
    }
)

# Names of callables that answer a question (`can_use_fp8(q)`, `is_ready(x)`): they return a bool, not a tensor.
PREDICATE_PREFIXES = ("is_", "has_", "can_", "should_", "need_", "needs_")
# Attribute-name prefixes of boolean flags (`self.use_bias`, `self.has_bias`): never a parameter tensor.
FLAG_PREFIXES = ("use_", "has_", "is_", "enable_", "disable_", "with_", "apply_", "skip_", "need_", "should_", "do_", "add_", "separate_", "refresh_", "fuse_", "no_")


# Image/video grid metadata (`grid_thw`, `tgt_sizes`): tiny integer tensors that processors build on the CPU and
# that sglang and diffusers keep there (transformers moves them to the device): their device is not knowable from
# the function, so they count as host-side and the sync rules stay quiet on them.
GRID_METADATA_NAMES = ("*grid_thw*", "*grid_hw*", "*grid_sizes*", "*tgt_sizes*", "*target_sizes*", "spatial_shapes", "image_sizes")
_GRID_METADATA = re.compile("|".join(fnmatch.translate(pattern) for pattern in GRID_METADATA_NAMES))


@functools.lru_cache(maxsize=8192)  # asked of every name the walker looks up
def named_host_side(name: str) -> bool:
    """`seq_lens_cpu`, `batch.positions_cpu`, `lens_cpu_int`, `cpu_indices`, `host_seq_lens`, `cu_seqlens_host`:
    the naming convention for host-side copies of tensors."""
    last = name.split(".")[-1].lower()
    return last.endswith(("_cpu", "_host")) or last.startswith(("cpu_", "host_")) or "_cpu_" in last


# Names of tensors PyTorch keeps on the CPU by contract: a `PackedSequence`'s `batch_sizes` (`pack_padded_sequence`
# moves them there, and the RNN kernels read them on the host).
HOST_CONTRACT_NAMES = frozenset({"batch_sizes"})


@functools.lru_cache(maxsize=8192)  # asked of every name the walker looks up
def looks_cpu_name(name: str) -> bool:
    """A host-side name by convention, grid metadata (`image_grid_thw`) or a host tensor by PyTorch's contract
    (`batch_sizes`), whose device the code cannot tell."""
    last = name.split(".")[-1].lower()
    return named_host_side(name) or _GRID_METADATA.match(last) is not None or last in HOST_CONTRACT_NAMES


def looks_long_lived(name: str, extra: tuple[str, ...] = ()) -> bool:
    """A receiver named like a cache, pool, store, registry or memo (or a configured name)."""
    lowered = name.lower()
    if any(part in lowered for part in LONG_LIVED_NAME_PARTS):
        return True
    return any(lowered == e.lower() or lowered.endswith("." + e.lower()) for e in extra)


# Retention rules' static prefilter triggers: container-only methods (any self-held or module
# receiver), torch.save, and storing calls on receivers named like caches ("re:" marks a regex).
_STORING_ALTERNATIVES = "|".join(sorted(STORING_METHODS))
RETENTION_TRIGGERS = (
    "save",
    *(f".{method}(" for method in sorted(CONTAINER_ONLY_METHODS)),
    "re:(?i)(?:" + "|".join(LONG_LIVED_NAME_PARTS) + r")\w*\s*\.\s*(?:" + _STORING_ALTERNATIVES + r")\s*\(",
)


def retention_index_triggers(index: object, settings: object) -> tuple[str, ...]:
    """Module-specific text a store into a long-lived place must contain: the module's containers
    (`self.<attr>[`/`self.<attr>.`, `NAME[`/`NAME.`), functions and methods that retain an argument,
    functools.cache'd functions (their `def` line names them), and configured long-lived names."""
    names = set(getattr(index, "retaining_functions", {})) | set(getattr(index, "cached_functions", set()))
    for info in getattr(index, "classes", {}).values():
        names |= set(info.retaining_methods)
        names |= {f".{a}[" for a in info.container_attributes} | {f".{a}." for a in info.container_attributes}
    for container in getattr(index, "module_containers", set()):
        names |= {f"{container}[", f"{container}."}
    extra = tuple(getattr(settings, "long_lived_names", ()))
    if extra:
        names.add("re:(?i)(?:" + "|".join(re.escape(e) for e in extra) + r")\s*\.\s*(?:" + _STORING_ALTERNATIVES + r")\s*\(")
    return tuple(sorted(names))


# Parameters of a module's `forward` that are configuration or bookkeeping, not activations.
_OPTION_NAMES = frozenset({
    "config", "kwargs", "args", "step", "training", "mode", "dim", "scale", "dropout", "causal", "is_causal",
    "past_key_values", "past_key_value", "forward_batch", "batch", "metadata", "attn_metadata", "module", "model",
    "hi", "lo", "name", "key", "prefix", "layer", "layers", "callback", "fn", "func",
})
_OPTION_PREFIXES = FLAG_PREFIXES + ("return_", "output_", "num_", "n_", "max_", "min_")
_OPTION_SUFFIXES = ("cache", "caches", "_idx", "_index", "_id", "_len", "_length", "_size", "_dim", "_dimensions", "_config", "_mode",
                    "_type", "_name", "_fn", "_func", "_kwargs", "_args", "_list")


def looks_like_option(name: str) -> bool:
    """`use_cache`, `return_dict`, `layer_idx`, `history_seq_len`, `feat_cache`: a `forward` parameter that is an
    option or a Python value by its name, not an activation tensor."""
    return name in _OPTION_NAMES or name.startswith(_OPTION_PREFIXES) or name.endswith(_OPTION_SUFFIXES)


def is_module_input(name: str, has_annotation: bool, default_is_none_or_absent: bool) -> bool:
    """An unannotated `forward` parameter that carries an activation (shared by the walker and the prefilter)."""
    return not has_annotation and default_is_none_or_absent and not looks_like_option(name)


# Names and words in an `if` test that guard logging or once-per-interval work (hot-path inference).
INTERVAL_WORDS = ("step", "iter", "epoch", "interval", "every", "freq", "period", "log")
LOGGING_WORDS = ("log_interval", "logging_steps", "print_freq", "log_every", "debug", "verbose", "should_log", "epoch",
                 "diagnostic", "test_mode")  # (`if self.config.test_mode: self.run_realtime_tests()`: checks on request)
# Calls that answer True only while a model is traced, scripted, exported or compiled, never when it runs eagerly
# (`torchvision._is_tracing()`, `torch.jit.is_scripting()`, `torch.compiler.is_compiling()`).
NEVER_EAGER_CALLS = ("is_tracing", "is_scripting", "is_in_onnx_export", "is_compiling", "is_dynamo_compiling",
                     "is_torchdynamo_compiling")
# Words in an `if` test whose branch exists for a purpose other than the step itself: export, tracing and compiling
# (the calls above, read as words: `if torchvision._is_tracing():`), where what ONNX or the compiler needs is run, and
# moving to the host on request (`if force_cpu:`, `if cpu_offload:`), where the copy is the point.
# (CUDA-graph capture runs once at start-up: `if in_capture:`, `is_current_stream_capturing()`, `get_is_capture_mode()`;
# not `capture_aux_hidden_states`, which a speculative decoder asks on every step.)
PURPOSE_WORDS = (*NEVER_EAGER_CALLS, "onnx", "force_cpu", "offload", "in_capture", "capturing", "capture_mode",
                 "graph_capture")
COLD_GUARD_WORDS = LOGGING_WORDS + PURPOSE_WORDS
# Words in the name (or environment variable) of an environment switch that turns on checks or dumps: what it
# guards is opt-in validation (`SGLANG_VALIDATE_REPLAY_STATE_INDICES`, `..._VERIFY_REAL_TENSORS`, a KV canary's oracle) or
# inspection (`HF_BACKEND_LOGIT_DUMP`).
DEBUG_SWITCH_WORDS = ("debug", "validate", "validation", "verify", "sanity", "check", "dump", "canary")
# Class names of debugging tools (`DebugUnderflowOverflow`, fairseq's `NanDetector`): their hooks inspect values on purpose.
DEBUG_CLASS_WORDS = ("Debug", "NanDetect", "NaNDetect", "NanCheck", "NaNCheck", "AnomalyDetect")
# Class names of modules that check a pipeline's final output (diffusers' `StableDiffusionSafetyChecker`): once per
# generated output, even though they are modules.
OUTPUT_CHECKER_CLASS_WORDS = ("SafetyChecker",)
# Class names (or base names) of data preparation and orchestration: their `forward`/`__call__` run once per
# batch or request (feature extractors, processors, collators, pipelines and pipeline stages), not per layer.
PREPROCESSING_CLASS_WORDS = ("FeatureExtract", "ImageProcessor", "VideoProcessor", "ProcessorMixin", "Tokenizer",
                             "Collator", "Pipeline", "Stage")
# And data transforms (PyG's `BaseTransform` subclasses, `RandomTransform`): per sample in a data pipeline, on the
# host. Not a `Transformer`, nor a `...Transformation`.
_DATA_TRANSFORM = re.compile(r"Transforms?(?![a-z])")


def names_preprocessing(names: list[str]) -> bool:
    """Class names (a class's own and its bases') that say it prepares data or orchestrates, not a layer: the one
    reading of it, for the walker's contexts and the call graph alike."""
    return any(part in name for name in names for part in PREPROCESSING_CLASS_WORDS) \
        or any(_DATA_TRANSFORM.search(name) for name in names)
# Receivers whose `.step()` runs a training or denoising step, and callables that run a model.
OPTIMIZER_WORDS = ("optim", "opt", "scaler", "scheduler")
MODEL_NAMES = frozenset({"model", "net", "backbone", "policy", "decoder", "engine"})
# Classes loaded with `.from_pretrained(...)` that are models (`AutoModel`, `T5EncoderModel`, `LlamaForCausalLM`,
# `AutoencoderKL`), not the tokenizers, processors, configs, schedulers and pipelines loaded the same way.
_MODEL_CLASS = re.compile(r"Model(?:[A-Z]|$)|For[A-Z]|^Autoencoder")
_NOT_MODEL_CLASS_WORDS = (*PREPROCESSING_CLASS_WORDS, "Processor", "Config", "Scheduler")


# Fields of the output objects models return (transformers' `ModelOutput`s, diffusers' `UNet2DConditionOutput`...) that
# hold a tensor: `out.last_hidden_state` of `out = model(**batch)`.
MODEL_OUTPUT_TENSOR_FIELDS = frozenset({
    "last_hidden_state", "pooler_output", "logits", "loss", "start_logits", "end_logits", "image_embeds", "text_embeds",
    "encoder_last_hidden_state", "sample", "prev_sample", "pred_original_sample",
})


_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def name_words(name: str) -> set[str]:
    """The lower-case words of a name, of three letters or more: `HybridEngineRollout` -> {hybrid, engine, rollout},
    `rollout_engine` -> {rollout, engine}."""
    return {w.lower() for w in _WORD.findall(name) if len(w) >= 3}


def steps_an_optimizer(callee: str) -> bool:
    """`self.optimizers_step()`, `self.optimizer_step(...)`: a function named for stepping the optimizer (what a block
    that calls one is: the training step, whatever interval guards it)."""
    last = callee.split(".")[-1].lower()
    return "optim" in last and last.endswith("step")


def names_a_model(callee: str) -> bool:
    """`model(batch)`, `self.model(x)`, `text_model(ids)`: a call of what its name says is a model (a module that
    runs a forward pass). One reading for the hot paths (a loop that runs a model) and for what the call gives."""
    parts = callee.split(".")
    if len(parts) > 1 and parts[-1] in ("module", "_orig_mod") and names_a_model(".".join(parts[:-1])):
        return True  # `model.module(x)`, `model._orig_mod(x)`: what DDP, DataParallel or `torch.compile` wrap
    if len(parts) > 1 and parts[-1].startswith("forward") and names_a_model(".".join(parts[:-1])):
        return True  # `model.forward(x)`, `self.model.forward_decoder(tokens)`: a forward pass called by its name
    name = parts[-1]
    if not name.islower():
        return False
    if name in MODEL_NAMES:
        return True
    # `text_model(ids)`, `ref_model(x)`; not a helper that handles one (`unwrap_model(m)`, `load_model(path)`).
    return name.endswith("_model") and name.split("_", 1)[0] not in _MODEL_HANDLING_VERBS


_MODEL_HANDLING_VERBS = frozenset({
    "get", "load", "build", "create", "make", "init", "initialize", "setup", "prepare", "wrap", "unwrap", "save",
    "export", "copy", "clone", "compile", "convert", "freeze", "unfreeze", "move", "register", "quantize", "patch",
    "merge", "reset", "restore", "check", "validate", "print", "log", "summarize", "resolve", "attach", "detach",
    "configure", "download", "upload", "fuse", "shard", "replace", "update", "sync", "broadcast",
})


def pretrained_model_class(class_name: str) -> bool:
    """`AutoModelForCausalLM`, `CLIPTextModel`: `<class>.from_pretrained(...)` loads a model."""
    last = class_name.split(".")[-1]
    return bool(_MODEL_CLASS.search(last)) and not any(word in last for word in _NOT_MODEL_CLASS_WORDS)


# Names of boolean masks (`mask`, `attn_mask`, `keep_masks`) and of index tensors (`indices`, `token_ids`,
# `perm`): what an index of unknown value is taken for by its name.
MASK_NAME = re.compile(r"(?:^|_)(?:mask|masks)(?:$|_)|_mask\w*$")
INDEX_NAME = re.compile(r"(?:^|_)(?:indices|idxs|index_tensor|ids|perm|order)$")


def looks_like_mask_name(name: str) -> bool:
    """`mask`, `attn_mask`, `keep`, `is_valid`: a boolean mask by its name."""
    return MASK_NAME.search(name.split(".")[-1].lower()) is not None


def looks_like_index_name(name: str) -> bool:
    """A mask's name or an index tensor's (`indices`, `token_ids`, `perm`): an index that may gather."""
    last = name.split(".")[-1].lower()
    return MASK_NAME.search(last) is not None or INDEX_NAME.search(last) is not None


@functools.lru_cache(maxsize=256)
def glob_matcher(globs: tuple[str, ...]) -> "Callable[[str], Optional[re.Match[str]]]":
    """One compiled test for "matches any of these `fnmatch` globs" (case-sensitive, like `fnmatchcase`)."""
    if not globs:
        return lambda name: None
    return re.compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob in globs)).match


_ACTIVATION_NAME = re.compile(r"^_?(?:[a-z0-9]+_)?(?:act|activation|nonlinearity)(?:_fn|_func|_layer)?$")


def names_an_activation(name: str) -> bool:
    """`act_fn`, `activation`, `nonlinearity`: a callable held under an activation's name (from a registry,
    `ACT2FN[config.hidden_act]`), elementwise: the one tensor it is given keeps its shape and layout."""
    return _ACTIVATION_NAME.match(name) is not None
