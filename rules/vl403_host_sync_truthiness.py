"""VL403: a device tensor used as a Python truth value (`if t.any():`, `assert t`, `t and u`) in a hot path."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.values import Kind
from viewlint.rule import Rule


class HostSyncTruthiness(Rule):
    """
    ## What it does
    Flags a tensor whose truth value Python asks for inside a hot path (see VL401 for what
    is hot): the test of `if`, `elif`, `while`, `assert`, a conditional expression or a
    comprehension's `if`, and the operands of `and`, `or` and `not`. Typical forms are
    `if t.any():`, `if (x == 0).all():`, `while (err > tol).any():` and `assert torch.all(p >= 0)`.
    The builtin `max`/`min` of tensors asks the same question of each comparison it makes:
    `max(grid[1], grid[2])` of 0-dim device tensors, `max(lengths)` over a device tensor's elements.
    It fires only on values known to be tensors and not known to be on the CPU; `if t is None:`
    and tests on shapes (`if x.shape[0] > 1:`) are plain Python and stay quiet. What a submodule
    or a callable passed in gives when applied to a tensor (`self.gate(x)`, `fn(x)`) is a tensor,
    unless its name asks a question (`can_*`, `is_*`, `has_*`, `should_*`, `need_*`: a bool).

    ## Why it matters
    `bool(t)` copies the tensor's value to the host, so the CPU waits for every kernel queued
    before it, and the branch it picks is data dependent: `torch.compile` breaks the graph
    there and CUDA graph capture fails. An `assert` on a tensor is the same sync, paid on
    every call unless Python runs with `-O`.

    ## Example
    ```python
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.isnan(x).any():             # a sync in every call
            x = torch.nan_to_num(x)
        return x
    ```

    ## Fix
    Compute both branches and select on the device (`torch.where(cond, a, b)`,
    `torch.nan_to_num(x)` unconditionally), move checks behind a debug flag or an interval
    guard, or use `torch._assert_async(cond)`, which checks on the device without a sync.
    Fix safety: no automatic fix.
    """

    code = "VL403"
    name = "host-sync-truthiness"
    summary = "A device tensor used as a Python truth value in a hot path waits for the GPU"
    hot_path_only = True

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("device-truth-test"),), (features.flag("builtin-compare"),))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `and`/`or`/`not` nodes already checked as part of an enclosing test.
        self._checked: set[int] = set()

    def visit_If(self, node: cst.If) -> None:
        self._check_test(node.test, "`if`", header_of=node)

    def visit_While(self, node: cst.While) -> None:
        # A `while` test runs on every iteration: it is as hot as the loop (a decoding loop that runs a model).
        self._check_test(node.test, "`while`")

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check_test(node.test, "`assert`")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check_test(node.test, "a conditional expression")

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self._check_test(node.test, "a comprehension's `if`")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if id(node) in self._checked:
            return
        # Used as a value (`y = a or b`), Python tests the left operand and returns the right one as is.
        self._checked.add(id(node))
        self._check_test(node.left, "`and`" if isinstance(node.operator, cst.And) else "`or`")

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not) and id(node) not in self._checked:
            self._check_test(node, "`not`")

    def visit_Call(self, node: cst.Call) -> None:
        """`max(a, b)`/`min(a, b)` of tensors compares them with `>`/`<` and asks each answer's truth value;
        `max(t)` iterates over a tensor and does so for every pair of its elements."""
        self._check_any_all(node)
        func = node.func
        if not (isinstance(func, cst.Name) and func.value in ("max", "min")) or not node.args:
            return
        facts = self.facts
        if func.value in facts.index.aliases or func.value in facts.index.defined_functions or facts.lookup(func.value).kind is not Kind.UNKNOWN:
            return  # a `max` of the module's own
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) != len(node.args) or not positional:
            return  # `max(xs, key=...)`, `max(*xs)`: not read here
        tensors = [a.value for a in positional if facts.may_be_on_device(facts.value_of(a.value))]
        if not tensors:
            return
        hot_path = facts.sync_path_name()
        if hot_path is None:
            return
        what = "the elements of" if len(positional) == 1 else "tensor"
        self.report(
            node,
            f"`{facts.short_source(node)}` compares {what} `{facts.short_source(tensors[0])}` in Python in hot path "
            f"{hot_path}: `bool()` of each comparison copies it to the host and waits for the GPU",
            fix_message="use `torch.maximum`/`torch.max` on the device, or take the values from host-side metadata",
        )

    def _check_any_all(self, node: cst.Call) -> None:
        """`any(v > 0 for v in t)`, `all(mask)`: Python's `any`/`all` ask the truth value of each item, one sync each."""
        func = node.func
        if not (isinstance(func, cst.Name) and func.value in ("any", "all")) or len(node.args) != 1 or node.args[0].keyword \
                or node.args[0].star or func.value in self.facts.index.aliases or func.value in self.facts.index.defined_functions:
            return
        argument = node.args[0].value
        facts = self.facts
        if isinstance(argument, (cst.GeneratorExp, cst.ListComp)):
            item, what = facts.value_of(argument.elt), f"`{facts.short_source(argument.elt)}`"
            if not item.is_tensor and self._compares_a_row(argument):
                item = facts.value_of(argument.for_in.iter)  # `v > 0 for v in t`: a comparison of a row of `t`
        else:
            item, what = facts.value_of(argument), f"each element of `{facts.short_source(argument)}`"
        if not item.is_tensor or item.optional or not facts.may_be_on_device(item):
            return
        hot_path = facts.sync_path_name()
        if hot_path is None:
            return
        self.report(
            node,
            f"`{func.value}(…)` asks the truth value of {what}, a tensor, item by item in hot path {hot_path}: "
            f"each `bool()` copies it to the host and waits for the GPU",
            fix_message=f"reduce on the device (`torch.{func.value}(…)`, `(…).{func.value}()`) and test once",
        )

    @staticmethod
    def _compares_a_row(generator: cst.GeneratorExp | cst.ListComp) -> bool:
        """`v > 0 for v in t`, `v for v in t`: the item is the loop variable, or a comparison of it."""
        target = generator.for_in.target
        if generator.for_in.inner_for_in is not None or not isinstance(target, cst.Name):
            return False
        element = generator.elt
        if isinstance(element, cst.Comparison):
            element = element.left
        return isinstance(element, cst.Name) and element.value == target.value

    def _check_test(self, test: cst.BaseExpression, where: str, header_of: Optional[cst.CSTNode] = None) -> None:
        """Check a truth-tested expression, descending through `and`/`or`/`not` to the operands Python tests."""
        if isinstance(test, cst.BooleanOperation):
            self._checked.add(id(test))
            word = "`and`" if isinstance(test.operator, cst.And) else "`or`"
            self._check_test(test.left, word, header_of)
            if isinstance(test.operator, cst.And) and self.facts.is_cold_guard(test.left):
                self._mark_checked(test.right)  # `step % 100 == 0 and t.any()`: runs only in the guard
            elif self._narrows_to_non_tensor(test.left, test.operator, test.right):
                self._mark_checked(test.right)  # `isinstance(b, float) and b == 0`: b is no tensor there
            else:
                self._check_test(test.right, word, header_of)
            return
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            self._checked.add(id(test))
            self._check_test(test.expression, "`not`", header_of)
            return
        facts = self.facts
        # The test of an `if`/`while` runs before the block it guards: judge it by the enclosing context.
        hot_path = facts.sync_path_name(header_of)
        if hot_path is None:
            return
        value = facts.value_of(test)
        if not facts.may_be_on_device(value):
            return
        self.report(
            test,
            f"{where} asks for the truth value of tensor `{facts.short_source(test)}` in hot path "
            f"{hot_path}: `bool()` copies it to the host and waits for the GPU",
            fix_message="select on the device with `torch.where(…)`, or check behind a debug flag",
        )

    def _mark_checked(self, node: cst.BaseExpression) -> None:
        """Skip `and`/`or`/`not` nodes inside a short-circuited (cold) operand when they are visited later."""
        if isinstance(node, cst.BooleanOperation):
            self._checked.add(id(node))
            self._mark_checked(node.left)
            self._mark_checked(node.right)
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            self._checked.add(id(node))
            self._mark_checked(node.expression)

    def _narrows_to_non_tensor(self, left: cst.BaseExpression, operator: cst.BaseBooleanOp, right: cst.BaseExpression) -> bool:
        """The right operand only runs when an `isinstance` test on the left proved a value it uses is no tensor:
        `isinstance(b, (int, float)) and b == 0`, `isinstance(b, torch.Tensor) or b == 0.0`."""
        # In `a and isinstance(b, float) and b == 0` every earlier conjunct (of the same operator) holds.
        if isinstance(left, cst.BooleanOperation) and type(left.operator) is type(operator):
            return self._narrows_to_non_tensor(left.left, operator, right) or self._narrows_to_non_tensor(left.right, operator, right)
        negated = False
        if isinstance(left, cst.UnaryOperation) and isinstance(left.operator, cst.Not):
            left, negated = left.expression, True
        if not (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "isinstance" and len(left.args) == 2):
            return False
        tensor_type = "Tensor" in self.facts.source(left.args[1].value)
        runs_when_instance = isinstance(operator, cst.And) != negated
        if runs_when_instance == tensor_type:
            return False
        checked = self.facts.source(left.args[0].value)
        return checked in self.facts.source(right)
