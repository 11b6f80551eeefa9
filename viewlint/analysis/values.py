"""Abstract values: what the analysis knows about an expression without running it.

A value is evidence, not proof. Joins (a name bound differently on two paths) follow what
the rules need: the facts a bug needs to exist (a tensor, a view, an advanced index, a
device tensor) hold after a join when they hold on *one* path ("may"); the facts that
excuse one (contiguous, on the CPU, reduced to a scalar) hold only when they hold on
*every* path ("must"). Unknown stays unknown only where no path gives any evidence.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields, replace
from typing import Iterable, Optional


class Kind(enum.Enum):
    TENSOR = "tensor"
    TENSOR_SEQUENCE = "tensor sequence"  # e.g. the tuple `torch.split` returns
    WRAPPER = "wrapper"  # a dataclass, namedtuple, dict, list, tuple or queue holding values
    INT = "int"  # a Python int: a basic index
    INT_LIST = "int list"  # a Python list of ints: an advanced index
    ARRAY = "array"  # a NumPy array: host memory, an advanced index
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


class Device(enum.Enum):
    CPU = "cpu"  # known to live in host memory on every path
    ACCELERATOR = "accelerator"  # moved or allocated on a device on some path (`.cuda()`, `.to(device)`)
    UNKNOWN = "unknown"


# The origin recorded on gathered copies (advanced-index reads).
ADVANCED_INDEX = "advanced index"
# A gather by a permutation of all the rows (`x[scores.argsort()]`): a copy as big as the input, not a pick.
PERMUTED_INDEX = "advanced index by a permutation"
GATHERS = frozenset({ADVANCED_INDEX, PERMUTED_INDEX})
# The origin recorded on tensors a factory made (`torch.zeros`, `torch.arange`...), and on uninitialised
# allocations (`torch.empty`, `empty_like`, `new_empty`): buffers made to be filled.
FACTORY = "factory"
EMPTY = "uninitialised allocation"
# How a view's base was made where nothing more is known than that it owns its storage (`torch.stack(hs)`, a matmul).
COMPUTED = "computed"
# How a view's base was made when keeping the view pins nothing it was not made for: an uninitialised
# buffer carved into views (a workspace, an aligned scratch buffer), a `.clone()` or a gather that already
# owns just what it needs.
DELIBERATE_BASES = frozenset({EMPTY, ".clone()", ADVANCED_INDEX})
# How a `.clone()` of a whole tensor (not of a part of one) is made: as big as what it copies.
WHOLE_COPY = ".clone() of a whole tensor"
# At most this many element values are kept for a container (joins and appends add more).
MAX_ELEMENTS = 6
# How many keys a record keeps apart (a dict display with its keys written out, a dataclass): a metadata dict holds
# a dozen flags, sizes and tensors, each read by its key.
MAX_FIELDS = 32
# At most this many classes are kept for an object of one of several (`A|B`).
MAX_CLASSES = 8


@dataclass(frozen=True)
class Value:
    """What is known of one expression's value at one point of a function."""

    kind: Kind = Kind.UNKNOWN
    provenance: Provenance = Provenance.UNKNOWN
    # Source text (or name) of the tensor whose storage a view (or maybe-view) shares.
    base: Optional[str] = None
    # The operation that made the view, e.g. "torch.split" or "[:, 0]"; for a fresh tensor,
    # how it was made when that matters (".clone()", ADVANCED_INDEX).
    origin: Optional[str] = None
    # For a maybe-view of a view: the op that looked like it would give it its own storage.
    ownership_op: Optional[str] = None
    # This tensor (or the tensor it is a view of) is the result of a conversion of the tensor named
    # `copy_of` (`x.flatten()`, `x.float()`) that copies whenever it cannot return `x` itself:
    # writes into it may never reach `x`. `copy_op` is the conversion (".flatten()").
    copy_of: Optional[str] = None
    copy_op: Optional[str] = None
    # For a view: how its base was made, when known (FACTORY, ".clone()", ADVANCED_INDEX).
    base_made: Optional[str] = None
    # A view (or maybe-view of one) that may cover only part of its base's storage (a slice, a
    # split piece, a row): keeping it keeps the rest alive. `x.t()`, `x.detach()` cover all of it.
    partial: bool = False
    contiguous: Optional[bool] = None
    device: Device = Device.UNKNOWN
    # True: 0-dim on every path (a select when used as an index); False: at least 1-D on some path.
    zero_dim: Optional[bool] = None
    # Made by taking elements out of a tensor of unknown rank (`t[i]`, a loop over a tensor, a
    # reduction): it may well be 0-dim, so as an index it is not known to gather.
    reduced: bool = False
    bool_mask: bool = False
    # Index tensors (arange, nonzero, argsort...): an advanced index when used in [].
    index_like: bool = False
    elements: tuple["Value", ...] = ()
    # A split/chunk/unbind result kept whole: its pieces together cover all of their base, so keeping
    # them all pins nothing more than the base (a slice of the tuple, or one piece, does).
    whole_partition: bool = False
    # The loop variable of `for piece in x.split(n):`: the loop visits every piece of the base in turn.
    every_piece: bool = False
    # For WRAPPER: the name of each element where it has one (a keyword argument, a dataclass field, a
    # string key of a dict literal), else None; empty when no element has a name.
    fields: tuple[Optional[str], ...] = ()
    # For WRAPPER: the constructor's name, for messages.
    wrapper: Optional[str] = None
    # This value is a parameter or buffer of a module (`self.weight`): for per-call-copy rules.
    is_parameter: bool = False
    # The name this tensor was first bound to (a parameter's name, a local's): messages and view bases.
    label: Optional[str] = None
    # Why the analysis believes this is a tensor (or holds one), for messages: "annotated `torch.Tensor`".
    why: Optional[str] = None
    # On the CPU only by a guess from its name (grid metadata, `image_grid_thw`, and views of it): models that
    # move their inputs put it on the device, so it does not bring what it is mixed with to the CPU.
    guessed_cpu: bool = False
    # A tensor's element type on every path ("float32", "int64"), from a factory's `dtype=` or default or a cast.
    dtype: Optional[str] = None
    # A tensor that may be a leaf requiring grad (`requires_grad=True`, `.requires_grad_()`): it refuses
    # in-place writes into itself, which writes into a copy of it never tried.
    grad_leaf: bool = False
    # For a host value: "dtype" (`torch.float16`, `x.dtype`) or "device" (`torch.device(…)`, `x.device`) on every path.
    host_type: Optional[str] = None
    # What the value is on some paths only (a join): `optional`, a tensor on one path and `None`, a number, a tuple
    # or nothing known on another (`mask if cond else None`); `some_view`, a view on one path and a tensor that owns
    # its storage on another. The rules read the "may" (a bug needs one path); `viewlint beliefs` reports only what holds on
    # every path.
    optional: bool = False
    some_view: bool = False
    # A parameter annotated to admit `None` (`mask: Tensor | None = None`), and copies of it: the rules read it as
    # what the annotation says where it is used (the use fails on `None`); `viewlint beliefs` does not claim a tensor.
    may_be_none: bool = field(default=False, compare=False)  # (not compared: no rule reads it)
    # Some path gives something nothing is known of, not only `None` (a tensor there): `x is not None` does not make an
    # `optional` value a tensor (`v for v in [hidden, all_hidden, attentions] if v is not None`, with tuples among
    # them), and an item of one (`x[-1]`) may be a tuple's. The rules read the tensor; `viewlint beliefs` claims none.
    beyond_none: bool = field(default=False, compare=False)  # (not compared: the narrowing and the beliefs read it)
    # How many dimensions the tensor has on every path (`viewlint.analysis.ranks`); for a shape (`x.shape`, a tuple of
    # sizes), how many sizes it holds.
    rank: Optional[int] = None
    # At least this many dimensions on every path, where `rank` is not known (`x * mask` of a 3-D `mask` is at least
    # 3-D whatever `x` is).
    min_rank: int = 0
    # For a tensor that owns all the storage it reaches: whether its `_base` is set all the same, to storage nothing
    # else reaches (`F.linear` of a 3-D input views the 2-D product it computed): True, False, or None (it may be).
    has_base: Optional[bool] = False
    # An index tensor that orders all the positions of a dimension (`scores.argsort()`, `torch.randperm(n)`): what it
    # gathers is as big as what it indexes.
    permutation: bool = False
    # What each of a choice of modules returns, where they differ in kind or in length (`self.norm1` one of two classes
    # whose `forward`s return a 5-tuple and a 7-tuple): unpacking it into N names takes the N-tuples. Only a call of a
    # choice of classes sets them (a name bound to its result keeps them); a join or an operation drops them.
    choices: tuple["Value", ...] = ()

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def cpu(self) -> bool:
        return self.device is Device.CPU

    @property
    def is_view(self) -> bool:
        return self.kind is Kind.TENSOR and self.provenance is Provenance.VIEW

    @property
    def is_maybe_view_of_view(self) -> bool:
        return self.kind is Kind.TENSOR and self.provenance is Provenance.MAYBE_VIEW and self.ownership_op is not None

    @property
    def is_fresh(self) -> bool:
        return self.kind is Kind.TENSOR and self.provenance is Provenance.FRESH

    @property
    def is_container(self) -> bool:
        return self.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE)

    def holds_tensor(self, depth: int = 3) -> bool:
        """A tensor, or a container known to hold one (`tuple[Tensor, Tensor]`, a list of tensors)."""
        if self.kind is Kind.TENSOR or self.kind is Kind.TENSOR_SEQUENCE:
            return True
        return self.kind is Kind.WRAPPER and depth > 0 and any(e.holds_tensor(depth - 1) for e in self.elements)

    def with_(self, **changes: object) -> "Value":
        """A copy with `changes` (what `dataclasses.replace` gives, without running the frozen
        `__init__`'s two dozen `object.__setattr__` calls: values are copied on most steps of the walk)."""
        if not changes.keys() <= _VALUE_FIELDS:
            return replace(self, **changes)  # type: ignore[arg-type]  # raises for the unknown field
        copy = object.__new__(Value)
        attributes = copy.__dict__
        attributes.update(self.__dict__)
        attributes.update(changes)
        return copy

    def element(self) -> "Value":
        """What one item of this container may be (the join of what it holds)."""
        if not self.elements:
            # Nothing known of the items, but a container on the host holds host items (`seq_lens_cpu`, a list).
            return Value(device=Device.CPU) if self.device is Device.CPU else UNKNOWN
        return join_all(self.elements)

    def with_element(self, value: "Value") -> "Value":
        """This container with `value` added to what it may hold (an append, a store by key)."""
        if value in self.elements:
            return self
        elements = self.elements + (value,)
        if len(elements) > MAX_ELEMENTS:
            elements = elements[:MAX_ELEMENTS - 1] + (join_all(elements[MAX_ELEMENTS - 1:]),)
        return replace(self, elements=elements, fields=())

    def with_field(self, name: str, value: "Value") -> "Value":
        """This mapping after `d["name"] = value`: where its keys are known (a dict display, or one built up by stores
        under written-out keys), that key now holds `value` and the others keep theirs; else `value` joins what it
        may hold (`with_element`)."""
        if not self.elements:  # (nothing known of its items: an empty display, a parameter; now one key is known)
            return replace(self, elements=(value,), fields=(name,))
        if not self.fields or len(self.fields) != len(self.elements):
            return self.with_element(value)
        if name in self.fields:
            at = self.fields.index(name)
            return replace(self, elements=self.elements[:at] + (value,) + self.elements[at + 1:])
        if len(self.elements) >= MAX_FIELDS:
            return self.with_element(value)
        return replace(self, elements=self.elements + (value,), fields=self.fields + (name,))

    def field(self, name: str) -> "Value":
        """The element named `name` (`entry.embedding`, `d["key"]`), or unknown."""
        for field_name, element in zip(self.fields, self.elements):
            if field_name == name:
                return element
        return UNKNOWN

    def keyed(self, name: str) -> "Value":
        """`d["key"]`, `d.get("key")`: the element named so where the keys are known; else what every element
        may be, where all of them are tensors (or hold them); unknown where some are not (`{"cu_seqlens": t,
        "max_seqlen": n}` joined with another dict: which key holds which is lost)."""
        if self.fields:
            return self.field(name)
        if self.elements and all(e.kind in (Kind.TENSOR, Kind.TENSOR_SEQUENCE, Kind.WRAPPER) for e in self.elements):
            return self.element()
        return UNKNOWN if self.elements else self.element()

    def held_bases(self, depth: int = 3) -> set[str]:
        """The labels of the tensors (not views) this value holds: `(raw, sliced)` holds `raw`."""
        if self.kind is Kind.TENSOR:
            return {self.label} if self.label and self.provenance is not Provenance.VIEW else set()
        found: set[str] = set()
        if depth > 0 and self.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE):
            for element in self.elements:
                found |= element.held_bases(depth - 1)
        return found

    def covers_base(self, base: str, depth: int = 3) -> bool:
        """This value holds every piece of a split of `base` (`list(packed.chunk(4))`, `Entry(parts=...)`)."""
        if self.kind is Kind.TENSOR_SEQUENCE and self.whole_partition:
            return any(element.base == base for element in self.elements)
        if depth > 0 and self.kind is Kind.WRAPPER:
            return any(element.covers_base(base, depth - 1) for element in self.elements)
        return False

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


_VALUE_FIELDS = frozenset(field.name for field in fields(Value))


UNKNOWN = Value()
HOST = Value(kind=Kind.HOST)
# An item of a NumPy array (a NumPy scalar, or a row): on the host, no tensor.
ARRAY_ITEM = Value(kind=Kind.HOST, host_type="array item", device=Device.CPU)
INT = Value(kind=Kind.INT)
UNKNOWN_TENSOR = Value(kind=Kind.TENSOR)
# What a name holds where a type test said it is no tensor: nothing more is known, and what is read off the name
# elsewhere (usage evidence) does not make it one.
NOT_A_TENSOR = Value(host_type="not a tensor")

# `host_type` of a reference to a function or method of the module (`fn = helper`, `self.compute_default`),
# and of one that stands for an interface other implementations share (`ATTENTION.get(kind, eager_forward)`).
FUNCTION, INTERFACE = "function", "interface"
# A class itself, not an instance (`layer_class: type[CacheLayer]`): calling it builds one (`wrapper` names its classes).
CLASS_REFERENCE = "class"


def function_reference(owner: Optional[str], name: str) -> Value:
    """A value that is the function `owner.name` (`owner` None: a module-level function)."""
    return Value(kind=Kind.HOST, host_type=FUNCTION, wrapper=f"{owner}.{name}" if owner else name)


def referenced_function(value: Value) -> Optional[tuple[Optional[str], str]]:
    """(owner, name) of the function `value` refers to, or None."""
    if value.kind is not Kind.HOST or value.host_type not in (FUNCTION, INTERFACE) or not value.wrapper:
        return None
    owner, _, name = value.wrapper.rpartition(".")
    return owner or None, name


def rank_floor(value: Value) -> int:
    """How many dimensions a tensor has at least: its rank where known."""
    return value.rank if value.rank is not None else value.min_rank


def shape_of(value: Value) -> dict[str, object]:
    """A tensor's rank facts, to give another value the same shape (`fresh(..., **shape_of(x))`)."""
    return {"rank": value.rank, "min_rank": value.min_rank}


def fresh(contiguous: Optional[bool] = None, cpu: Optional[bool] = False, **kw: object) -> Value:
    """A tensor that owns its storage. `cpu`: True on the CPU, False not known to be, or pass `device=`."""
    if "device" not in kw:
        kw["device"] = Device.CPU if cpu else Device.UNKNOWN
    return Value(kind=Kind.TENSOR, provenance=Provenance.FRESH, contiguous=contiguous, **kw)  # type: ignore[arg-type]


def device_of(cpu: bool) -> Device:
    return Device.CPU if cpu else Device.UNKNOWN


_SEQUENCES = (Kind.TENSOR_SEQUENCE, Kind.WRAPPER, Kind.INT_LIST)


def join(a: Value, b: Value) -> Value:
    """The value a name has after two paths bound it differently ("may" for bugs, "must" for excuses)."""
    if a == b:
        return a
    result = _join(a, b)
    if (a.optional or b.optional) and not result.optional and result.kind is not Kind.UNKNOWN:
        result = result.with_(optional=True)  # what is so on some paths only stays so after any further join
    if (a.beyond_none or b.beyond_none) and result.optional and not result.beyond_none:
        result = result.with_(beyond_none=True)
    return result


def _join(a: Value, b: Value) -> Value:
    if a.kind is b.kind:
        if a.kind is Kind.TENSOR:
            return _join_tensors(a, b)
        if a.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE):
            return _join_sequences(a, b)
        wrapper = None
        if a.kind is Kind.HOST and a.wrapper and b.wrapper:
            # An object of one of a few classes (`ResnetBlock2D` or `ResnetBlockCondNorm2D`): its calls give what
            # any of them gives.
            classes = sorted(set(a.wrapper.split("|")) | set(b.wrapper.split("|")))
            wrapper = "|".join(classes) if len(classes) <= MAX_CLASSES else None
        return Value(kind=a.kind, device=a.device if a.device is b.device else Device.UNKNOWN,
                     host_type=a.host_type if a.host_type == b.host_type else None, wrapper=wrapper,
                     rank=a.rank if a.rank == b.rank else None)
    if a.kind is Kind.TENSOR or b.kind is Kind.TENSOR:
        # A tensor on one path (and None, a number or nothing known on the other): a tensor may be here.
        tensor = a if a.kind is Kind.TENSOR else b
        other = b if tensor is a else a
        if other.kind in _SEQUENCES:
            return _join_sequences(Value(kind=Kind.WRAPPER, elements=(tensor,)), other).with_(optional=True)
        # Nothing known on the other path: it may be a tensor of any kind, so excuses no longer hold. (Not so where
        # a type test said the other path holds no tensor: the `else` of `if isinstance(d, Tensor): d = d.cpu()`.)
        if other.kind is Kind.UNKNOWN and other.host_type != NOT_A_TENSOR.host_type:
            # (Where that other value lives, when known, still holds: `forward_batch.seq_lens_cpu` is on the host.)
            other_tensor = UNKNOWN_TENSOR.with_(device=other.device, guessed_cpu=other.guessed_cpu)
            return _join_tensors(tensor, other_tensor).with_(optional=True, beyond_none=True)
        return tensor if tensor.optional else tensor.with_(optional=True)
    if a.kind in _SEQUENCES and b.kind in _SEQUENCES:
        return _join_sequences(a, b)
    if {a.kind, b.kind} == {Kind.HOST, Kind.WRAPPER}:
        # `return None` on one path, `return q, k, qkv` on another: what is taken out of the value (unpacked,
        # indexed) comes from the container's path, so its elements stay known.
        return a if a.kind is Kind.WRAPPER else b
    if {a.kind, b.kind} == {Kind.INT, Kind.HOST}:
        return HOST
    if {a.kind, b.kind} == {Kind.UNKNOWN, Kind.HOST} and Device.CPU in (a.device, b.device) \
            and all(v.device is Device.CPU for v in (a, b) if v.kind is Kind.UNKNOWN):
        return Value(device=Device.CPU)  # `x.cpu() if cond else None`: on the host, or nothing
    if Kind.UNKNOWN in (a.kind, b.kind) and Device.UNKNOWN is a.device is b.device:
        # `fn = self.default_rope; if kind: fn = ROPE_FUNCTIONS[kind]`: the function known on one path is one
        # implementation of what the other path's registry holds.
        reference = b if a.kind is Kind.UNKNOWN else a
        if referenced_function(reference) is not None:
            return reference.with_(host_type=INTERFACE)
    if Kind.UNKNOWN in (a.kind, b.kind):
        known = b if a.kind is Kind.UNKNOWN else a
        # One path gives something that indexes by gathering: keep that (an advanced index on one path).
        return known if known.kind in (Kind.ARRAY, Kind.INT_LIST) else UNKNOWN
    return UNKNOWN


def unpacked_choice(value: Value, count: int) -> Value:
    """What unpacking `value` into `count` names takes, where it is what one of a choice of modules returns
    (`Value.choices`): the join of the tuples of that length, where some are (one that returns a tensor or a tuple of
    another length is not the one unpacked so); else `value` as it is. One of which nothing is known may be any."""
    fitting = [c for c in value.choices if c.kind is Kind.WRAPPER and c.wrapper == "tuple" and len(c.elements) == count]
    if not fitting or any(c.kind is Kind.UNKNOWN for c in value.choices):
        return value
    return join_all(fitting)


def join_all(values: Iterable[Value]) -> Value:
    result: Optional[Value] = None
    for value in values:
        result = value if result is None else join(result, value)
    return UNKNOWN if result is None else result


def _join_sequences(a: Value, b: Value) -> Value:
    kind = Kind.TENSOR_SEQUENCE if Kind.TENSOR_SEQUENCE in (a.kind, b.kind) else Kind.WRAPPER
    if a.kind is Kind.INT_LIST and b.kind is Kind.INT_LIST:
        return a
    if a.kind is Kind.WRAPPER and b.kind is Kind.WRAPPER and a.wrapper == b.wrapper and a.wrapper in ("tuple", None) \
            and len(a.elements) == len(b.elements) and a.elements:
        # Two tuples of the same length (`return x, n` on two paths): position by position.
        return Value(kind=Kind.WRAPPER, wrapper=a.wrapper, fields=a.fields if a.fields == b.fields else (),
                     elements=tuple(join(x, y) for x, y in zip(a.elements, b.elements)))
    if _keyed(a) and _keyed(b) and a.wrapper == b.wrapper and len(set(a.fields) | set(b.fields)) <= MAX_FIELDS:
        # Two dicts whose keys are known, one stored into under a key on one path only (`if flag: meta["zero"] = t`):
        # key by key; a key one path lacks holds, when it is there at all, what the other stored.
        held = dict(zip(a.fields, a.elements))
        for name, element in zip(b.fields, b.elements):
            held[name] = join(held[name], element) if name in held else element
        return Value(kind=Kind.WRAPPER, wrapper=a.wrapper, fields=tuple(held), elements=tuple(held.values()))
    for known, other in ((a, b), (b, a)):
        if known.fields and is_mapping(known) and other.kind is Kind.WRAPPER and not other.elements \
                and (other.wrapper is None or is_mapping(other) or other.wrapper == ATTRIBUTE_CONTAINER):
            # A mapping nothing is known of on one path (`meta = self.meta`), stored into by key on the other: as
            # pooling keeps the items only one path knows, the keys only one path knows.
            return known
    if is_mapping(a) != is_mapping(b):
        return Value(kind=Kind.WRAPPER)  # a dict on one path, a list on the other: nothing known of the items
    wrapper = a.wrapper if a.wrapper == b.wrapper else (a.wrapper or b.wrapper)
    if kind is Kind.WRAPPER and a.elements and b.elements and len(a.elements) != len(b.elements) \
            and _positional(a) and _positional(b):
        # A tuple of one length on one path, of another (or a `ModelOutput`) on the other: what the result holds is
        # known, not at which position (`out[1]` is any of it).
        wrapper = None
    result = Value(kind=kind, wrapper=wrapper, origin=a.origin if a.origin == b.origin else None)
    for element in (*a.elements, *b.elements):
        result = result.with_element(element)
    return result


def _positional(value: Value) -> bool:
    """A container whose items an integer index picks by position: a tuple, a dataclass or `ModelOutput` by field."""
    return value.kind is Kind.WRAPPER and (value.wrapper == "tuple" or bool(value.fields))


# The wrapper name of a `self.<container>` read before what it holds is known (see `Evaluator.contents`).
ATTRIBUTE_CONTAINER = "self container"
_MAPPINGS = frozenset({"dict", "ordereddict", "defaultdict", "counter"})


def _keyed(value: Value) -> bool:
    """A dict each of whose items is known by its key (`{"nbits": 4, "zero": z}`)."""
    return is_mapping(value) and bool(value.fields) and len(value.fields) == len(value.elements) and None not in value.fields


def is_mapping(value: Value) -> bool:
    """A dict (of any of its classes), as a container value says."""
    return value.kind is Kind.WRAPPER and value.wrapper in _MAPPINGS


def _join_tensors(a: Value, b: Value) -> Value:
    # A view on one path is a view: keep the view's base and origin (a partial one first).
    ranked = sorted((a, b), key=lambda v: (v.provenance is not Provenance.VIEW, not v.partial,
                                           not v.is_maybe_view_of_view))
    first = ranked[0]
    if Provenance.VIEW in (a.provenance, b.provenance):
        provenance = Provenance.VIEW
    elif a.is_maybe_view_of_view or b.is_maybe_view_of_view:
        provenance = Provenance.MAYBE_VIEW
    elif a.provenance is b.provenance:
        provenance = a.provenance
    else:
        provenance = Provenance.UNKNOWN
    if Device.ACCELERATOR in (a.device, b.device):
        device = Device.ACCELERATOR
    else:
        device = Device.CPU if a.device is Device.CPU and b.device is Device.CPU else Device.UNKNOWN
    if a.zero_dim is True and b.zero_dim is True:
        zero_dim: Optional[bool] = True
    elif a.zero_dim is False or b.zero_dim is False:
        zero_dim = False
    else:
        zero_dim = None
    viewish = provenance in (Provenance.VIEW, Provenance.MAYBE_VIEW)
    return Value(
        kind=Kind.TENSOR,
        provenance=provenance,
        base=first.base if viewish else None,
        origin=first.origin if viewish or a.origin == b.origin else None,
        ownership_op=first.ownership_op if provenance is Provenance.MAYBE_VIEW else None,
        base_made=first.base_made if viewish else None,
        partial=(a.partial or b.partial) if viewish else False,
        contiguous=a.contiguous if a.contiguous == b.contiguous else None,
        dtype=a.dtype if a.dtype == b.dtype else None,
        grad_leaf=a.grad_leaf or b.grad_leaf,
        device=device,
        zero_dim=zero_dim,
        reduced=a.reduced and b.reduced,
        bool_mask=a.bool_mask or b.bool_mask,
        index_like=a.index_like or b.index_like,
        is_parameter=a.is_parameter or b.is_parameter,
        copy_of=a.copy_of or b.copy_of,
        copy_op=a.copy_op if a.copy_of else b.copy_op,
        label=a.label if a.label == b.label else None,
        why=a.why or b.why,
        guessed_cpu=device is Device.CPU and (a.guessed_cpu or b.guessed_cpu),
        optional=a.optional or b.optional,
        may_be_none=a.may_be_none or b.may_be_none,
        some_view=a.some_view or b.some_view or (provenance is Provenance.VIEW and a.provenance is not b.provenance),
        rank=a.rank if a.rank == b.rank else None,
        min_rank=min(rank_floor(a), rank_floor(b)),
        has_base=a.has_base if a.has_base == b.has_base else None,
    )


# The former name of `join`, for callers outside the analysis.
merge = join
