"""The probe runtime: the functions instrumented code calls, and the only module that imports torch.

Every probe takes the site id and a value, records a measurement in :data:`RECORDS`, and returns
the value unchanged, so wrapping an expression changes nothing it computes. Records hold counts
and maxima only (never one entry per call), so a site hit a million times costs a few integers.
Record fields follow one merge convention (see :func:`viewlint.verify.verdicts.merge_records`): ``max_*`` keep the
largest value, ``worst`` keeps the measurement with the largest ``excess``, ``devices`` and
``types`` are counters, everything else is a sum.

A probe must never break the user's program: a measurement that fails is counted in
``probe_errors`` and the value goes through.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import torch

RECORDS: dict[int, dict[str, Any]] = {}
# site -> the last value of a chain (storage pointer, storage bytes, device, dtype), for the next `link`.
_BASES: dict[int, Optional[tuple[Optional[tuple[int, int]], str, str]]] = {}
# site -> a buffer read once before a loop whose every pass writes (`base(..., kept=True)`).
_KEPT: dict[int, Optional[tuple[Optional[tuple[int, int]], str, str]]] = {}
# site -> copies made so far in the current evaluation of a chain: [(copied, bytes)].
_CHAINS: dict[int, list[tuple[bool, int]]] = {}
# site -> (receiver, snapshot) pending between `before` and `after`.
_SNAPSHOTS: dict[int, list[tuple[Any, Any]]] = {}
# The sync site whose expression is running (set by `sync`, cleared by `sync_end`): sync-debug
# warnings raised meanwhile are counted for it.
_ARMED: list[int] = []
# VL105: per site, each kept snapshot's tensors with a copy of each as it was taken.
_TAKEN: dict[int, list[list[tuple[Any, Any]]]] = {}

# Walk at most this deep into containers and dataclasses, and at most this many tensors.
MAX_DEPTH = 4
MAX_TENSORS = 10_000
# Snapshots for VL205 are skipped above this many elements (they cost a copy each).
MAX_SNAPSHOT_NUMEL = 1 << 26
SYNC_WARNING = "synchroniz"  # torch's sync-debug warning: "called a synchronizing CUDA operation"


def _record(site: int) -> dict[str, Any]:
    record = RECORDS.get(site)
    if record is None:
        record = RECORDS[site] = {"hits": 0}
    return record


def _storage(tensor: torch.Tensor) -> Optional[tuple[int, int]]:
    """(data pointer, bytes) of the tensor's whole storage; None when it has none to compare."""
    try:
        storage = tensor.untyped_storage()
        nbytes = storage.nbytes()
        pointer = storage.data_ptr()
    except Exception:  # sparse, meta, functional or other storage-less tensors
        return None
    if nbytes == 0 or pointer == 0:
        return None
    return pointer, nbytes


def _payload(tensor: torch.Tensor, storage_bytes: int) -> int:
    # An expanded tensor's numel counts repeated elements: never charge more than the storage.
    return min(storage_bytes, tensor.numel() * tensor.element_size())


def _tensors(value: Any, depth: int = 0, seen: Optional[set[int]] = None) -> list[torch.Tensor]:
    """The tensors inside value: bare, in tuples, lists, sets, dicts, dataclasses and plain objects."""
    if seen is None:
        seen = set()
    if isinstance(value, torch.Tensor):
        return [value]
    if depth >= MAX_DEPTH or id(value) in seen or isinstance(value, (str, bytes, int, float, bool, type(None))):
        return []
    seen.add(id(value))
    children: list[Any]
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = list(value)
    elif hasattr(value, "__dataclass_fields__"):
        children = [getattr(value, name, None) for name in value.__dataclass_fields__]
    elif hasattr(value, "__dict__") and not isinstance(value, type) and not callable(value):
        children = list(vars(value).values())
    else:
        return []
    found: list[torch.Tensor] = []
    for child in children:
        found.extend(_tensors(child, depth + 1, seen))
        if len(found) >= MAX_TENSORS:
            break
    return found


def _device_of(value: Any) -> str:
    return str(value.device) if isinstance(value, torch.Tensor) else type(value).__name__


def _count(record: dict[str, Any], key: str, name: str) -> None:
    counter = record.setdefault(key, {})
    counter[name] = counter.get(name, 0) + 1


def _failed(site: int) -> None:
    record = _record(site)
    record["probe_errors"] = record.get("probe_errors", 0) + 1


# ---------------------------------------------------------------------------------------------- probes
def retain(site: int, value: Any) -> Any:
    """Storage bytes the stored value keeps alive against the bytes of its payload."""
    try:
        record = _record(site)
        record["hits"] += 1
        storages: dict[int, int] = {}
        payload = 0
        tensors = _tensors(value)
        for tensor in tensors:
            storage = _storage(tensor)
            if storage is None:
                continue
            storages[storage[0]] = storage[1]
            payload += _payload(tensor, storage[1])
        if not storages:
            record["no_tensor"] = record.get("no_tensor", 0) + 1
            return value
        total = sum(storages.values())
        payload = min(payload, total)  # pieces covering one storage twice do not pin more than it
        if total > payload:
            record["retaining"] = record.get("retaining", 0) + 1
        excess = total - payload
        worst = record.get("worst")
        if worst is None or excess > worst["excess"]:
            record["worst"] = {"excess": excess, "storage": total, "payload": payload, "tensors": len(tensors),
                               "device": str(tensors[0].device)}
        _count(record, "devices", str(tensors[0].device))
    except Exception:
        _failed(site)
    return value


def charge(site: int, value: Any) -> Any:
    """VL104: the size a budget charges (numel*element_size) against the storage it pins."""
    try:
        record = _record(site)
        record["hits"] += 1
        if not isinstance(value, torch.Tensor):
            _count(record, "types", type(value).__name__)
            return value
        storage = _storage(value)
        if storage is None:
            return value
        charged = value.numel() * value.element_size()
        if charged < storage[1]:
            record["undercharged"] = record.get("undercharged", 0) + 1
        excess = storage[1] - charged
        worst = record.get("worst")
        if worst is None or excess > worst["excess"]:
            record["worst"] = {"excess": excess, "storage": storage[1], "payload": charged, "device": str(value.device)}
        _count(record, "devices", str(value.device))
    except Exception:
        _failed(site)
    return value


def base(site: int, value: Any, kept: bool = False) -> Any:
    """Remember the storage of the buffer at the root of a chain; starts one evaluation. A ``kept``
    buffer (read once before a loop whose every pass writes) stays for the evaluations after."""
    try:
        _BASES[site] = _identity(value)
        if kept:
            _KEPT[site] = _BASES[site]
        else:
            _KEPT.pop(site, None)
        _CHAINS[site] = []
        record = _record(site)
        if isinstance(value, torch.Tensor):
            record["max_base_bytes"] = max(record.get("max_base_bytes", 0), value.numel() * value.element_size())
            record["base_tensors"] = record.get("base_tensors", 0) + 1
        else:
            _count(record, "base_types", type(value).__name__)
    except Exception:
        _failed(site)
    return value


def _default_device_type() -> str:
    """Where factories allocate: `torch.get_default_device()` (torch 2.3 on), or a tiny allocation before that."""
    getter = getattr(torch, "get_default_device", None)
    return getter().type if getter is not None else torch.empty(0).device.type


def _identity(value: Any) -> Optional[tuple[Optional[tuple[int, int]], str, str]]:
    if not isinstance(value, torch.Tensor):
        return None
    return _storage(value), str(value.device), str(value.dtype)


def link(site: int, value: Any, last: bool = True, host: bool = False) -> Any:
    """Does ``value`` share storage with the previous step of the chain (the buffer, or the last link)?

    The last link closes one evaluation: the record counts evaluations in which every link
    copied (``all_copied``), none did (``none_copied``), and per link position the copies and
    the largest bytes copied. A first link whose receiver was no tensor (a factory called on
    `torch`) starts the chain instead; with ``host`` its tensor goes to the host when only the
    forced default device (`--device cuda`) put it elsewhere.
    """
    try:
        record = _record(site)
        previous = _BASES.get(site)
        chain = _CHAINS.setdefault(site, [])
        if not isinstance(value, torch.Tensor):
            _count(record, "types", type(value).__name__)
            if last:
                record["hits"] += 1
            return value
        if previous is None and site in _BASES and not chain and not last:
            if host and value.device.type != "cpu" and _default_device_type() == value.device.type:
                value = value.cpu()
                record["rehosted"] = record.get("rehosted", 0) + 1
            _BASES[site] = _identity(value)
            return value
        identity = _identity(value)
        assert identity is not None
        storage = identity[0]
        if previous is not None and previous[1:] != identity[1:]:
            copied = True  # another device or dtype is always new memory (even on `meta`, which has no storage)
        elif previous is None or previous[0] is None or storage is None:
            record["unknown"] = record.get("unknown", 0) + 1
            copied = False
        else:
            copied = storage[0] != previous[0][0]
        nbytes = (storage[1] if storage is not None else value.numel() * value.element_size()) if copied else 0
        chain.append((copied, nbytes))
        _BASES[site] = identity
        _count(record, "devices", str(value.device))
        if last:
            record["hits"] += 1
            copies = record.setdefault("copies", [])
            largest = record.setdefault("max_bytes", [])
            for i, (was_copied, size) in enumerate(chain):
                while len(copies) <= i:
                    copies.append(0)
                    largest.append(0)
                copies[i] += int(was_copied)
                largest[i] = max(largest[i], size)
            record["bytes_total"] = record.get("bytes_total", 0) + sum(size for _, size in chain)
            if chain and all(was for was, _ in chain):
                record["all_copied"] = record.get("all_copied", 0) + 1
            if not any(was for was, _ in chain):
                record["none_copied"] = record.get("none_copied", 0) + 1
            _CHAINS[site] = []
            if site in _KEPT:
                _BASES[site] = _KEPT[site]
            else:
                _BASES.pop(site, None)
    except Exception:
        _failed(site)
    return value


def overlap(site: int, value: Any) -> Any:
    """VL204: does the target of an in-place write have elements that share memory?"""
    try:
        record = _record(site)
        record["hits"] += 1
        if not isinstance(value, torch.Tensor):
            _count(record, "types", type(value).__name__)
            return value
        state = int(torch._debug_has_internal_overlap(value))  # 0 no, 1 yes, 2 too hard to tell
        zero_strides = [d for d, (size, stride) in enumerate(zip(value.shape, value.stride())) if size > 1 and stride == 0]
        if state == 1 or zero_strides:
            record["overlapping"] = record.get("overlapping", 0) + 1
            record["max_repeat"] = max(record.get("max_repeat", 0), value.numel() // max(1, _distinct_elements(value)))
            if zero_strides:
                record["zero_stride_dim"] = zero_strides[0]
        elif state == 2:
            record["unknown"] = record.get("unknown", 0) + 1
        _count(record, "devices", str(value.device))
    except Exception:
        _failed(site)
    return value


def _distinct_elements(tensor: torch.Tensor) -> int:
    """Elements with their own memory: the product of the sizes of dims with a non-zero stride."""
    count = 1
    for size, stride in zip(tensor.shape, tensor.stride()):
        if stride != 0:
            count *= size
    return count


_NOT_A_TENSOR = object()  # what `before` keeps for a receiver that is no tensor


def before(site: int, value: Any) -> Any:
    """VL205: snapshot the receiver of an out-of-place call whose result is discarded."""
    try:
        snapshot: Any = None
        if not isinstance(value, torch.Tensor):
            snapshot = _NOT_A_TENSOR  # `random_weight(shape)`: given a size, not a tensor it could change
        elif value.numel() <= MAX_SNAPSHOT_NUMEL:
            snapshot = value.detach().clone()
        _SNAPSHOTS.setdefault(site, []).append((value, snapshot))
    except Exception:
        _failed(site)
    return value


def after(site: int, result: Any) -> Any:
    """VL205: was the receiver unchanged by the call, and would the result have changed it?"""
    try:
        record = _record(site)
        record["hits"] += 1
        pending = _SNAPSHOTS.get(site)
        if not pending:
            return result
        receiver, snapshot = pending.pop()
        if snapshot is _NOT_A_TENSOR:
            record["untensored"] = record.get("untensored", 0) + 1
            if isinstance(result, torch.Tensor):
                record["dropped"] = record.get("dropped", 0) + 1
            return result
        if snapshot is None:
            record["unknown"] = record.get("unknown", 0) + 1
            return result
        if _same(receiver, snapshot):
            record["unchanged"] = record.get("unchanged", 0) + 1
            if isinstance(result, torch.Tensor) and result.shape == snapshot.shape:
                differing = int((result.detach() != snapshot).sum())
                if differing:
                    record["lost"] = record.get("lost", 0) + 1
                    record["max_lost_elements"] = max(record.get("max_lost_elements", 0), differing)
        _count(record, "devices", str(receiver.device))
    except Exception:
        _failed(site)
    return result


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():  # a NaN that stayed a NaN is "unchanged"
        return bool(torch.isclose(a.detach(), b, rtol=0, atol=0, equal_nan=True).all())
    return bool(torch.equal(a.detach(), b))


def contiguous(site: int, value: Any) -> Any:
    """VL301: was the receiver of `.contiguous()` already contiguous?"""
    try:
        record = _record(site)
        record["hits"] += 1
        if not isinstance(value, torch.Tensor):
            _count(record, "types", type(value).__name__)
            return value
        if value.is_contiguous():
            record["already"] = record.get("already", 0) + 1
        else:
            record["max_copy_bytes"] = max(record.get("max_copy_bytes", 0), value.numel() * value.element_size())
        _count(record, "devices", str(value.device))
    except Exception:
        _failed(site)
    return value


def snapshot(site: int, value: Any) -> Any:
    """VL105: the tensors a kept `state_dict()` holds when it is taken, and a copy of each, compared at the end
    (`settle`): a snapshot that shares the live parameters moves with every optimizer step after it."""
    try:
        record = _record(site)
        record["hits"] += 1
        tensors = _tensors(value, depth=MAX_DEPTH - 1)
        if not tensors:
            _count(record, "types", type(value).__name__)
            return value
        _count(record, "devices", str(tensors[0].device))
        _TAKEN.setdefault(site, []).append([(t, t.detach().clone()) for t in tensors if t.numel() <= MAX_SNAPSHOT_NUMEL])
    except Exception:
        _failed(site)
    return value


def settle() -> None:
    """VL105: how many tensors of each kept snapshot changed after it was taken (at the end of the run)."""
    for site, taken in list(_TAKEN.items()):
        try:
            record = _record(site)
            for pairs in taken:
                moved = sum(1 for tensor, copy in pairs if not _same(tensor, copy))
                record["snapshots"] = record.get("snapshots", 0) + 1
                record["tensors"] = max(record.get("tensors", 0), len(pairs))
                if moved:
                    record["moved"] = record.get("moved", 0) + 1
                    record["max_moved_tensors"] = max(record.get("max_moved_tensors", 0), moved)
        except Exception:
            _failed(site)
    _TAKEN.clear()


def sync(site: int, value: Any) -> Any:
    """VL401-VL404: the device of the value the host waits for; arms sync-debug counting."""
    try:
        record = _record(site)
        record["hits"] += 1
        tensors = _tensors(value, depth=MAX_DEPTH - 1)
        if tensors:
            _count(record, "devices", str(tensors[0].device))
        else:
            _count(record, "types", type(value).__name__)
        _ARMED[:] = [site]
    except Exception:
        _failed(site)
    return value


def sync_end(site: int, result: Any) -> Any:
    """Disarm the site armed by :func:`sync` once the syncing expression has run."""
    if _ARMED and _ARMED[-1] == site:
        _ARMED.clear()
    return result


# ---------------------------------------------------------------------------------------------- cuda
def enable_sync_debug() -> None:
    """On CUDA: make torch warn at every synchronizing call and count the warnings per armed site."""
    torch.cuda.set_sync_debug_mode("warn")
    warnings.filterwarnings("always", message=".*synchroniz.*")
    original = warnings.showwarning

    def count_syncs(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        if SYNC_WARNING in str(message):
            if _ARMED:
                record = _record(_ARMED[-1])
                record["sync_warnings"] = record.get("sync_warnings", 0) + 1
            return  # swallowed: the verdict reports them
        original(message, category, filename, lineno, file, line)

    warnings.showwarning = count_syncs


def hide_from_compiler() -> None:
    """Keep `torch.compile` from tracing into the probes: each one becomes a graph break that runs eagerly.

    Called only for files that mention `compile` (it imports torch._dynamo, which is slow).
    """
    module = globals()
    for name in ("retain", "charge", "base", "link", "overlap", "before", "after", "contiguous", "sync", "sync_end"):
        function = module[name]
        if not getattr(function, "_viewlint_hidden", False):
            hidden = torch.compiler.disable(function)
            hidden._viewlint_hidden = True
            module[name] = hidden


def reset() -> None:
    """Forget everything (between runs in the same process, for tests)."""
    RECORDS.clear()
    _BASES.clear()
    _CHAINS.clear()
    _SNAPSHOTS.clear()
    _TAKEN.clear()
    _ARMED.clear()


def take(sites: list[int]) -> dict[int, dict[str, Any]]:
    """The records of ``sites`` (removed from the table: each file reports its own once)."""
    settle()
    return {site: RECORDS.pop(site) for site in sites if site in RECORDS}
