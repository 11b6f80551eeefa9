"""Judge the probes' raw measurements: one :class:`Verdict` per finding, with readable evidence.

Runs in the viewlint process (never imports torch). The probe records are plain dicts of
counts and maxima, described in :mod:`viewlint.verify.probes`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Optional

from viewlint.diagnostics import Verdict
from viewlint.verify import COPIES, LOST_WRITE, RETENTION, SYNCS
from viewlint.verify.instrument import Site

CONFIRMED, REFUTED, NOT_REACHED, CPU_ONLY, ERROR = "confirmed", "refuted", "not reached", "cpu-only", "error"


def size(nbytes: int, unit_of: Optional[int] = None) -> str:
    """`8192000` -> "7.81 MiB"; the unit is chosen from ``unit_of`` (default: the value itself),
    so two sizes side by side share one unit ("7.81 MiB for a 0.78 MiB payload")."""
    reference = nbytes if unit_of is None else unit_of
    if unit_of is not None and nbytes < unit_of / 100:
        reference = nbytes  # "1.00 MiB for a 2.00 KiB payload", not "for a 0.00 MiB payload"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if reference >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _ratio(big: int, small: int) -> str:
    return f"{big / small:.1f}x" if small else "all overhead"


def _of(count: int, hits: int, noun: str = "calls") -> str:
    return f"{count}/{hits} {noun}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _device(record: dict[str, Any], fallback: Optional[str]) -> Optional[str]:
    devices = record.get("devices") or {}
    return Counter(devices).most_common(1)[0][0] if devices else fallback


def _types(record: dict[str, Any]) -> str:
    return ", ".join(sorted(record.get("types", {}))) or "no tensor"


def _retention(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    worst = record.get("worst")
    if worst is None:
        return REFUTED, f"the stored value held no tensor in {_of(hits, hits, 'stores')}"
    storage, payload = worst["storage"], worst["payload"]
    retaining = record.get("retaining", 0)
    where = f" in {_of(retaining, hits, 'stores')}" if hits > 1 else ""
    if retaining:
        return CONFIRMED, f"pins {size(storage)} for a {size(payload, storage)} payload ({_ratio(storage, payload)}){where}"
    return REFUTED, f"owns its storage: {size(storage)} pinned for a {size(payload, storage)} payload in {_of(hits, hits, 'stores')}"


def _charge(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    worst = record.get("worst")
    if worst is None:
        return REFUTED, f"`{site.labels.get('tensor', 'value')}` was not a tensor ({_types(record)})"
    storage, charged = worst["storage"], worst["payload"]
    under = record.get("undercharged", 0)
    if under:
        where = f" in {_of(under, hits)}" if hits > 1 else ""
        return CONFIRMED, f"charges {size(charged, storage)} for an entry pinning {size(storage)} ({_ratio(storage, charged)}){where}"
    return REFUTED, f"the charged size equals the storage ({size(storage)}) in {_of(hits, hits)}"


def _lost_write(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    base = site.labels.get("base", "buffer")
    copies = record.get("copies", [0])
    lost = copies[-1] if copies else 0
    known = hits - record.get("unknown", 0)
    if lost:
        where = f" ({_of(lost, hits)})" if hits > 1 else ""
        return CONFIRMED, f"write lost: result does not share storage with '{base}'{where}"
    if known <= 0:
        return ERROR, f"could not compare storages ({_types(record)})"
    return REFUTED, f"result shares storage with '{base}': the write lands ({_of(known, hits)})"


def _overlap(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    overlapping = record.get("overlapping", 0)
    if overlapping:
        detail = []
        if "zero_stride_dim" in record:
            detail.append(f"stride 0 in dim {record['zero_stride_dim']}")
        if record.get("max_repeat", 0) > 1:
            detail.append(f"each element written {record['max_repeat']}x")
        extra = f" ({'; '.join(detail)})" if detail else ""
        where = f" in {_of(overlapping, hits)}" if hits > 1 else ""
        return CONFIRMED, f"`{site.labels.get('temporary', 'target')}` overlaps itself{extra}{where}"
    if record.get("unknown", 0) == hits:
        return ERROR, "torch could not tell whether the target overlaps itself"
    return REFUTED, f"no internal overlap in {_of(hits, hits)}"


def _discarded(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    unchanged = record.get("unchanged", 0)
    lost = record.get("lost", 0)
    receiver = site.labels.get("receiver", "receiver")
    function = site.labels.get("function", "")
    untensored = record.get("untensored", 0)
    if function and untensored:
        # `random_weight(m.weight.size())`: given no tensor to change; what it returned is all it did.
        dropped = record.get("dropped", 0)
        if dropped == hits:
            return CONFIRMED, f"`{function}(…)` returned a new tensor, thrown away, in {_of(dropped, hits)}"
        return REFUTED, f"`{function}(…)` returned no tensor in {_of(hits - dropped, hits)}"
    compared = hits - record.get("unknown", 0) - untensored
    if compared <= 0:
        return ERROR, f"`{receiver}` was too large to snapshot"
    if unchanged == compared:
        if lost and not site.labels.get("method"):
            return CONFIRMED, (f"`{receiver}` unchanged; the value bound in its place and dropped differed in "
                               f"{_plural(record.get('max_lost_elements', 0), 'element')} ({_of(lost, hits)})")
        called = f"`{function}(…)`" if function else f"`.{site.labels.get('method', '')}(…)`"
        if lost:
            return CONFIRMED, (f"`{receiver}` unchanged after {called}; the discarded result "
                               f"differed in {_plural(record.get('max_lost_elements', 0), 'element')} ({_of(lost, hits)})")
        return CONFIRMED, f"`{receiver}` unchanged in {_of(unchanged, hits)} (the discarded result equalled it in this run)"
    return REFUTED, f"`{receiver}` changed in {_of(compared - unchanged, hits)}"


def _contiguous(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    already = record.get("already", 0)
    if "types" in record and not record.get("devices"):
        return REFUTED, f"the receiver was not a tensor ({_types(record)})"
    if already == hits:
        return CONFIRMED, f"input already contiguous in {_of(already, hits)}"
    copied = hits - already
    if site.labels.get("clone"):
        return CONFIRMED, (f"second copy: the clone was non-contiguous in {_of(copied, hits)}, so `.contiguous()` copied "
                           f"{size(record.get('max_copy_bytes', 0))} again")
    return REFUTED, f"input non-contiguous in {_of(copied, hits)}: `.contiguous()` copied {size(record.get('max_copy_bytes', 0))}"


def _avoidable(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    """VL306: the claim is that `.contiguous()` really copies (the uses taking strides are read from the code)."""
    hits = record["hits"]
    already = record.get("already", 0)
    if "types" in record and not record.get("devices"):
        return REFUTED, f"the receiver was not a tensor ({_types(record)})"
    copied = hits - already
    if not copied:
        return REFUTED, f"input already contiguous in {_of(already, hits)}: `.contiguous()` copied nothing"
    return CONFIRMED, f"`.contiguous()` copied {size(record.get('max_copy_bytes', 0))} per call in {_of(copied, hits)}"


def _copies(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    copies: list[int] = record.get("copies", [])
    largest: list[int] = record.get("max_bytes", [])
    base = site.labels.get("base", "input")
    if not copies:
        return REFUTED, f"no tensor reached the probe ({_types(record)})"
    code = site.diagnostic.code
    copied_calls = max(copies)
    if code in ("VL305", "VL308"):
        both = record.get("all_copied", 0)
        if both and len(copies) >= 2:
            steps = " then ".join(size(b) for b in largest)
            moved = (" (the factory's tensor measured on the host, where the program makes it)"
                     if record.get("rehosted") else "")
            return CONFIRMED, f"{len(copies)} copies per call: {steps} ({_of(both, hits)}){moved}"
        if code == "VL308":
            return REFUTED, f"only one copy in {_of(hits - both, hits)}: the conversion changed nothing"
        return REFUTED, f"only one conversion copied in {_of(hits - both, hits)}: the receiver was already converted"
    if not copied_calls:
        return REFUTED, f"no copy: the result shares storage with '{base}' in {_of(hits, hits)}"
    per_call = sum(largest)
    total = record.get("bytes_total", 0)
    if code == "VL303":  # one link per repeated tensor (key, value): count repeats, not calls
        largest_copy = max(largest) if largest else 0
        source = record.get("max_base_bytes", 0)
        origin = f" from {size(source, largest_copy)}" if source else ""
        return CONFIRMED, (f"the head repeat allocated {size(largest_copy)}{origin} per tensor, "
                           f"{_of(copied_calls, hits, 'repeats')} ({size(total)} in all)")
    if code == "VL309":
        return CONFIRMED, (f"each join copied the whole grown tensor, up to {size(per_call)}, {_of(copied_calls, hits, 'joins')} "
                           f"({size(total)} in all)")
    if code == "VL304":
        return CONFIRMED, f"copies the whole {size(per_call)} buffer per call, {_of(copied_calls, hits)} ({size(total)} in all)"
    return CONFIRMED, f"copies {size(per_call)} per call, {_of(copied_calls, hits)} ({size(total)} in all)"


def _construct(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    """VL307: the claim is that the data handed to `torch.tensor` was already a tensor, copied again."""
    hits = record["hits"]
    tensors = record.get("base_tensors", 0)
    data = site.labels.get("base", "data")
    if not tensors:
        kinds = ", ".join(sorted(record.get("base_types", {}))) or "nothing recorded"
        return REFUTED, f"`{data}` was not a tensor ({kinds}) in {_of(hits, hits)}"
    copied = max(record.get("copies", [0]) or [0])
    total = record.get("bytes_total", 0)
    largest = max(record.get("max_bytes", [0]) or [0])
    return CONFIRMED, (f"`{data}` was a tensor in {_of(tensors, hits)}; the call copied up to {size(largest)} per call, "
                       f"{_of(copied, hits)} ({size(total)} in all)")


def _round_trip(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    """VL314: the claim is that the moved value came from a tensor taken to the host (a new tensor after the detour),
    or from a NumPy array `torch.tensor` copies on the host first."""
    hits = record["hits"]
    data = site.labels.get("base", "value")
    kinds = ", ".join(sorted(record.get("base_types", {}))) or "nothing recorded"
    if not site.labels.get("trip"):
        arrays = record.get("base_types", {}).get("ndarray", 0)
        if not arrays:
            return REFUTED, f"`{data}` was not a NumPy array ({kinds}) in {_of(hits, hits)}"
        return CONFIRMED, f"`{data}` was a NumPy array in {_of(arrays, hits)}: `torch.tensor` copied it on the host first"
    tensors = record.get("base_tensors", 0)
    if not tensors:
        return REFUTED, f"`{data}` was not a tensor ({kinds}) in {_of(hits, hits)}"
    copied = max(record.get("copies", [0]) or [0])
    if not copied:
        return REFUTED, f"the moved value shares storage with `{data}` in {_of(hits, hits)}: no detour copied it"
    largest = max(record.get("max_bytes", [0]) or [0])
    on = ", ".join(sorted(record.get("devices", {}))) or "?"
    return CONFIRMED, (f"`{data}` went to the host and came back as a new {size(largest)} tensor on {on}, "
                       f"{_of(copied, hits)}")


def _snapshot(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    """VL105: the claim is that the kept `state_dict()` moved with the training that came after it."""
    hits = record["hits"]
    taken = record.get("snapshots", 0)
    if not taken:
        return REFUTED, f"`{site.labels.get('value', 'value')}` held no tensors ({_types(record)}) in {_of(hits, hits)}"
    moved = record.get("moved", 0)
    if not moved:
        return REFUTED, f"unchanged at the end of the run in {_of(taken, taken, 'snapshots')}: nothing updated it after"
    return CONFIRMED, (f"changed after it was taken: up to {record.get('max_moved_tensors', 0)} of "
                       f"{record.get('tensors', 0)} tensors moved with the live parameters, in {_of(moved, taken, 'snapshots')}")


def _sync(site: Site, record: dict[str, Any]) -> tuple[str, str]:
    hits = record["hits"]
    devices: dict[str, int] = record.get("devices", {})
    cuda = {name: count for name, count in devices.items() if name.startswith("cuda")}
    if cuda:
        name, count = Counter(cuda).most_common(1)[0]
        caught = record.get("sync_warnings", 0)
        extra = f"; sync debug mode caught {caught}" if caught else ""
        return CONFIRMED, f"synced {count} times on {name}{extra}"
    if devices:
        name = Counter(devices).most_common(1)[0][0]
        return CPU_ONLY, f"would sync on cuda; ran on {name}, {hits} hit{'s' if hits != 1 else ''}"
    return REFUTED, f"`{site.labels.get('value', 'value')}` was not a tensor ({_types(record)}) in {_of(hits, hits, 'hits')}"


JUDGES: dict[str, Callable[[Site, dict[str, Any]], tuple[str, str]]] = {
    **{code: _retention for code in RETENTION},
    "VL104": _charge,
    **{code: _lost_write for code in LOST_WRITE},
    "VL204": _overlap,
    "VL205": _discarded,
    "VL301": _contiguous,
    "VL306": _avoidable,
    **{code: _copies for code in COPIES},
    "VL307": _construct,
    "VL314": _round_trip,
    **{code: _sync for code in SYNCS},
    "VL105": _snapshot,
}


def judge(site: Site, record: Optional[dict[str, Any]], *, device: Optional[str], unreached: str) -> Verdict:
    """The verdict for one probed site; ``unreached`` explains a site that never ran."""
    if not record or not record.get("hits"):
        if record and record.get("probe_errors"):
            return Verdict(ERROR, f"the probe failed {record['probe_errors']} times", device, 0)
        status = ERROR if unreached.startswith("!") else NOT_REACHED
        return Verdict(status, unreached.lstrip("!"), device, 0)
    status, evidence = JUDGES[site.diagnostic.code](site, record)
    # A sync's device is the one its tensor lived on; otherwise the device the code ran with.
    where = _device(record, device) if site.diagnostic.code in SYNCS else (device or _device(record, None))
    return Verdict(status, evidence, where, int(record["hits"]))


def merge_records(into: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Combine two records of one site (from two processes of one `verify --run` command).

    ``max_*`` keep the largest value, ``worst`` the largest ``excess``, dicts are counters,
    lists add up position by position, numbers add up.
    """
    for key, value in other.items():
        if key not in into:
            into[key] = value
        elif key == "worst":
            if value["excess"] > into[key]["excess"]:
                into[key] = value
        elif isinstance(value, dict):
            for name, count in value.items():
                into[key][name] = into[key].get(name, 0) + count
        elif isinstance(value, list):
            pick = max if key.startswith("max_") else (lambda a, b: a + b)
            mine = into[key]
            into[key] = [pick(a, b) for a, b in zip(mine, value)] + mine[len(value):] + value[len(mine):]
        elif key.startswith("max_") or key == "zero_stride_dim":
            into[key] = max(into[key], value)
        else:
            into[key] += value
    return into
