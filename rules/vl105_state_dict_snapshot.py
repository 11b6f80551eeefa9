"""VL105: a `state_dict()` kept as a snapshot across training, whose tensors are the live parameters."""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.nodes import dotted
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.rule import Rule

_LOOPS = (cst.For, cst.While)
# Calls that copy a mapping but not its tensors: the copy still holds the live parameters.
_SHALLOW_COPIES = frozenset({"copy.copy", "dict", "OrderedDict", "collections.OrderedDict"})


class StateDictSnapshot(Rule):
    """
    ## What it does
    Flags `best = model.state_dict()` kept as a snapshot while the model trains on: the
    assignment is in a branch of a loop that runs a training step (`if acc > best_acc:`), or
    before such a loop, and `best` is read after the loop (`model.load_state_dict(best)`,
    `torch.save(best, path)`). A shallow copy (`.copy()`, `dict(...)`, `copy.copy(...)`)
    counts too: it copies the mapping, not the tensors.

    A loop trains when it runs `loss.backward()`, `optimizer.step()`, or calls a function
    of the module that does (`self.train_one_step()`). A training callback counts too: a
    branch of `on_epoch_end` (any `on_*` hook) that keeps `self.best = model.state_dict()`
    while another method of the class restores or saves `self.best`, and an early stopper's
    `__call__` or `step` that keeps one: training goes on between the calls.

    ## Why it matters
    `state_dict()` returns the parameters and buffers themselves (detached views that share
    their storage), not a copy. Every later optimizer step updates the "snapshot" in place:
    the best weights are silently replaced by the last ones, and restoring or saving them
    restores or saves the final epoch (PyTorch tutorials PR #188, PyPOTS #667).

    ## Example
    ```python
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        acc = evaluate(model)
        if acc > best_acc:
            best_acc, best_weights = acc, None
            best_weights = model.state_dict()      # aliases the live parameters
    model.load_state_dict(best_weights)           # loads the last epoch
    ```

    ## Fix
    Copy the tensors: `best_weights = copy.deepcopy(model.state_dict())`, or
    `{k: v.detach().clone() for k, v in model.state_dict().items()}` (`.to("cpu", copy=True)`
    to keep it off the GPU). No automatic fix: the copy costs memory the author should
    choose to spend.
    """

    code = "VL105"
    name = "state-dict-snapshot"
    summary = "`best = model.state_dict()` kept while the model trains on: it holds the live parameters, not a copy"

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("state_dict")

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = dotted_name(node.targets[0].target)
        if target is None or not ("." not in target or (target.startswith("self.") and target.count(".") == 1)):
            return
        if not self._aliasing_state_dict(node.value):
            return
        function = self._function()
        if function is None:
            return
        loop, conditional = self._enclosing_loop()
        where = "around"
        if loop is not None:
            if not conditional:
                return  # taken on every iteration: it is the latest state, which is what it holds
        else:
            loop, where = _later_loop(function, node), "after"
        if loop is None and target.startswith("self.") and self._in_branch() and self._kept_by_a_callback(function, target):
            self.report(
                node.value,
                f"`{target} = {self.facts.short_source(node.value)}` holds the live parameters, not a copy: training "
                f"goes on after `{function.name.value}` returns and updates them in place, so `{target}` restored or "
                f"saved later holds the last weights",
                fix_message=f"copy the tensors: `{target} = copy.deepcopy({self.facts.short_source(node.value)})`",
            )
            return
        trained = self.facts.contexts.trains(loop) if loop is not None else None
        if loop is None or trained is None or not _read_after(function, loop, target):
            return
        self.report(
            node.value,
            f"`{target} = {self.facts.short_source(node.value)}` holds the live parameters, not a copy: the loop "
            f"{where} it runs {trained}, which updates them in place, so `{target}` read after the loop holds the "
            f"last weights",
            fix_message=f"copy the tensors: `{target} = copy.deepcopy({self.facts.short_source(node.value)})`",
        )

    def _aliasing_state_dict(self, value: cst.BaseExpression) -> bool:
        """`m.state_dict()`, or a copy of the mapping alone (`m.state_dict().copy()`, `dict(m.state_dict())`)."""
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value == "state_dict":
            return not any(a.keyword is None for a in value.args)  # (`state_dict(destination, prefix)`: another API)
        if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not value.args:
            return self._aliasing_state_dict(func.value)
        called = self.facts.qualify(func) or dotted_name(func) or ""
        return called in _SHALLOW_COPIES and len(value.args) == 1 and self._aliasing_state_dict(value.args[0].value)

    def _in_branch(self) -> bool:
        """Under an `if` of the current function (`if improved:`): taken some calls, kept through the others."""
        for context in reversed(self.facts.contexts.contexts):
            if context.kind == "block" and isinstance(context.node, cst.If):
                return True
            if context.kind in ("function", "class", "module"):
                return False
        return False

    def _kept_by_a_callback(self, function: cst.FunctionDef, target: str) -> bool:
        """`function` is a training callback (`on_epoch_end`, `on_validation_end`, an early stopper's `__call__`)
        of a class that restores or saves `target` in another of its methods (`model.load_state_dict(self.best)`)."""
        owner = self.facts.contexts.class_name or ""
        name = function.name.value
        stopper = any(word in owner.lower() for word in ("earlystop", "early_stop", "stopper"))
        if not (name.startswith("on_") or (stopper and name in ("__call__", "step", "update"))):
            return False
        if stopper and not name.startswith("on_"):
            return True  # the best weights are what an early stopper keeps for its caller
        # (Read off the module's `ast`: the prefilter may have left the other methods out of the tree this walks.)
        for klass in self.facts.index.class_defs.get(owner, ()):
            for method in klass.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name == name:
                    continue
                for call in ast.walk(method):
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                            and call.func.attr in ("load_state_dict", "save") \
                            and any(dotted(a) == target for a in call.args):
                        return True
        return False

    def _function(self) -> Optional[cst.FunctionDef]:
        for context in reversed(self.facts.contexts.contexts):
            if context.kind == "function":
                return context.node if isinstance(context.node, cst.FunctionDef) else None
            if context.kind in ("class", "module"):
                return None
        return None

    def _enclosing_loop(self) -> tuple[Optional[cst.CSTNode], bool]:
        """The innermost loop the statement runs in (within its function), and whether a branch inside that loop
        guards it."""
        conditional = False
        for context in reversed(self.facts.contexts.contexts):
            if context.kind == "loop":
                return (context.node if isinstance(context.node, _LOOPS) else None), conditional
            if context.kind == "block" and isinstance(context.node, cst.If):
                conditional = True
            if context.kind in ("function", "class", "module"):
                break
        return None, False


def _later_loop(function: cst.FunctionDef, statement: cst.Assign) -> Optional[cst.CSTNode]:
    """A loop after `statement` in the same block of `function` (`best = m.state_dict()` before the epochs)."""
    for block in descendants(function):
        body = getattr(block, "body", None)
        statements = list(body) if isinstance(body, (list, tuple)) else None
        if statements is None:
            continue
        for position, child in enumerate(statements):
            if isinstance(child, cst.SimpleStatementLine) and any(s is statement for s in child.body):
                return next((later for later in statements[position + 1:] if isinstance(later, _LOOPS)), None)
    return None


def _read_after(function: cst.FunctionDef, loop: cst.CSTNode, target: str) -> bool:
    """Whether `function` reads `target` (a name or `self.attr`) after `loop` ends."""
    after = False
    inside = {id(n) for n in descendants(loop)}
    stores = {id(t.target) for t in descendants(function) if isinstance(t, cst.AssignTarget)}
    for node in descendants(function):
        if node is loop:
            after = True
            continue
        if not after or id(node) in inside or id(node) in stores:
            continue
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == target:
            return True
    return False
