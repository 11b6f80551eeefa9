"""What a call gives: torch functions, tensor methods, builtins, constructors, modules and this module's functions.

The calls part of `Evaluator` (`viewlint.analysis.evaluator`), a class of its own only to keep each
file readable: `Evaluator` inherits it, and its methods read the evaluator's state and the rest of
its methods (`evaluate`, `view_of`, `contents`, `iterate`, ...) through `self`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.annotations import annotation_value
from viewlint.analysis.config_paths import chosen_key
from viewlint.analysis.constructors import alternative_constructor, library_model_factory
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.repointed import flat_buffer, state_dict_value
from viewlint.analysis.torch_functions import TorchFunctionCalls
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.renaming import rebase
from viewlint.analysis.value_ops import (MODULE_OUTPUT, Environment, Locals, container_value, dropped_out, elementwise_device,
                                        local_call_key, local_parameters_key)
from viewlint.analysis.values import (ADVANCED_INDEX, CLASS_REFERENCE, EMPTY, HOST, WHOLE_COPY, INT, INTERFACE, UNKNOWN, UNKNOWN_TENSOR, Device,
                                      Kind, Provenance, Value, fresh, is_mapping, join, join_all, referenced_function, shape_of)


class CallEvaluation(TorchFunctionCalls):
    """`Evaluator`'s reading of calls (a mixin: `Evaluator` is the only class that inherits it)."""

    env: Environment
    index: ModuleIndex

    if TYPE_CHECKING:  # the rest of `Evaluator`, which this part calls
        def evaluate(self, node: cst.BaseExpression, local: Locals) -> Value: ...
        def contents(self, value: Value) -> Value: ...
        def iterate(self, node: cst.BaseExpression, local: Locals) -> Value: ...
        def qualify(self, node: cst.BaseExpression) -> Optional[str]: ...
        @staticmethod
        def source(node: cst.CSTNode) -> str: ...
        def short_source(self, node: cst.CSTNode, limit: int = 60) -> str: ...
        def view_of(self, base_node: cst.BaseExpression, base: Value, origin: str, partial: Optional[bool] = None) -> Value: ...

    def _locally_called(self, node: cst.Call, name: str, returned: Value, local: Locals) -> Value:
        """What a call of a function defined in the function being walked returns (`returned`, read where its walk
        ended). For one with parameters, only what does not hang on what a call passes is kept: what it returns of its
        parameters (a view of `value`, `value` itself) is that of what this call passes, on its device; a tensor it
        computes is not known (`def sigma_fn(t): return t.neg().exp()` is on the device of its argument)."""
        parameters = self.env.lookup(local_parameters_key(name))
        names = [f for f in parameters.fields if f] if parameters.wrapper == "parameters" else []
        if not names:
            return returned
        passed: list[tuple[str, cst.BaseExpression]] = []
        if not any(a.star for a in node.args):
            positional = [a for a in node.args if a.keyword is None]
            passed = [(names[i], a.value) for i, a in enumerate(positional) if i < len(names)]
            passed += [(a.keyword.value, a.value) for a in node.args if a.keyword is not None and a.keyword.value in names]
        given: dict[str, Value] = {}
        bases: dict[str, str] = {}
        for parameter, argument in passed:
            value = self.evaluate(argument, local)
            if value.kind is not Kind.TENSOR:
                continue
            given[parameter] = value
            if value.provenance in (Provenance.VIEW, Provenance.MAYBE_VIEW) and value.base is not None:
                bases[parameter] = value.base  # a view of a view of `x` is a view of `x`
            elif dotted_name(argument) is not None or value.label is not None:
                bases[parameter] = dotted_name(argument) or value.label  # type: ignore[assignment]

        def called(value: Value, depth: int = 3) -> Value:
            if value.kind is Kind.TENSOR:
                tied = value.base if value.base in names else value.label if value.label in names else None
                argument = given.get(tied) if tied is not None else None
                if argument is None:
                    return UNKNOWN
                return rebase(value.with_(device=argument.device, guessed_cpu=argument.guessed_cpu), bases)
            if value.is_container and depth > 0:
                return value.with_(elements=tuple(called(e, depth - 1) for e in value.elements))
            return value

        return called(returned)

    def _call(self, node: cst.Call, local: Locals) -> Value:
        func = node.func
        qualified = self.qualify(func)
        if (qualified or dotted_name(func)) in sem.PARAMETER_CONSTRUCTORS:
            # `nn.Parameter(t)`: a leaf that requires grad (unless `requires_grad=False`), t's storage.
            data = self.evaluate(node.args[0].value, local) if node.args else UNKNOWN
            off = self.keyword(node, "requires_grad")
            leaf = off is None or not (isinstance(off.value, cst.Name) and off.value.value == "False")
            return UNKNOWN_TENSOR.with_(device=data.device, dtype=data.dtype, grad_leaf=leaf, **shape_of(data), why="an `nn.Parameter`")
        if (qualified or dotted_name(func)) in sem.BUFFER_CONSTRUCTORS:
            data = self.evaluate(node.args[0].value, local) if node.args else UNKNOWN
            return UNKNOWN_TENSOR.with_(device=data.device, dtype=data.dtype, is_parameter=True, **shape_of(data), why="an `nn.Buffer`")
        if qualified is not None and (qualified.startswith("torch.") or qualified.startswith("numpy.")):
            return self._torch_function(node, qualified, local)
        if qualified is not None and qualified.startswith("math.") and qualified.count(".") == 1:
            # `math.log(10000) / (half_dim - 1)`: a Python number (`math.prod` of ints, an int).
            return INT if qualified[5:] in sem.MATH_INT_FUNCTIONS else HOST
        if qualified == "copy.deepcopy" and node.args:
            return self._deep_copy(node, self.evaluate(node.args[0].value, local))
        if qualified is not None and library_model_factory(qualified):
            # `torchvision.models.resnet18()`, `timm.create_model(name)`: a module, whose calls give tensors.
            return Value(kind=Kind.HOST, wrapper="torch.nn.Module", why=f"made by `{qualified}`")
        if (qualified or dotted_name(func) or "").split(".")[-1] in sem.CONTAINER_CLASS_NAMES:
            return Value(kind=Kind.WRAPPER, wrapper=(qualified or dotted_name(func) or "").split(".")[-1].lower())
        if sem.named_host_side(dotted_name(func) or ""):
            # `self._mask_cpu()`, `compute_lens_cpu(...)`: a function named for the CPU returns host tensors.
            result = self._call_result(node, func, qualified, local)
            return result.with_(device=Device.CPU) if result.kind in (Kind.TENSOR, Kind.UNKNOWN) else result
        return self._call_result(node, func, qualified, local)

    def _deep_copy(self, node: cst.Call, copied: Value) -> Value:
        """`copy.deepcopy(t)`: `Tensor.__deepcopy__` copies a view's whole storage and views its part of the copy
        (`copy.deepcopy(flat.chunk(4)[1])` pins a copy of all of `flat`); of a whole tensor, a copy as big."""
        if not copied.is_tensor:
            return UNKNOWN
        whole = fresh(contiguous=None, device=copied.device, dtype=copied.dtype, origin=WHOLE_COPY, why=copied.why)
        if (copied.is_view or copied.is_maybe_view_of_view) and copied.partial:
            return self.view_of(node, whole, ".__deepcopy__()", partial=True)
        return whole.with_(contiguous=copied.contiguous)

    def _call_result(self, node: cst.Call, func: cst.BaseExpression, qualified: Optional[str], local: Locals) -> Value:
        summaries = self.env.summaries
        narrowed = self._narrowed_submodule(func, local)
        if narrowed is not None:
            return self._object_call(node, narrowed, local)  # `self.norm1(x)` inside `if self.norm_type == ...:`
        built = self._built_by_reference(func, local)
        if built is not None:
            return built
        made = alternative_constructor(self.index, dotted_name(func)) if type(func) is cst.Attribute else None
        if made is not None:
            return Value(kind=Kind.HOST, wrapper=made)  # `Encoder.from_pretrained(name)`: as `Encoder(...)` makes
        if summaries is not None:
            result = summaries.call_value(node, self, local)
            if result is not None:
                return result
        if isinstance(func, cst.Attribute):
            if type(func.value) is cst.Call and dotted_name(func.value.func) == "super" and func.attr.value in ("forward", "__call__"):
                info = self.index.classes.get(self.env.class_name or "")
                if info is not None and info.layer_base is not None:
                    return self._object_call(node, info.layer_base, local)  # `super().forward(ids)` of an `nn.Embedding`
            held = self._chosen_attribute_classes(func) or self._torch_module_attribute(func) \
                or self._imported_attribute_class(func)
            if held is not None:
                return self._object_call(node, held, local)  # `self.proj(x)`, `self.proj = nn.Linear(...)`
            if isinstance(func.value, cst.Name) and func.value.value not in local:
                imported = self._imported_return(f"{func.value.value}.{func.attr.value}", node, local)
                if imported is not None:
                    return imported  # `utils.keep_last(h, n)`: a function of a module of the project imported whole
            # (Of a name only: a call chain's receiver is evaluated once, by `_method`.)
            receiver_name = dotted_name(func.value)
            held_module = self.evaluate(func, local) if receiver_name is not None and receiver_name != "self" \
                and not receiver_name.startswith("self.") else UNKNOWN
            if held_module.kind is Kind.HOST and held_module.wrapper is not None:
                return self._object_call(node, held_module.wrapper, local)  # `attn.to_q(x)`, a submodule of `attn: Attention`
            result = self._method(node, func, local)
            if result.kind is Kind.UNKNOWN and self._calls_a_module(func, local) \
                    and not func.attr.value.startswith(sem.PREDICATE_PREFIXES):
                return self._module_output(node, local, f"`{self.short_source(func)}(…)`")
            return result
        if isinstance(func, cst.Name):
            if func.value == "self" and self._self_is_a_model():
                return self._module_output(node, local, "`self(…)`", model=True)  # `outputs = self(**model_inputs)`
            held = local[func.value] if func.value in local else self.env.lookup(func.value)
            if func.value not in local and held is UNKNOWN:
                returned = self.env.lookup(local_call_key(func.value))
                if returned is not UNKNOWN:
                    # `loss = closure()` of a `def closure(): ... return loss` defined here; `row(h)` of a `def row(value):
                    # return value[i : i + 1]` defined here, a view of `h`.
                    return self._locally_called(node, func.value, returned, local)
            if held.kind is Kind.HOST and held.wrapper is not None:
                return self._object_call(node, held.wrapper, local)
            result = self._builtin_or_constructor(node, func.value, qualified, local)
            if result.kind is Kind.UNKNOWN and func.value not in local and held is UNKNOWN:
                imported = self._imported_return(func.value, node, local)
                if imported is not None:
                    return imported  # `keep_last(h, n)` imported from another module of the project
            if result.kind is Kind.UNKNOWN and func.value not in self.index.aliases and func.value not in sem.BUILTIN_NAMES \
                    and not func.value.startswith(sem.PREDICATE_PREFIXES) \
                    and (func.value in local or self.env.lookup(func.value) is not UNKNOWN or self._is_parameter_name(func.value)):
                return self._module_output(node, local, f"`{func.value}(…)`")  # a callable passed in: `f(x)`, `model(x)`
            return result
        held = self.evaluate(func, local)
        if held.kind is Kind.HOST and held.wrapper is not None:
            return self._object_call(node, held.wrapper, local)  # `self.resnets[0](x)`: an item of a `ModuleList`
        return UNKNOWN

    def _imported_return(self, reference: str, node: cst.Call, local: Locals) -> Optional[Value]:
        """What a function imported from another module of the project returns, by its return annotation: its
        tensors on the device of the tensors it is given (as a module's output is), unless it is told a `device=`."""
        summaries = self.env.summaries
        if summaries is None:
            return None
        return self._as_annotated(summaries.project.imported_return(self.index, reference), reference, node, local)

    def _as_annotated(self, value: Optional[Value], reference: str, node: cst.Call, local: Locals) -> Optional[Value]:
        """A call's result as the return annotation of what it calls says, read in another module of the project."""
        if value is None or not value.holds_tensor():
            return None  # `-> TensorType` (an alias of several array types), `-> int`: not claimed either way
        device = Device.UNKNOWN
        guessed = False
        if self.keyword(node, "device") is None:
            given = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
            device = elementwise_device(given)
            # On the CPU only because what it is given is guessed to be (`grid_thw`): so is what it returns.
            guessed = device is Device.CPU and all(v.guessed_cpu for v in given if v.is_tensor and v.cpu)
        # (What a walk of it there found says so itself: `elsewhere`.)
        why = value.why if (value.why or "").startswith("returned by") else f"returned by `{reference}(…)`, annotated so where it is defined"
        if value.is_tensor:
            return value.with_(why=why, device=device, guessed_cpu=guessed)
        return value.with_(elements=tuple(e.with_(why=e.why if (e.why or "").startswith("returned by") else why, device=device,
                                                  guessed_cpu=guessed)
                                          if e.is_tensor else e for e in value.elements))

    def _is_module_object(self, value: Value) -> bool:
        """An instance of a module class (`torch.nn.Linear(...)`, a module class of this file)."""
        if value.kind is not Kind.HOST or value.wrapper is None:
            return False
        info = self.index.classes.get(value.wrapper)
        return sem.nn_module_class(value.wrapper) or (info is not None and info.is_module)

    def _imported_attribute_class(self, func: cst.Attribute) -> Optional[str]:
        """The class of `self.<attr>` when the class assigns it an instance of a class imported from another module of
        the project (`self.c_fc = Conv1D(...)`)."""
        if not (isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        info = self.index.classes.get(self.env.class_name or "")
        held = info.attribute_classes.get(func.attr.value) if info is not None else None
        return held if held is not None and held not in self.index.classes else None

    def _built_by_reference(self, func: cst.BaseExpression, local: Locals) -> Optional[Value]:
        """`self.layer_class()` of an attribute that holds a class (`constructed.class_reference`): an object of it."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        info = self.index.classes.get(self.env.class_name or "")
        if info is None or func.attr.value not in info.constructor_parameters:
            return None
        held = self.evaluate(func, local)
        if held.kind is not Kind.HOST or held.host_type != CLASS_REFERENCE or not held.wrapper:
            return None
        return Value(kind=Kind.HOST, wrapper=held.wrapper, why=f"built by `{self.short_source(func)}()`")

    def _narrowed_submodule(self, func: cst.BaseExpression, local: Locals) -> Optional[str]:
        """The classes `self.<attr>` may be in this branch, where a test of the setting that chose its class narrowed it
        (`Narrowing._chosen_submodules`), `|`-separated; None elsewhere."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        info = self.index.classes.get(self.env.class_name or "")
        if info is None or func.attr.value not in info.attribute_guards:
            return None
        name = chosen_key(func.attr.value)
        held = local[name] if name in local else self.env.lookup(name)
        return held.wrapper if held.kind is Kind.HOST and held.wrapper else None

    def _chosen_attribute_classes(self, func: cst.Attribute) -> Optional[str]:
        """`self.norm1` assigned, by the branches of an `if` on the config, instances of classes some of which are
        imported from other modules of the project (and maybe `torch.nn` layers): all of them, `|`-separated (a call
        gives what any of them gives). A choice of this module's classes alone is the summaries' (`chosen_instances`)."""
        if not (isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        info = self.index.classes.get(self.env.class_name or "")
        choices = info.attribute_class_choices.get(func.attr.value, ()) if info is not None else ()
        if not choices or all(c in self.index.classes for c in choices):
            return None
        layers = info.torch_module_attributes.get(func.attr.value, "")  # type: ignore[union-attr]
        return "|".join([*choices, *(layers.split("|") if layers else ())])

    def _torch_module_attribute(self, func: cst.Attribute) -> Optional[str]:
        """The `torch.nn` class of `self.<attr>` when the class assigns it one (`self.proj = nn.Linear(...)`)."""
        if not (isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        return self.index.layer_class(self.env.class_name, func.attr.value)

    def _calls_a_module(self, func: cst.Attribute, local: Locals) -> bool:
        """`self.proj(x)`, `self.layers[i](x)`-like calls of something a module holds (not a method of its class)."""
        receiver = dotted_name(func.value)
        if receiver != "self":
            return False
        class_name = self.env.class_name
        summaries = self.env.summaries
        if summaries is not None and summaries.callgraph.defining_class(class_name, func.attr.value) is not None:
            return False
        info = self.index.classes.get(class_name or "")
        attr = func.attr.value
        if info is None or attr in info.host_attributes:
            return False
        # Held in an attribute the class assigns (`self.vae = vae`, `self.proj = nn.Linear(...)`); a name the
        # class never assigns is a method inherited from elsewhere, which may return anything, unless its name says
        # it is a model (`self.model(ids)` in a mixin whose subclasses set `self.model`).
        return attr in info.submodule_attributes or attr in info.assigned_attributes or sem.names_a_model(attr)

    def _is_parameter_name(self, name: str) -> bool:
        checker = getattr(self.env, "is_parameter", None)
        return bool(checker and checker(name))

    def _annotated(self, source: str) -> Value:
        """What an annotation written as `source` says a value is."""
        try:
            return annotation_value(cst.parse_expression(source), self.index)
        except Exception:  # noqa: BLE001 - an annotation libcst cannot read back
            return UNKNOWN

    def _self_is_a_model(self) -> bool:
        """`self(...)` in a module class, a base of one here, or a `*Mixin` (`GenerationMixin.generate`): the model."""
        class_name = self.env.class_name or ""
        info = self.index.classes.get(class_name)
        return info is not None and (info.is_module or info.mixed_into_module or class_name.endswith("Mixin"))

    def _module_output(self, node: cst.Call, local: Locals, what: str, model: bool = False) -> Value:
        """What a module (or another callable) applied to tensors returns: a new tensor (or a tuple of
        them) on their device. Called without a tensor, nothing is known, unless it is a model (by its name, or
        ``model``): then a tensor or a tuple of them."""
        inputs = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
        tensors = [v for v in inputs if v.is_tensor]
        if tensors:
            if len(inputs) == 1 and sem.names_an_activation((dotted_name(node.func) or "").rsplit(".", 1)[-1]):
                # `self.act_fn(x)` of `ACT2FN[config.hidden_act]`: an elementwise function, `x`'s shape and layout.
                return fresh(contiguous=True if tensors[0].contiguous else None, device=tensors[0].device,
                             why=f"returned by {what}", **shape_of(tensors[0]))
            # A new tensor for the rules (a module of unknown kind is not taken to hand back its input), which may all
            # the same view storage it made (`x.view(size_out)` of a product): `_base` is not known.
            return fresh(contiguous=None, device=elementwise_device(tensors), origin=MODULE_OUTPUT, why=f"returned by {what}",
                         has_base=None)
        if model or sem.names_a_model(dotted_name(node.func) or ""):
            # `model(batch)`: a model by its name (as for hot paths), whatever it is given: a tensor or a tuple of them.
            output = fresh(contiguous=None, origin=MODULE_OUTPUT, why=f"returned by {what}, a model{'' if model else ' by its name'}", has_base=None)
            return join(output, Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(output,))).with_(origin=MODULE_OUTPUT)
        return UNKNOWN

    def _object_call(self, node: cst.Call, class_name: str, local: Locals) -> Value:
        """A call of an object whose class is known but whose `forward` this module does not define: a
        `torch.nn` layer gives a new tensor on its input's device (a tuple for recurrent layers and attention,
        its input itself for `Identity`/`Dropout`); a module of unknown kind gives a tensor or a tuple of them."""
        summaries = self.env.summaries
        if "|" not in class_name and summaries is not None:
            walked = summaries.instance_call_value(node, class_name, self, local)  # a class of this module: its `forward`
            if walked is not None:
                return walked
        if "|" in class_name:
            # One of several module classes (`for resnet in self.resnets`, a `ModuleList` of two kinds): any's result.
            results = [self._object_call(node, part, local) for part in class_name.split("|")]
            joined = join_all(results)
            shapes = {(r.kind, r.wrapper, len(r.elements)) if r.kind is Kind.WRAPPER else (r.kind, None, 0) for r in results}
            if len(shapes) > 1:
                # A tensor from one, a 5-tuple from another: either (and what each gives, for an unpacking to pick).
                joined = joined.with_(choices=tuple(results))
            if len({r.kind for r in results}) > 1 and joined.kind is not Kind.TENSOR:
                return joined.with_(origin=MODULE_OUTPUT)
            return joined
        module = self.index.classes.get(class_name)
        torch_layer = sem.nn_module_class(class_name)
        if module is None and not torch_layer and self.env.summaries is not None:
            module = self.env.summaries.class_named(class_name)  # a class imported from another module of the project
        # Its `forward` (imported, or too long to summarise), or another object's `__call__` (a `LogitsProcessorList`),
        # is annotated to return a tensor.
        annotated = module is not None and module.call_returns is not None and self._annotated(module.call_returns).is_tensor
        if module is not None and not annotated and class_name not in self.index.classes \
                and self.env.summaries is not None:
            # A class another module of the project defines, whose `forward` no annotation describes as a tensor
            # (`Conv1D`, or `-> tuple[torch.Tensor, ...]`): what one walk of it there finds.
            walked = self._as_annotated(self.env.summaries.project.imported_call_return(self.index, class_name),
                                        f"{class_name}.forward", node, local)
            if walked is not None:
                return walked
        if not torch_layer and not (module is not None and module.is_module) and not annotated:
            return UNKNOWN  # an object of another class: its `__call__` is its own business
        inputs = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
        tensors = [v for v in inputs if v.is_tensor]
        device = elementwise_device(tensors) if tensors else Device.UNKNOWN
        last = class_name.split(".")[-1]
        why = f"returned by `{last}` module" if torch_layer or (module is not None and module.is_module) \
            else f"returned by `{last}.__call__`, annotated so"
        laid_out = torch_layer and (last in sem.NN_CONTIGUOUS_OUTPUT_MODULES or (
            last in sem.NN_ELEMENTWISE_MODULES and bool(tensors) and tensors[0].contiguous is True))
        # A `torch.nn` layer's own output; a linear layer's `_base` is set or not by its input and bias (`ranks`
        # decides where it can); another module's may view storage its `forward` made.
        output = fresh(contiguous=True if laid_out else None, device=device, origin=MODULE_OUTPUT, why=why,
                       has_base=False if torch_layer and last not in sem.NN_RESHAPING_MODULES and last != "Linear"
                       and last not in sem.NN_TUPLE_MODULES and last not in sem.BASE_SETTING_OPS else None)
        if annotated:
            return output
        if not torch_layer or last in ("Module", "Sequential"):
            return join(output, Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(output,))).with_(origin=MODULE_OUTPUT)
        if last in sem.NN_TUPLE_MODULES:
            return Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(output,))
        if last in sem.NN_IDENTITY_MODULES:
            # Its input itself (a tensor on every path it runs on: it fails on `None`); a dropout only in eval mode,
            # a new tensor while training: never the parameter it may be given.
            if not (inputs and inputs[0].is_tensor):
                return UNKNOWN_TENSOR.with_(why=why)
            given = inputs[0].with_(optional=False, may_be_none=False)
            return given if last == "Identity" else dropped_out(given, output)
        return output

    def _builtin_or_constructor(self, node: cst.Call, name: str, qualified: Optional[str], local: Locals) -> Value:
        if name in ("max", "min", "sum", "abs", "round"):
            # Over tensors (`max(grid[1], grid[2])`) the result is a 0-dim tensor; over ints an int.
            args = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
            tensors = [a for a in args if a.is_tensor]
            if tensors and name != "round":
                return fresh(zero_dim=True, reduced=True, device=elementwise_device(tensors), why=tensors[0].why)
            if name in ("sum", "max", "min") and len(args) == 1 and len(node.args) == 1 and args[0].kind is not Kind.INT_LIST:
                item = self.iterate(node.args[0].value, local)
                if item.is_tensor and not item.optional:
                    # `sum(F.mse_loss(q, target) for q in qs)`: `0 + l0 + l1 + ...`, a tensor shaped as the items;
                    # `max(losses)`: one of the items.
                    return item if name != "sum" else fresh(zero_dim=item.zero_dim, reduced=item.reduced, device=item.device,
                                                            rank=item.rank, why=item.why)
            return INT
        if name in ("len", "int", "range", "ord", "hash"):
            return INT if name != "range" else HOST
        if name in ("float", "bool", "str", "repr", "isinstance", "print", "id", "callable", "hasattr", "slice"):
            return HOST
        if name in ("dict", "OrderedDict"):
            return self._dict_call(node, name, local)
        if name in ("list", "tuple", "set", "deque", "sorted", "reversed"):
            elements = tuple(self.evaluate(a.value, local) for a in node.args if a.keyword is None)
            if name in ("list", "tuple", "sorted", "reversed", "deque") and len(elements) == 1 and elements[0].kind in (
                    Kind.TENSOR_SEQUENCE, Kind.WRAPPER, Kind.INT_LIST):
                if name in ("list", "tuple", "sorted") and elements[0].kind is Kind.WRAPPER \
                        and elements[0].wrapper in ("list", "tuple", "iterator"):
                    # `tuple(slice(0, s) for s in shape)`: a tuple (an index of several dimensions), not a list.
                    return elements[0].with_(wrapper="list" if name == "sorted" else name)
                return elements[0]
            if name in ("list", "tuple") and len(elements) == 1 and elements[0].is_tensor:
                # `list(t)`: its rows, as `t.unbind()` gives them, together all of `t`.
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(self.iterate(node.args[0].value, local),), origin=".unbind",
                             whole_partition=True)
            return container_value(elements, name)
        if name in ("zip", "enumerate") and node.args and all(a.keyword is None and not a.star for a in node.args):
            return container_value((self.iterate(node, local),), "iterator")  # `list(zip(a, b))`: pairs of their items
        if name == "next" and node.args:
            return self.iterate(node.args[0].value, local)
        if name == "iter" and node.args:
            return container_value((self.iterate(node.args[0].value, local),), "iterator")
        if name == "getattr" and len(node.args) >= 2:
            return UNKNOWN
        if name == "replace" or qualified in ("dataclasses.replace", "copy.copy"):
            return self._wrapper(node, name, local)
        cls = self.index.classes.get(name)
        if cls is not None and cls.is_module:
            return Value(kind=Kind.HOST, wrapper=name)  # a module of this file: an object whose calls run `forward`
        if (cls is not None and not cls.is_module) or (cls is None and name[:1].isupper() and name not in self.index.aliases):
            return self._wrapper(node, name, local)
        if cls is None and name[:1].isupper():
            target = self.index.aliases.get(name, "")
            if not target.startswith("torch"):
                return self._wrapper(node, name, local)
        return UNKNOWN

    def _wrapper(self, node: cst.Call, name: str, local: Locals) -> Value:
        """An object built from values (`Entry(embedding=piece)`): it holds them, by field name where known."""
        info = self.index.classes.get(name)
        order = info.fields if info is not None else []
        elements = tuple(self.evaluate(a.value, local) for a in node.args)
        fields: list[Optional[str]] = []
        position = 0
        for arg in node.args:
            if arg.keyword is not None:
                fields.append(arg.keyword.value)
            elif not arg.star and position < len(order):
                fields.append(order[position])
                position += 1
            else:
                fields.append(None)
        named = tuple(fields) if any(f is not None for f in fields) else ()
        return Value(kind=Kind.WRAPPER, elements=elements, wrapper=name, fields=named)

    def _dict_call(self, node: cst.Call, name: str, local: Locals) -> Value:
        """`dict(other)` copies a mapping: its values are `other`'s (`td = dict(td)` of a batch dict still holds its
        tensors, whatever they are); `dict(pairs)` holds the pairs' second items; `dict(a=x)` holds `x`."""
        values: list[Value] = []
        for argument in node.args:
            if argument.star:
                values.append(UNKNOWN)  # `dict(**kw)`, `dict(*pairs)`
                continue
            value = self.evaluate(argument.value, local)
            if argument.keyword is not None:
                values.append(value)
            elif value.kind is Kind.WRAPPER and value.wrapper in ("dict", "ordereddict", "defaultdict", "counter", "OrderedDict"):
                if not value.elements:
                    return value.with_(wrapper="dict")  # a bare `dict` (`td: dict`): nothing known of its values
                values.extend(value.elements)
            else:
                pair = value.element() if value.kind is Kind.WRAPPER else UNKNOWN
                if pair.kind is Kind.WRAPPER and pair.wrapper == "tuple" and len(pair.elements) == 2:
                    values.append(pair.elements[1])  # `dict(zip(names, tensors))`, `dict(d.items())`
                else:
                    values.append(UNKNOWN)
        return container_value(tuple(values), "dict" if name == "dict" else "ordereddict")

    def maybe_view(self, receiver: Value, op: str, device: Device, source: Optional[cst.BaseExpression] = None) -> Value:
        """The result of a conversion that returns its input when it can (`reshape`, `contiguous`, `to`,
        casts); `source` is the converted expression (a name: writes into a copy never reach it)."""
        name = _op_name(op)
        if name in sem.RESHAPE_METHODS and receiver.is_fresh and receiver.contiguous and source is not None \
                and receiver.device is device:
            # A reshape of contiguous memory is a view of it, contiguous too (`x.reshape(b, -1)` of an `addmm` result).
            return self.view_of(source, receiver, op).with_(contiguous=True)
        result = self._maybe_view(receiver, op, device)
        if result.kind is Kind.TENSOR and receiver.copy_of is None and source is not None and self._may_copy(receiver, op, device):
            name = dotted_name(source)
            if name is not None:
                result = result.with_(copy_of=receiver.label or name, copy_op=op)
        elif receiver.copy_of is not None and result.kind is Kind.TENSOR:
            result = result.with_(copy_of=receiver.copy_of, copy_op=receiver.copy_op)
        return result

    @staticmethod
    def _may_copy(receiver: Value, op: str, device: Device) -> bool:
        """Whether `op` may return a copy of `receiver` (a reshape of contiguous memory never does)."""
        name = _op_name(op)
        if name in sem.LAYOUT_ONLY_COPY_METHODS:
            return not receiver.contiguous
        if name == "cpu":
            return not receiver.cpu
        return name in sem.MAYBE_COPY_METHODS

    @staticmethod
    def _kept_base(receiver: Value, name: str) -> Optional[bool]:
        """Whether a conversion of a tensor that owns its storage returns one with `_base` set: a reshape of
        memory of unknown layout may view it (a reshape of contiguous memory always does); one that returns its
        input when it can (`.contiguous()`, a cast, a move) gives the input's own or a copy, whose is unset."""
        if name in sem.RESHAPE_LIKE_METHODS:
            return None
        if name == "contiguous" and receiver.contiguous is not None:
            return receiver.has_base if receiver.contiguous else False
        return False if receiver.has_base is False else None

    def _maybe_view(self, receiver: Value, op: str, device: Device) -> Value:
        name = _op_name(op)
        if receiver.is_view or receiver.is_maybe_view_of_view:
            if receiver.contiguous is False and name == "contiguous":
                # `.contiguous()` of a known non-contiguous view always copies: the result owns its storage.
                return fresh(contiguous=True, device=device)
            # A cast that returned its input is the same strided view, one that copied owns its storage: either way a
            # later `.contiguous()` gives an owned tensor.
            converts = name in sem.DTYPE_CAST_METHODS | sem.DEVICE_MOVE_METHODS | {"to", "type", "type_as"}
            still_strided = receiver.contiguous is False and converts
            return Value(kind=Kind.TENSOR, provenance=Provenance.MAYBE_VIEW, base=receiver.base, base_made=receiver.base_made,
                         origin=receiver.origin, ownership_op=receiver.ownership_op or op, device=device,
                         zero_dim=receiver.zero_dim if converts or name == "contiguous" else None,
                         is_parameter=receiver.is_parameter, partial=receiver.partial, why=receiver.why,
                         contiguous=True if "contiguous" in op else (False if still_strided else None))
        if receiver.is_fresh:
            # On a tensor that owns its storage, "maybe the same storage" still owns it.
            return fresh(contiguous=True if "contiguous" in op else receiver.contiguous, device=device,
                         zero_dim=receiver.zero_dim, bool_mask=receiver.bool_mask, index_like=receiver.index_like,
                         reduced=receiver.reduced, why=receiver.why, origin=receiver.origin,
                         has_base=self._kept_base(receiver, name))
        return Value(kind=Kind.TENSOR, provenance=Provenance.UNKNOWN, device=device,
                     contiguous=True if "contiguous" in op else None, is_parameter=receiver.is_parameter,
                     zero_dim=receiver.zero_dim, reduced=receiver.reduced, bool_mask=receiver.bool_mask,
                     index_like=receiver.index_like, why=receiver.why)

    def _method(self, node: cst.Call, func: cst.Attribute, local: Locals) -> Value:
        method = func.attr.value
        receiver_node = func.value
        if method == "from_pretrained" and sem.pretrained_model_class(dotted_name(receiver_node) or ""):
            # `AutoModel.from_pretrained(...)`: a module (its call gives a tensor or a tuple of them).
            return Value(kind=Kind.HOST, wrapper="torch.nn.Module", why=f"loaded by `{dotted_name(receiver_node)}.from_pretrained`")
        if method == "state_dict" and not node.args and (sem.names_a_model(dotted_name(receiver_node) or "")
                                                          or self._is_module_object(self.evaluate(receiver_node, local))):
            # `model.state_dict()`: the module's parameters and buffers by name (an optimizer's holds dicts instead).
            return Value(kind=Kind.WRAPPER, wrapper="dict", elements=(UNKNOWN_TENSOR.with_(is_parameter=True, why="in a module's `state_dict()`"),))
        if method in ("get", "get_interface") and len(node.args) == 2:
            # `ATTENTION_FUNCTIONS.get_interface(kind, eager_forward)`: a registry's function, or the module's
            # own default, one implementation of what the registry holds.
            default = self.evaluate(node.args[1].value, local)
            if referenced_function(default) is not None:
                return default.with_(host_type=INTERFACE)
        # Calls on module names (`np.foo`, `os.path.join`) are not tensor methods.
        receiver = self.evaluate(receiver_node, local)
        if method in sem.MODULE_SELF_METHODS and self._is_module_object(receiver):
            return receiver  # `Extractor().eval()`, `net.to(device)`: the module itself, whatever it is moved to
        if receiver.kind is Kind.ARRAY:
            # `arr.reshape(...)`, `arr.max()`: NumPy, on the host (`.tolist()`/`.item()` give Python values).
            return HOST if method in ("tolist", "item") else Value(kind=Kind.ARRAY)
        if isinstance(receiver_node, cst.Name) and receiver_node.value in self.index.aliases and not receiver.is_tensor:
            return UNKNOWN
        if receiver.kind is Kind.WRAPPER and receiver.origin == MODULE_OUTPUT and receiver.optional \
                and (method in sem.TENSOR_USAGE_METHODS or method in sem.ARRAY_METHODS) and receiver.element().is_tensor:
            # `model(batch).mean()` of a model that gives a tensor or a tuple of them: no tuple has `.mean()`.
            receiver = receiver.element().with_(optional=False)
        if receiver.kind is Kind.WRAPPER:
            return self._container_method(node, method, receiver, local)
        if receiver.kind is Kind.HOST and receiver.wrapper is not None and receiver.wrapper not in self.index.classes \
                and self.env.summaries is not None:
            # `past_key_values.update(k, v, i)` of `past_key_values: Cache`, a class another module of the project defines.
            # One of several classes (`Cache|DynamicCache`): what each of them says, where every one says it.
            project = self.env.summaries.project
            said = [project.imported_method_return(self.index, part, method) for part in receiver.wrapper.split("|")]
            imported = self._as_annotated(join_all(said) if all(v is not None for v in said) else None,  # type: ignore[arg-type]
                                          f"{receiver.wrapper.split('|')[0]}.{method}", node, local)
            if imported is not None:
                return imported
        if receiver.kind is Kind.HOST and (receiver.wrapper or "").startswith("torch.distributions.") \
                and method in ("sample", "rsample", "sample_n", "log_prob", "entropy", "cdf", "icdf"):
            return fresh(device=receiver.device)  # a distribution's sample, where its parameters live
        if receiver.kind is Kind.TENSOR_SEQUENCE and method in ("index", "count"):
            return INT
        tensor = receiver.is_tensor
        module = receiver.kind is Kind.UNKNOWN or self._is_module_object(receiver)
        if not tensor and module and method in ("parameters", "buffers"):
            # `model.parameters()`: the module's parameters.
            return container_value((UNKNOWN_TENSOR.with_(is_parameter=True, why=f"from `.{method}()`"),), "iterator")
        if not tensor and module and method in ("named_parameters", "named_buffers"):
            item = container_value((HOST, UNKNOWN_TENSOR.with_(is_parameter=True, why=f"from `.{method}()`")), "tuple")
            return container_value((item,), "iterator")
        if method in sem.SEQUENCE_VIEW_METHODS:
            if tensor or method not in sem.AMBIGUOUS_SEQUENCE_METHODS or self._tensor_split_arguments(node):
                element = self.view_of(receiver_node, receiver if tensor else UNKNOWN_TENSOR, "." + method + "()")
                if self.split_across(node, 1 if method != "unbind" else 0):
                    element = element.with_(contiguous=False)
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(element,), origin="." + method, whole_partition=True)
            return UNKNOWN
        if method in sem.VIEW_METHODS:
            if method == "view" and node.args and self.is_dtype_argument(node.args[0].value):
                return self.view_of(receiver_node, receiver, ".view(dtype)")
            if tensor or method not in sem.AMBIGUOUS_VIEW_METHODS:
                if method == "t" and node.args:
                    return UNKNOWN
                view = self.view_of(receiver_node, receiver if tensor else UNKNOWN_TENSOR, "." + method + "()")
                if method == "detach" and receiver.is_fresh:
                    # `.detach()` shares storage, but of a tensor that owns it: keep what is known of it.
                    return receiver.with_(provenance=Provenance.FRESH)
                return view
            return UNKNOWN
        if method in sem.MAYBE_VIEW_METHODS and receiver.kind is Kind.HOST and receiver.wrapper is not None \
                and not self._is_module_object(receiver):
            # `spec.contiguous()`, `batch.to(device)` of a `TensorDictBase`: that class's own method, not a tensor's.
            return receiver if method == "contiguous" else UNKNOWN.with_(device=self._moved_device(node, method, receiver, local))
        if tensor and method in sem.CAST_METHOD_DTYPES and receiver.dtype and self._converted_dtype(node, method, receiver, local) == receiver.dtype:
            return receiver  # `.float()` of a float32 tensor: the tensor itself
        if method in sem.MAYBE_VIEW_METHODS:  # `.to(torch.int32)`, `.to(device=...)`: only tensors take a dtype or a device
            takes_tensor_arguments = method in ("to", "type") and any(
                self.is_dtype_argument(a.value) or (a.keyword is not None and a.keyword.value in ("dtype", "device"))
                for a in node.args)
            evidence = tensor or method not in sem.MAYBE_VIEW_METHODS_NEED_TENSOR \
                or bool(self.env.usage_of(dotted_name(receiver_node) or "") & sem.TENSOR_USAGE_METHODS)
            if evidence or takes_tensor_arguments or method in sem.MODULE_SHARED_METHODS:
                device = self._moved_device(node, method, receiver, local)
                result = self.maybe_view(receiver if tensor else UNKNOWN_TENSOR, "." + method + "()", device, receiver_node)
                if not evidence:
                    # `x.float()` of something unknown: a tensor, or a module (`.float()` too): a tensor on some paths only.
                    result = result.with_(optional=True)
                if result.ownership_op == ".to()" and any(self.is_dtype_argument(a.value) for a in node.args
                                                         if a.keyword is None or a.keyword.value == "dtype"):
                    result = result.with_(ownership_op=".to(dtype)")  # a cast: code casts what has another dtype
                if method in ("bool",) or (method in ("to", "type") and any(self._is_bool_dtype(a.value) for a in node.args)):
                    result = result.with_(bool_mask=True)
                if method in ("long", "int") and receiver.bool_mask:
                    result = result.with_(bool_mask=False, index_like=True)
                if not self.default_memory_format(node):  # `.to(memory_format=torch.channels_last)`
                    result = result.with_(contiguous=self.memory_format_layout(node))
                if result.is_tensor:
                    result = result.with_(dtype=self._converted_dtype(node, method, receiver, local),
                                          grad_leaf=receiver.grad_leaf or method == "requires_grad_")
                return result
            if method in ("to", "cuda", "cpu") and node.args or method in ("cuda", "cpu"):
                # `grid_thw.to(x.device)` of something unknown: whatever it is, it is where it was moved (not a guess).
                return UNKNOWN.with_(device=self._moved_device(node, method, receiver, local))
            return UNKNOWN
        if method == "state_dict" and not node.args and flat_buffer(self.index) is not None:
            return state_dict_value(flat_buffer(self.index))  # parameters re-pointed at a flat buffer (`repointed`)
        if method == "numpy" and (tensor or receiver.kind is Kind.UNKNOWN):
            return Value(kind=Kind.ARRAY)  # a NumPy array: host memory, not a tensor
        if method in sem.HOST_VALUE_METHODS:
            if method == "tolist":
                return Value(kind=Kind.INT_LIST) if tensor and receiver.index_like else HOST
            return INT if method in ("item", "numel", "dim", "ndimension", "element_size", "nelement", "storage_offset", "get_device") or (method == "size" and node.args) else HOST
        if method == "clone":
            memory_format = self.keyword(node, "memory_format")
            contiguous = True if memory_format is not None and "contiguous_format" in self.source(memory_format.value) else receiver.contiguous
            if not tensor and receiver.kind is not Kind.UNKNOWN:
                # A copy of an object of another class is one of that class (`spec.clone()` of a `TensorDictBase`).
                return receiver if receiver.kind is Kind.HOST and receiver.wrapper is not None else UNKNOWN
            # A copy of a part owns just that part; of a whole tensor, as big (`logits.clone()[:, -1]` pins all of the copy).
            of_part = (receiver.is_view or receiver.is_maybe_view_of_view) and receiver.partial \
                or receiver.is_fresh and receiver.origin == ADVANCED_INDEX  # a gather owns just what it picked
            return fresh(contiguous=contiguous, device=receiver.device, zero_dim=receiver.zero_dim, bool_mask=receiver.bool_mask, dtype=receiver.dtype,
                         index_like=receiver.index_like, reduced=receiver.reduced, origin=".clone()" if of_part else WHOLE_COPY,
                         why=receiver.why)
        if method in sem.FRESH_METHODS and (tensor or (receiver.kind is Kind.UNKNOWN and (
                method in sem.TENSOR_USAGE_METHODS or self.keyword(node, "dim") is not None))):  # `mask.sum(dim=1)`: torch's
            return self._fresh_method(node, method, receiver, local)
        if tensor and sem.is_inplace_method(method):
            if method in sem.RESTRIDING_INPLACE_METHODS:
                return receiver.with_(contiguous=None)  # `x.t_()` returns x with new strides
            return receiver  # in-place methods return self
        if method in ("nonzero", "argsort") and not tensor and receiver.kind is Kind.UNKNOWN:
            return Value(kind=Kind.TENSOR, provenance=Provenance.FRESH, index_like=True, zero_dim=False, contiguous=None)
        if method == "get" and receiver.kind is Kind.UNKNOWN:
            return UNKNOWN
        return UNKNOWN

    def _fresh_method(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Value:
        contiguous = True if method in sem.FRESH_CONTIGUOUS_METHODS else None
        if method in ("max", "min") and (other := self._elementwise_other(node, local, method=True)) is not None:
            return fresh(contiguous=None, device=elementwise_device([receiver, other]))  # `a.max(b)`: elementwise
        with_dim = self._has_dim_argument(node, method=True)
        if method in ("topk", "sort") or (method in ("max", "min", "median", "mode", "kthvalue") and with_dim):
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(device=receiver.device),), origin="." + method)
        if method in ("unique", "unique_consecutive") and (unique := self._unique_tuple(node, "." + method, receiver.device)):
            return unique
        index_like = method in sem.INDEX_TENSOR_METHODS or (method in ("argmax", "argmin") and with_dim)
        bool_mask = method in sem.BOOL_RESULT_METHODS or (method in ("any", "all") and with_dim) or (
            method in ("masked_fill", "clone", "logical_not") and receiver.bool_mask)
        if method == "nonzero" and self.keyword(node, "as_tuple") is not None:
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False, device=receiver.device),))
        reduced = method in sem.REDUCTIONS and not with_dim
        if method in sem.BOOL_RESULT_METHODS or method in sem.ELEMENTWISE_METHODS:
            zero_dim, reduced = receiver.zero_dim, receiver.reduced
        else:
            zero_dim = True if reduced else (False if index_like else None)
        return fresh(contiguous=contiguous, device=receiver.device, index_like=index_like, bool_mask=bool_mask,
                     zero_dim=zero_dim, reduced=reduced, why=receiver.why, permutation=method == "argsort",
                     has_base=None if method in sem.BASE_SETTING_OPS else False,
                     origin=ADVANCED_INDEX if method in sem.GATHER_METHODS else EMPTY if method == "new_empty" else None,
                     base=self.short_source(node.func.value) if method in sem.GATHER_METHODS else None)  # type: ignore[attr-defined]

    def _container_method(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Value:
        """`d.get(k)`, `d.values()`, `d.items()`, `q.get()`, `l.pop()` on a container the analysis knows."""
        if method in ("get", "pop", "popleft", "get_nowait", "setdefault", "__getitem__", "values", "copy", "items"):
            receiver = self.contents(receiver)
        if method in ("get", "pop", "setdefault", "__getitem__") and receiver.kind is Kind.WRAPPER and node.args \
                and isinstance(node.args[0].value, cst.SimpleString) and node.args[0].keyword is None:
            # `meta.get("pad_start")` of a dict display: that key's value (or, where it has none, the default's).
            named = receiver.keyed(str(node.args[0].value.evaluated_value))
            if named is UNKNOWN and receiver.fields and len(node.args) > 1 and method != "__getitem__":
                return self.evaluate(node.args[1].value, local)
            if named.is_tensor and not receiver.fields and _none_when_absent(node, method) and _keyed(receiver):
                return named.with_(may_be_none=True)  # a key no display here set: `None` where it is absent
            return named
        if method in ("get", "pop", "popleft", "get_nowait", "setdefault", "__getitem__"):
            item = receiver.element()
            if item.is_tensor and _none_when_absent(node, method) and _keyed(receiver):
                return item.with_(may_be_none=True)  # `kwargs.pop("mask", None)`: `None` where the key is absent
            return item
        if method in ("values", "copy"):
            return receiver if method == "copy" else container_value(receiver.elements, "list")
        if method == "items":
            return container_value((container_value((HOST, receiver.element()), "tuple"),), "list")
        if method == "keys":
            return HOST
        return UNKNOWN

    def _moved_device(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Device:
        if method in ("cpu", "pin_memory"):
            return Device.CPU
        if method in ("cuda", "xpu", "mps", "npu"):
            return Device.ACCELERATOR
        if method == "to":
            return self._to_device(node, receiver, local)
        return receiver.device

    @staticmethod
    def _tensor_split_arguments(node: cst.Call) -> bool:
        """`.split(100)`, `.split([3, 4], dim=0)`, `.split(sizes, dim=-1)`: a tensor split, not `str.split`."""
        positional = [a for a in node.args if a.keyword is None]
        if positional and isinstance(positional[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return False  # `item.split("-", 1)`: a string split on a separator
        if any(a.keyword is not None and a.keyword.value in ("dim", "split_size", "split_size_or_sections") for a in node.args):
            return True
        if positional and isinstance(positional[0].value, (cst.Integer, cst.List)):
            if isinstance(positional[0].value, cst.List):
                return all(isinstance(e.value, (cst.Integer, cst.Name)) for e in positional[0].value.elements)
            return True
        if len(positional) == 2 and isinstance(positional[1].value, (cst.Integer, cst.UnaryOperation)):
            return True  # .split(size, dim)
        return False


def _op_name(op: str) -> str:
    """The method a conversion's op names: `reshape` of `.reshape()` or `torch.reshape`."""
    return op.rsplit(".", 1)[-1].removesuffix("()")


def _none_when_absent(node: cst.Call, method: str) -> bool:
    """`d.get(k)`, `d.get(k, None)`, `d.pop(k, None)`: `None` where `d` has no `k`."""
    positional = [a for a in node.args if a.keyword is None and not a.star]
    if len(positional) != len(node.args):
        return False
    if method == "get" and len(positional) == 1:
        return True
    return method in ("get", "pop") and len(positional) == 2 and isinstance(positional[1].value, cst.Name) \
        and positional[1].value.value == "None"


def _keyed(value: Value) -> bool:
    """A dict, or a container of no known class that `.get(k)` is asked of (a list has no `get`)."""
    return is_mapping(value) or (value.kind is Kind.WRAPPER and value.wrapper is None)
