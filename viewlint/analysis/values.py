"""Abstract values: what the walker knows about an expression without running it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Optional


class Kind(enum.Enum):
    TENSOR = "tensor"
    TENSOR_SEQUENCE = "tensor sequence"  # e.g. the tuple `torch.split` returns
    WRAPPER = "wrapper"  # a dataclass, namedtuple, dict, list or tuple holding values
    INT = "int"  # a Python int: a basic index
    INT_LIST = "int list"  # a Python list of ints: an advanced index
    HOST = "host"  # another host-side value: str, float, bool, None, a shape
    UNKNOWN = "unknown"


class Provenance(enum.Enum):
    FRESH = "fresh"  # owns its storage
    VIEW = "view"  # always shares the storage of `base`
    MAYBE_VIEW = "maybe view"  # shares `base`'s storage whenever the op could avoid a copy
    UNKNOWN = "unknown"


class IndexKind(enum.Enum):
    BASIC = "basic"  # int, slice, None, ...: the result is a view
    ADVANCED = "advanced"  # tensor, list, mask: the result is a gathered copy
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Value:
    """What is known of one expression's value at one point of a function."""

    kind: Kind = Kind.UNKNOWN
    provenance: Provenance = Provenance.UNKNOWN
    # Source text of the tensor whose storage a view (or maybe-view) shares.
    base: Optional[str] = None
    # The operation that made the view, e.g. "torch.split" or "[:, 0]".
    origin: Optional[str] = None
    # For a maybe-view of a view: the op that looked like it would give it its own storage.
    ownership_op: Optional[str] = None
    # A view (or maybe-view of one) that may cover only part of its base's storage (a slice, a
    # split piece, a row): keeping it keeps the rest alive. `x.t()`, `x.detach()` cover all of it.
    partial: bool = False
    contiguous: Optional[bool] = None
    cpu: bool = False
    zero_dim: Optional[bool] = None
    bool_mask: bool = False
    # Index tensors (arange, nonzero, argsort...): an advanced index when used in [].
    index_like: bool = False
    elements: tuple["Value", ...] = ()
    # For WRAPPER: the constructor's name, for messages.
    wrapper: Optional[str] = None
    # This value is a parameter or buffer of a module (`self.weight`): for per-call-copy rules.
    is_parameter: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def is_view(self) -> bool:
        return self.kind is Kind.TENSOR and self.provenance is Provenance.VIEW

    @property
    def is_maybe_view_of_view(self) -> bool:
        return self.kind is Kind.TENSOR and self.provenance is Provenance.MAYBE_VIEW and self.ownership_op is not None

    @property
    def is_fresh(self) -> bool:
        return self.kind is Kind.TENSOR and self.provenance is Provenance.FRESH

    def with_(self, **changes: object) -> "Value":
        return replace(self, **changes)  # type: ignore[arg-type]

    def retained_views(self, depth: int = 3) -> list["Value"]:
        """Views (or maybe-views of views) inside this value, walking wrappers a few levels deep."""
        if self.is_view or self.is_maybe_view_of_view:
            return [self]
        if depth <= 0:
            return []
        found: list[Value] = []
        if self.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE):
            for element in self.elements:
                found.extend(element.retained_views(depth - 1))
        return found


UNKNOWN = Value()
HOST = Value(kind=Kind.HOST)
INT = Value(kind=Kind.INT)
UNKNOWN_TENSOR = Value(kind=Kind.TENSOR)


def fresh(contiguous: Optional[bool] = None, cpu: bool = False, **kw: object) -> Value:
    return Value(kind=Kind.TENSOR, provenance=Provenance.FRESH, contiguous=contiguous, cpu=cpu, **kw)  # type: ignore[arg-type]


def merge(a: Value, b: Value) -> Value:
    """The value a name has after two branches assigned it differently: what both agree on."""
    if a == b:
        return a
    if a.kind is not b.kind:
        return UNKNOWN
    if a.kind is Kind.TENSOR:
        return Value(
            kind=Kind.TENSOR,
            provenance=a.provenance if a.provenance is b.provenance else Provenance.UNKNOWN,
            base=a.base if a.base == b.base else None,
            origin=a.origin if a.origin == b.origin else None,
            ownership_op=a.ownership_op if a.ownership_op == b.ownership_op else None,
            partial=a.partial and b.partial,
            contiguous=a.contiguous if a.contiguous == b.contiguous else None,
            cpu=a.cpu and b.cpu,
            zero_dim=a.zero_dim if a.zero_dim == b.zero_dim else None,
            bool_mask=a.bool_mask and b.bool_mask,
            index_like=a.index_like and b.index_like,
            is_parameter=a.is_parameter and b.is_parameter,
        )
    return Value(kind=a.kind)
