"""Which type names mean a torch tensor or an array: the one reading of the names an annotation or a docstring spells
a tensor with, for both trees (`annotations.annotation_value` reads libcst annotations into a `Value`,
`bindings.tensor_annotation` reads `ast` ones into yes or no; each walks its own tree's `Optional[...]`, unions and
containers, and asks here of each name it reaches)."""

from __future__ import annotations

from typing import Any, Optional

# Type names (last part) that mean a torch tensor, and what each says of its contents.
TENSOR_TYPE_NAMES: dict[str, dict[str, Any]] = {
    "Tensor": {}, "Parameter": {"is_parameter": True}, "FloatTensor": {}, "HalfTensor": {}, "DoubleTensor": {},
    "BFloat16Tensor": {}, "LongTensor": {"index_like": True, "zero_dim": False}, "IntTensor": {"index_like": True, "zero_dim": False},
    "BoolTensor": {"bool_mask": True, "zero_dim": False}, "ByteTensor": {"bool_mask": True, "zero_dim": False},
    "Buffer": {}, "DTensor": {},
}
# Type names (last part) of NumPy arrays.
ARRAY_TYPE_NAMES = frozenset({"ndarray", "NDArray", "ArrayLike"})
# Every last part that may name either: what a reader checks before qualifying a name.
TYPE_NAMES = frozenset(TENSOR_TYPE_NAMES) | ARRAY_TYPE_NAMES


def tensor_type(name: str, qualified: Optional[str] = None) -> Optional[dict[str, Any]]:
    """What a type named `name` (as written; `qualified` through the module's imports, when known) says of a tensor's
    contents (`{}` for `torch.Tensor`, a mask for `BoolTensor`), or None where it names no torch tensor type. A dotted
    name, or one imported, must come from torch (`cute.Tensor` is a CuTe DSL tensor, `from mylib import Tensor` another
    library's); a bare `Tensor`, `Parameter` or `LongTensor` that nothing imports is torch's (a string annotation's)."""
    imported = qualified is not None and qualified != name  # (from somewhere other than torch, unless it says so)
    qualified = qualified or name
    last = qualified.split(".")[-1]
    facts = TENSOR_TYPE_NAMES.get(last)
    if facts is None:
        return None
    if qualified.startswith("torch."):
        return facts
    bare = name in ("Tensor", "Parameter") or (last.endswith("Tensor") and "." not in name)
    return facts if bare and not imported else None


def array_type(name: str) -> bool:
    """A NumPy array type (`np.ndarray`, `NDArray`, `ArrayLike`)."""
    return name.split(".")[-1] in ARRAY_TYPE_NAMES
