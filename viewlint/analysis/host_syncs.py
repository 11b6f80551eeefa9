"""PyTorch semantics as tables, for host syncs (VL401-VL405): what reads a device tensor's values on the host.

Split from `viewlint.analysis.semantics` (which re-exports these names); the same rules apply: every rule and the
prefilter ask these tables, nothing else hard-codes an operation name.
"""

from __future__ import annotations

# Methods that copy a device tensor's values into Python objects.
HOST_SCALAR_METHODS = frozenset({"item", "tolist"})
# Comparisons that answer with a Python bool (`torch.equal(a, b)`, `a.allclose(b)`, `t.is_nonzero()`): the device
# computes it and the host waits for the answer.
HOST_BOOL_READS = frozenset({"equal", "allclose", "is_nonzero"})
# Builtins that call `Tensor.__int__`/`__float__`/`__bool__`: the same copy as `.item()`.
HOST_SCALAR_BUILTINS = frozenset({"int", "float", "bool", "complex"})
# Methods whose output size depends on the values: PyTorch copies the size to the host before allocating.
# Results that unpack to (values, indices): the second item is an index tensor (`top, idx = x.topk(k)`,
# `uniq, inverse = torch.unique(ids, return_inverse=True)`), at least 1-D.
SECOND_ITEM_INDICES = frozenset(
    f"{prefix}{name}" for prefix in ("torch.", ".")
    for name in ("topk", "sort", "max", "min", "kthvalue", "median", "mode", "unique(inverse)", "unique_consecutive(inverse)"))
# Calls whose positional arguments are sizes, each read as an int (`__index__`: a tensor is read on the host):
# methods of a tensor, and torch factories.
SIZE_ARGUMENT_METHODS = frozenset({"view", "reshape", "expand", "new_zeros", "new_ones", "new_empty", "repeat", "tile"})
SIZE_ARGUMENT_FUNCTIONS = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"})
# Tensor methods whose scaling keyword is a Python scalar (`g.sub(w, alpha=proj)`, `p.addcdiv_(m, v, value=-lr)`): a tensor
# given there is read with `.item()`. (The `torch.<name>` functions take the same keyword.)
SCALAR_KEYWORDS = {"add": "alpha", "add_": "alpha", "sub": "alpha", "sub_": "alpha", "rsub": "alpha",
                   "addcmul": "value", "addcmul_": "value", "addcdiv": "value", "addcdiv_": "value"}
# Kernels that take host ints (by the callee's last name: `flash_attn.flash_attn_varlen_func` and wrappers of the same
# signature): name -> (positions, keywords) of the ints. A tensor given there (`x_lens.max()`) is read with `int()`.
HOST_INT_PARAMETERS = {
    "flash_attn_varlen_func": ((5, 6), ("max_seqlen_q", "max_seqlen_k")),
    "flash_attn_varlen_kvpacked_func": ((4, 5), ("max_seqlen_q", "max_seqlen_k")),
    "flash_attn_varlen_qkvpacked_func": ((2,), ("max_seqlen",)),
}
# (`bincount` sizes its result by the largest value, `minlength` or not: CUDA reads `max()` on the host.)
DATA_DEPENDENT_SHAPE_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount"})
DATA_DEPENDENT_SHAPE_FUNCTIONS = frozenset(
    {"torch.nonzero", "torch.argwhere", "torch.masked_select", "torch.unique", "torch.unique_consecutive", "torch.bincount"}
)

# `torch.linalg` functions that check their result for errors on the host (PyTorch's documentation: "When inputs are on
# a CUDA device, this function synchronizes that device with the CPU"): each reads the LAPACK/MAGMA `info` codes back,
# as `.item()` would. Name -> the `_ex` twin that checks nothing unless asked (`check_errors=True`), or None where there
# is none (the eigen and rank functions). `torch.inverse` is `torch.linalg.inv`; `Tensor.inverse()` and
# `Tensor.cholesky()` are methods of the same.
ERROR_CHECKING_LINALG = {
    "torch.linalg.inv": "torch.linalg.inv_ex", "torch.inverse": "torch.linalg.inv_ex",
    "torch.linalg.cholesky": "torch.linalg.cholesky_ex", "torch.cholesky": "torch.linalg.cholesky_ex",
    "torch.linalg.solve": "torch.linalg.solve_ex", "torch.linalg.lu_factor": "torch.linalg.lu_factor_ex",
    "torch.linalg.ldl_factor": "torch.linalg.ldl_factor_ex", "torch.linalg.eig": None, "torch.linalg.eigvals": None,
    "torch.linalg.eigh": None, "torch.linalg.eigvalsh": None, "torch.linalg.matrix_rank": None, "torch.linalg.svdvals": None,
}
ERROR_CHECKING_LINALG_METHODS = {"inverse": "torch.linalg.inv_ex", "cholesky": "torch.linalg.cholesky_ex"}
# The last names of all of those (for the prefilter, before names are resolved).
ERROR_CHECKING_LINALG_NAMES = frozenset(n.rsplit(".", 1)[-1] for n in ERROR_CHECKING_LINALG) | set(ERROR_CHECKING_LINALG_METHODS)
