"""VL205: an out-of-place tensor method with an in-place twin (or a conversion), called as a bare statement."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.callgraph import callgraph_of
from viewlint.analysis.purity import makes_only
from viewlint.analysis.tree import descendants
from viewlint.analysis.values import Kind, Value
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# Context managers under which a discarded call is the point: it is expected to raise or warn,
# or it runs to be measured (profilers).
_EXPECTING_CONTEXTS = ("raises", "Raises", "assertWarns", "warns", "Warns", "assert_raises", "profile", "record_function")


# Functions whose result is all they give (`torch.where(mask, zeros, x)` as a statement leaves `x` as it was).
_DISCARDABLE_FUNCTIONS = frozenset({"torch.where", "torch.cat", "torch.stack", "torch.concat"}) | semantics.VIEW_FUNCTIONS


class DiscardedOutOfPlaceResult(Rule):
    """
    ## What it does
    Flags a statement that calls an out-of-place tensor method and throws its result away,
    when an in-place twin exists: `x.index_copy(0, idx, src)`, `x.masked_fill(m, 0)`,
    `x.scatter(1, idx, v)`, `x.clamp(0, 1)`, `x.add(y)`, and the functional
    `torch.clamp(x, 0, 1)` (without `out=`). Also a conversion of a tensor called as a
    statement (`x.to(device)`, `x.cuda()`, `x.half()`): it returns the converted tensor and
    leaves `x` as it was (a module's `.to()` converts the module in place; a tensor's does not).
    So does a view, reshape or copy of a tensor as a statement (`gate.unsqueeze(0)`,
    `x.view(b, -1)`, `x.detach()`; the reshapes only tensors and arrays have, `reshape`,
    `unsqueeze`, `permute`, `view_as`, `reshape_as` and `movedim`, also of a value that is a
    tensor on some paths only, such as what a submodule or a callable given to the constructor
    returns), and `torch.where(...)`, `torch.cat(...)`, `torch.stack(...)`
    or a view function (`torch.transpose(x, 0, 1)`) whose result is not assigned. So does a
    bare call of a function of the module that only makes the tensor it returns
    (`random_weight(m.weight.size())` of a `def random_weight(shape)` that builds a tensor with
    `torch.randn`, sets `requires_grad` on it and returns it): nothing in its body writes into what
    it is given or into module state, prints, checks (`assert`, `raise`) or calls anything but torch,
    NumPy, `math`, builtins that compute and such functions of the module, and it has no decorator
    (`@functools.cache` keeps what the call makes) but `torch.no_grad()` and its kin.
    And a loop variable over tensors rebound and dropped (`for p in model.parameters():
    p = p.clamp(-c, c)`, an EMA that assigns `ema_p = decay * ema_p + ...`): the tensors it
    held are unchanged.

    Generic names (`add`, `mul`, `clamp`, `abs`, ...) are flagged only on receivers known
    to be tensors, since sets, queues and other objects have methods with those names.
    Names only tensors have (`index_copy`, `index_put`, `index_fill`, `index_add`,
    `masked_fill`, `masked_scatter`, `scatter_reduce`, `addcmul`, `addcdiv`, `clamp_min`,
    `clamp_max`) are flagged on any receiver that is not a module, `self` or a non-tensor.

    ## Why it matters
    The method returns a new tensor and leaves `x` unchanged. As a bare statement its
    result is discarded, so the call only costs time and memory: the update the code
    clearly meant never happens.

    ## Example
    ```python
    cache.index_copy(0, slots, new_rows)  # cache is unchanged
    scores.masked_fill(pad_mask, float("-inf"))
    batch.to(device)                      # batch stays where it was
    ```

    ## Fix
    Use the in-place twin, or assign the result:
    ```python
    cache.index_copy_(0, slots, new_rows)
    scores = scores.masked_fill(pad_mask, float("-inf"))
    batch = batch.to(device)
    ```
    Fix safety: unsafe. `--unsafe-fixes` renames the method to its `_` form; that changes
    `x` (and every view of it) in place, and fails where the result's dtype or shape could
    not be written back into `x`. A conversion of a name is assigned back to it (`batch =
    batch.to(device)`), which changes what the rest of the function sees.
    """

    code = "VL205"
    name = "discarded-out-of-place-result"
    summary = "Out-of-place result thrown away where the in-place `_` twin (or an assignment) was meant"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("tensor-twin-statement"),), (features.flag("dead-loop-rebind"),))

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self._expecting = 0  # depth of `with pytest.raises(...)` / `with profile(...)` blocks
        self._loops: list[cst.For] = []
        self._probes: set[int] = set()  # expression statements directly in the body of a `try` with handlers

    def _defined_here(self, name: str) -> bool:
        """A function or method of this name is defined somewhere in the module (read from the full `ast`)."""
        return name in self.facts.index.defined_functions

    def visit_With(self, node: cst.With) -> None:
        if self._is_expecting(node):
            self._expecting += 1

    def leave_With(self, node: cst.With) -> None:
        if self._is_expecting(node):
            self._expecting -= 1

    def _is_expecting(self, node: cst.With) -> bool:
        return any(
            any(word in self.facts.source(item.item) for word in _EXPECTING_CONTEXTS) for item in node.items
        )

    def visit_Try(self, node: cst.Try) -> None:
        """`try: y.transpose(1, 2).view(b, t, c)` / `except RuntimeError:`: a view or conversion made for the error it
        may raise (a probe of the layout, of the device), not for its result."""
        if node.handlers:
            self._probes.update(id(small) for line in node.body.body if isinstance(line, cst.SimpleStatementLine)
                                for small in line.body if isinstance(small, cst.Expr))

    def visit_For(self, node: cst.For) -> None:
        self._loops.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._loops.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        """`for p in model.parameters(): p = p * decay`: the loop variable is rebound and dropped; the tensor it held
        (a parameter, a row of a tensor) is unchanged."""
        if not self._loops or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        if isinstance(node.value, cst.Name) and node.value.value == "None":
            return  # `send_tensor = None  # allow mem deallocation`: a release, not an update
        loop = self._loops[-1]
        name = node.targets[0].target.value
        if name not in {n.value for n in descendants(loop.target) if isinstance(n, cst.Name)} \
                or not isinstance(loop.body, cst.IndentedBlock):
            return
        later = _after(list(loop.body.body), node)
        if later is None:
            return  # in a block other than an `if` (a `with`, a nested loop): what follows it is not read here
        if any(isinstance(n, cst.Name) and n.value == name for statement in later for n in descendants(statement)):
            return  # read again in the iteration: a local computation
        held = self.facts.lookup(name)
        if not held.is_tensor or held.optional:
            return
        text = self.facts.short_source(loop.iter)
        self.report(
            node,
            f"`{name} = …` rebinds the loop variable and nothing reads it after: the tensor it held (from `{text}`) is unchanged",
            fix_message=f"update it in place (`{name}.mul_(…)`, `{name}.copy_(…)`), or assign into what it came from",
        )

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if self._expecting or not isinstance(call, cst.Call):
            return
        if isinstance(call.func, cst.Name):
            self._check_own_function(call, call.func.value)
            return
        if not isinstance(call.func, cst.Attribute):
            return
        method = call.func.attr.value
        if id(node) in self._probes and method not in semantics.HAS_INPLACE_TWIN:
            return  # a view or conversion tried for the error it may raise (`x.view(...)`, `torch.zeros(1).cuda()`)
        if method in semantics.DISCARDABLE_CONVERSIONS and method not in semantics.HAS_INPLACE_TWIN:
            self._check_conversion(call, method)
            return
        if method in semantics.DISCARDABLE_VIEWS and method not in semantics.HAS_INPLACE_TWIN:
            qualified = self.facts.qualify(call.func)
            if qualified is None:
                self._check_conversion(call, method, "returns a new view or tensor, which is thrown away")
            elif qualified in _DISCARDABLE_FUNCTIONS and not any(a.keyword is not None and a.keyword.value == "out" for a in call.args):
                text = self.facts.short_source(call.func)
                self.report(call, f"`{text}(…)` returns a new tensor that is thrown away: nothing it was given changes",
                            fix_message="assign the result")
            return
        if method not in semantics.HAS_INPLACE_TWIN:
            return
        qualified = self.facts.qualify(call.func)
        if qualified is not None:
            self._check_function(call, qualified, method)
            return
        receiver = call.func.value
        if not self._is_tensor_receiver(receiver, method):
            return
        text = self.facts.short_source(receiver)
        args = "(…)" if call.args else "()"
        self.report(
            call,
            f"`{text}.{method}{args}` returns a new tensor that is thrown away: `{text}` is unchanged",
            fix_message=f"use the in-place `{text}.{method}_(…)`, or assign the result",
            edits=((call.func.attr, f"{method}_"),),
        )

    def _check_own_function(self, call: cst.Call, name: str) -> None:
        """`random_weight(m.weight.size())` as a statement, of a function of this module that only makes the tensor it
        returns (`purity.makes_only`): the statement throws away all the call does."""
        if name in self.facts.index.aliases or not makes_only(callgraph_of(self.facts.index), name):
            return
        value = self.facts.value_of(call)
        if not value.is_tensor or value.optional or not value.is_fresh:
            return
        self.report(
            call,
            f"`{name}(…)` returns a new tensor that is thrown away: `{name}` changes nothing else",
            fix_message="assign the result where it was meant to go (`m.weight.data = ...`, `x = ...`)",
        )

    def _check_conversion(self, call: cst.Call, method: str, what: str = "") -> None:
        """`x.to(device)` (or `x.unsqueeze(0)`: `what` then says what it returns) as a statement, where `x` is a tensor
        on every path (not a module, which converts itself)."""
        receiver = call.func.value  # type: ignore[attr-defined]
        if self.facts.qualify(call.func) is not None:
            return  # `pin_memory_utils.pin_memory(ptr, n)`: a function of an imported module
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and semantics.is_inplace_method(receiver.func.attr.value):
            # `w.data.add_(delta).to(orig_dtype)`: the in-place call already wrote into the tensor; the conversion
            # after it is dead code at most (a cast back to the dtype it was read with), not a lost update.
            return
        if what and isinstance(receiver, cst.Call) and any(a.keyword is not None and a.keyword.value == "out" for a in receiver.args):
            return  # `torch.add(a, b, out=buf).squeeze(1)`: the call wrote into `out=`; the view after it is a no-op
        if what and isinstance(receiver, cst.Name) and self.facts.tensor_only_by_use_of(receiver.value, method):
            return  # `finalizer.detach()`: that call is all that says `finalizer` is a tensor
        value = self.facts.value_of(receiver)
        if (not value.is_tensor or value.optional) and not self._reshaped_array(receiver, method, value):
            return
        text = self.facts.short_source(receiver)
        args = "(…)" if call.args else "()"
        edits = ()
        if isinstance(receiver, cst.Name):
            edits = ((call, f"{receiver.value} = {self.facts.source_for_edit(call)}"),)
        unchanged = f": `{text}` is unchanged" if isinstance(receiver, (cst.Name, cst.Attribute)) else ""
        said = f"{what}{unchanged}" if what else \
            f"returns the converted tensor, which is thrown away: `{text}` is unchanged (a tensor, unlike a module, does not convert in place)"
        self.report(
            call,
            f"`{text}.{method}{args}` {said}",
            fix_message=f"assign the result: `{text} = {text}.{method}{args}`",
            edits=edits,
        )

    def _reshaped_array(self, receiver: cst.BaseExpression, method: str, value: Value) -> bool:
        """`y.reshape(n, m)` of a value that is a tensor on some paths (a submodule's output, or what a callable given
        to the constructor returns): a reshape tensors and arrays have, and neither does it in place. Not where a class
        of this module defines the method, nor of `self`."""
        if method not in semantics.ARRAY_RESHAPES or self._defined_here(method):
            return False
        if not (value.is_tensor and value.optional):
            return False  # (nothing known of it: OpenVINO's `model.reshape({...})` reshapes the model in place)
        return not (isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"))

    def _check_function(self, call: cst.Call, qualified: str, method: str) -> None:
        """`torch.clamp(x, 0, 1)` as a statement: the functional form, unless it writes to `out=`."""
        if qualified not in (f"torch.{method}", f"torch.nn.functional.{method}") \
                or any(a.keyword is not None and a.keyword.value in ("out", "inplace") for a in call.args):
            return
        # The tensor: the first positional argument, or `input=` (`torch.div(input=pruned, other=density)`).
        given = next((a for a in call.args if a.keyword is not None and a.keyword.value == "input"), None) \
            if call.args and call.args[0].keyword is not None else (call.args[0] if call.args else None)
        if given is None or given.star:
            return
        first = self.facts.short_source(given.value)
        self.report(
            call,
            f"`{self.facts.short_source(call.func)}({first}, …)` returns a new tensor that is thrown away: `{first}` is unchanged",
            fix_message=f"use the in-place `{first}.{method}_(…)`, or assign the result",
        )

    def _is_tensor_receiver(self, receiver: cst.BaseExpression, method: str) -> bool:
        value = self.facts.value_of(receiver)
        if value.is_tensor:
            return True
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and semantics.inplace_twin(receiver.func.attr.value):
            return True  # `exp_avg.mul_(beta1).add(1 - beta1, grad)`: what a tensor's in-place twin returns is that tensor
        if method not in semantics.TENSOR_ONLY_TWIN_METHODS or self._defined_here(method):
            return False
        if value.kind is not Kind.UNKNOWN:
            return False  # a container, a number, a string: not a tensor
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return False
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
            return False
        head = receiver
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and head.value in self.facts.index.aliases and head.value != "self":
            return False  # `module.index_add(...)`: a function of an imported module
        return True


def _after(statements: list[cst.BaseStatement], node: cst.Assign) -> Optional[list[cst.CSTNode]]:
    """What runs after `node` in the same iteration: the rest of its line and block, and of each `if` block that holds
    it (`if p.dtype != torch.float32: p = p.float()`); None where it sits in another kind of block."""
    for i, statement in enumerate(statements):
        if isinstance(statement, cst.SimpleStatementLine) and node in statement.body:
            small = list(statement.body)
            return [*small[small.index(node) + 1:], *statements[i + 1:]]
        if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
            inner = _after(list(statement.body.body), node)
            if inner is not None:
                return [*inner, *statements[i + 1:]]
    return None
