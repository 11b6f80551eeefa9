"""Which receivers keep what is stored into them: the one reading of it, by name.

The walker asks it with what it knows of the function it is in (its class, its locals); the prefilter
asks it with nothing of the kind (any class's containers, no local shadows one), which makes its answer
a superset of the walker's: it never drops a segment where a store may outlive its function.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from viewlint.analysis import semantics as sem
from viewlint.analysis.module_index import ModuleIndex


def _never(name: str) -> bool:
    return False


def held_container(name: str, index: ModuleIndex, class_name: Optional[str] = None,
                   is_local: Callable[[str], bool] = _never) -> bool:
    """`self.<attr>` the class (`class_name`; any class of the module when None) keeps a container in, or a
    module-level container a local does not shadow."""
    if name.startswith("self.") and name.count(".") == 1:
        if class_name is None:
            return any(name[5:] in info.container_attributes for info in index.classes.values())
        info = index.classes.get(class_name)
        if info is not None and name[5:] in info.container_attributes:
            return True
    return "." not in name and name in index.module_containers and not is_local(name)


def _always(name: str) -> bool:
    return True


def receiver_name(node: object, method: str, dotted: Callable[[object], Optional[str]], subscript: type) -> Optional[str]:
    """The dotted name of a receiver; for a method only containers have, through the subscripts that pick one of the
    receiver's containers: `req.info` for `req.info[k].append(v)` (what it fills is held where `req.info` is), but
    not for `self.layers[k].update(x)`, a method of whatever object the container holds."""
    while method in sem.CONTAINER_ONLY_METHODS and isinstance(node, subscript):
        node = node.value  # type: ignore[attr-defined]
    return dotted(node)


def long_lived_receiver(name: str, method: str, index: ModuleIndex, long_lived_names: Sequence[str], *,
                        class_name: Optional[str] = None, is_local: Callable[[str], bool] = _never,
                        is_local_container: Callable[[str], bool] = _never,
                        is_caller_object: Callable[[str], bool] = _always) -> bool:
    """`name.method(value)` keeps `value` past the call's function: a container the class or module holds; any
    self-held or module-level receiver of a container-only method (`append`, `setdefault`); a container held in
    an attribute of an object the caller handed in (`req.customized_info[k].append(v[i])`: the caller keeps `req`;
    the walker says which names are such parameters, the prefilter takes any); a receiver named like a cache, pool,
    store or registry (also when passed in: the caller keeps it), unless it is a container built in this
    function."""
    if held_container(name, index, class_name, is_local):
        return True
    head, dot, _ = name.partition(".")
    if dot and method in sem.CONTAINER_ONLY_METHODS and head not in ("self", "cls") and is_caller_object(head):
        return True
    if name.startswith("self.") and name[5:] in index.drained_attributes:
        return False  # `self.group.append(x)` where a method takes the group and sets it back to None
    if method in sem.CONTAINER_ONLY_METHODS and (name.startswith("self.") or (name in index.module_names and not is_local(name))):
        return True
    last = name.split(".")[-1]
    if sem.looks_long_lived(last, long_lived_names):
        configured = any(last.lower() == extra.lower() for extra in long_lived_names)
        return configured or not is_local_container(name)
    return False
