"""What an attribute of an object of a class of the project holds: `self.<attr>` in its class's methods, and
`obj.<attr>` of an object whose class is known (a submodule, a `ModuleList`'s item, a held object).

A part of `Evaluator` (`viewlint.analysis.evaluator`) in a file of its own only to keep each file readable: the
evaluator inherits it, and its methods read the evaluator's state through `self`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.constructed import class_reference, constructor_argument
from viewlint.analysis.module_index import ClassInfo, ModuleIndex
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.value_ops import ATTRIBUTE_CONTAINER, Environment, container_value, optimizer_attribute
from viewlint.analysis.values import UNKNOWN, UNKNOWN_TENSOR, Device, Kind, Value, fresh, function_reference


class AttributeReading:
    """`Evaluator`'s reading of attributes of the project's objects (a mixin: `Evaluator` is the only class that
    inherits it)."""

    env: Environment
    index: ModuleIndex

    if TYPE_CHECKING:  # the rest of `Evaluator`, which this part calls
        def _annotated(self, source: str) -> Value: ...

    def _instance_submodule(self, class_name: str, attr: str) -> Optional[Value]:
        """A submodule an instance of a class (of this module, or one imported) holds in `attr`: a `torch.nn` layer
        (an object whose calls give what that layer gives), a `ModuleList` of known classes, an instance of a class
        of this module; None when the class says nothing of it."""
        summaries = self.env.summaries
        info, defined_in = self.index.classes.get(class_name), self.index
        if info is None and summaries is not None and "|" not in class_name:
            found = summaries.class_and_index(class_name)
            if found is not None:
                info, defined_in = found
        if info is None:
            return None
        if attr in info.torch_module_attributes:
            return Value(kind=Kind.HOST, wrapper=info.torch_module_attributes[attr])
        if attr in info.module_list_classes:
            return container_value((Value(kind=Kind.HOST, wrapper=info.module_list_classes[attr]),), "list")
        made = self._instance_tensor(info, attr)
        if made is not None:
            return made
        held = info.attribute_classes.get(attr)
        if held is None:
            return None
        if defined_in is self.index:
            return Value(kind=Kind.HOST, wrapper=held)
        # A class of another module names the attribute's class as that module knows it (`DynamicCache` in
        # `cache_utils.py`): the name means the same class here where this module imports it from there.
        here = summaries.class_and_index(held) if summaries is not None else None
        if here is not None and here[0] is defined_in.classes.get(held):
            return Value(kind=Kind.HOST, wrapper=held)
        return None

    def _instance_tensor(self, info: Optional[ClassInfo], attr: str) -> Optional[Value]:
        """A tensor an object's class registers or makes in `attr` (`self.scheduler.timesteps` of a scheduler class
        whose `__init__` sets `self.timesteps = torch.from_numpy(...).float().to(device)`); None otherwise."""
        if info is None or not (attr in info.tensor_attributes or attr in info.made_tensors):
            return None
        device, row_major = info.made_tensors.get(attr, (Device.UNKNOWN, False))
        return fresh(contiguous=True if row_major else None, device=device, is_parameter=attr in info.tensor_attributes,
                     why=f"made by `{info.name}` (`self.{attr} = …`)")

    def _module_list_item(self, node: cst.Subscript) -> Optional[Value]:
        """`self.layer[0]`, `self.layer[-1]` of a `ModuleList` whose class puts a known class at that position."""
        name = dotted_name(node.value)
        info = self.index.classes.get(self.env.class_name or "")
        if info is None or name is None or not name.startswith("self.") or name[5:] not in info.module_list_order \
                or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        key = node.slice[0].slice.value
        negative = isinstance(key, cst.UnaryOperation) and isinstance(key.operator, cst.Minus)
        number = key.expression if negative else key  # type: ignore[attr-defined]
        if not isinstance(number, cst.Integer):
            return None
        position = int(number.evaluated_value)
        head, tail = info.module_list_order[name[5:]]
        if not negative and position < len(head):
            return Value(kind=Kind.HOST, wrapper=head[position])
        if negative and 0 < position <= len(tail):
            return Value(kind=Kind.HOST, wrapper=tail[-position])
        return None

    def _self_attribute(self, attr: str) -> Value:
        info = self.index.classes.get(self.env.class_name or "")
        if info is not None and attr not in info.assigned_attributes:
            # Assigned only by a base class here (a mixin's `self.lora_bias: dict[str, bool] = {}`): what it says.
            info = self._assigning_base(info, attr) or info
        if info is not None:
            if attr in info.methods and attr not in info.assigned_attributes and self.env.summaries is not None:
                owner = self.env.summaries.callgraph.defining_class(info.name, attr)
                if owner is not None:
                    return function_reference(owner, attr)  # `fn = self.default_rope`: the method itself
            if attr in info.tensor_attributes:  # nn.Parameter(...) or register_buffer: moved with the module
                rank = info.parameter_ranks.get(attr, -1)
                return UNKNOWN_TENSOR.with_(is_parameter=True, label=f"self.{attr}", why=f"registered by `{info.name}`",
                                            **({"rank": rank, "min_rank": rank, "zero_dim": rank == 0} if rank >= 0 else {}))
            if attr in info.made_tensors:
                # `self.seq_lens = torch.zeros(n, device="cuda")` wherever the class sets it: a tensor it owns, there.
                device, row_major = info.made_tensors[attr]
                risks = getattr(self.env, "layout_risks", None)  # a tensor restrided in place anywhere may be this one
                row_major = row_major and not (risks is not None and risks.restrides_in_place)
                return fresh(contiguous=True if row_major else None, device=device, label=f"self.{attr}",
                             why=f"made by `{info.name}` (`self.{attr} = torch.…`)")
            if attr in info.module_list_classes:
                # `self.layers = nn.ModuleList([Layer(...) for ...])`: a list of modules whose calls run `Layer.forward`.
                return container_value((Value(kind=Kind.HOST, wrapper=info.module_list_classes[attr]),), "list")
            if attr in info.submodule_attributes:
                return UNKNOWN  # `self.q_proj = nn.Linear(...)`
            if attr in info.host_attributes:
                # `self.mim_weight = config.mim_weight`: host data; if it ever is a tensor, a CPU one.
                return Value(device=Device.CPU)
            if attr in info.container_attributes:
                # What it holds is asked of the summaries only when an item is read (`self.queue.get()`).
                return Value(kind=Kind.WRAPPER, wrapper=ATTRIBUTE_CONTAINER, base=f"{info.name}.{attr}")
            held = self._held_object(info, attr)
            if held is not None:
                return held
            if attr in info.field_annotations and attr not in info.assigned_attributes:
                # Annotated in the class body and never assigned elsewhere (a config dataclass's
                # `feed_forward_proj: str = "relu"`): what the annotation says, before any guess from the name.
                annotated = self._annotated(info.field_annotations[attr])
                if annotated.kind is not Kind.UNKNOWN:
                    return annotated
        if info is not None and info.is_optimizer and attr not in info.assigned_attributes:
            known = optimizer_attribute(attr)
            if known is not None:
                return known
        passed = constructor_argument(self.env.summaries, info, attr) if info is not None else None
        if passed is not None:
            return passed  # `self.states = states` in `__init__`: what the constructor's callers pass
        reference = class_reference(self.env.summaries, info, attr) if info is not None else None
        if reference is not None:
            return reference  # `self.layer_class = layer_class` of `layer_class: type[CacheLayer] | None`
        # (`self.use_bias`, `self.has_bias`, `self.disable_merger_proj`: flags by their prefix, not tensors.)
        if (attr in ("weight", "bias") or attr.endswith(("_weight", "_bias", "_proj"))) and not attr.startswith(sem.FLAG_PREFIXES) \
                and not (info is not None and attr in info.number_attributes):
            return UNKNOWN_TENSOR.with_(is_parameter=True, label=f"self.{attr}")
        return UNKNOWN

    def _held_object(self, info: ClassInfo, attr: str) -> Optional[Value]:
        """`self.copyer = LimitBuffIndexCopyer(size)`: an object of a class of the project that is not a module (its
        `index_copy` is its own method, not a tensor's)."""
        held = info.attribute_classes.get(attr)
        summaries = self.env.summaries
        found = summaries.class_and_index(held) if held is not None and summaries is not None else None
        return Value(kind=Kind.HOST, wrapper=held) if found is not None and not found[0].is_module else None

    def _assigning_base(self, info: ClassInfo, attr: str, depth: int = 0) -> Optional[ClassInfo]:
        """The nearest base class whose methods assign `self.<attr>`: of this module, or, where it stores a host value
        there, imported from another module of the project (`self.ctc_weight`, a float `ESPnetASRModel.__init__`
        stores, read in a subclass)."""
        summaries = self.env.summaries
        for name in info.base_names:
            base = self.index.classes.get(name)
            if base is None and summaries is not None and depth == 0:
                # (Only what says it is no tensor: a tensor found there would be news to the prefilter, which reads
                # this module's classes, and the two must agree.)
                found = summaries.class_and_index(name)
                base = found[0] if found is not None else None
                if base is not None and attr in base.host_attributes:
                    return base
                continue
            if base is None or base is info or depth > 8:
                continue
            if attr in base.assigned_attributes:
                return base
            found = self._assigning_base(base, attr, depth + 1)
            if found is not None:
                return found
        return None

    def contents(self, value: Value) -> Value:
        """A container attribute of `self` (as `_self_attribute` gives it) with what its class puts in it."""
        if value.wrapper != ATTRIBUTE_CONTAINER or value.base is None:
            return value
        summaries = self.env.summaries
        if summaries is None or getattr(self.env, "shallow", False):
            return UNKNOWN
        owner, _, attr = value.base.partition(".")
        found = summaries.attribute_value(owner, attr)
        return found if found is not None else UNKNOWN
