"""VL310: the full logits a model's head computes, upcast to float32 on every forward."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.analysis.value_ops import MODULE_OUTPUT
from viewlint.analysis.values import Kind
from viewlint.rule import Rule

_LINEAR = "torch.nn.Linear"
# Words in a head's attribute name (`self.lm_head`, `self.codec_head`, `self.logits_proj`): what it projects to is
# scores over a vocabulary or a codebook.
_HEAD_WORDS = ("head", "logits")


class LogitsUpcast(Rule):
    """
    ## What it does
    Flags `.float()` (also `.to(torch.float32)`, `.to(dtype=torch.float32)`, `.double()`) of the logits a
    model's output head computes over the whole sequence, in a hot path (see VL401): the result of a
    `Linear` head the module holds (`self.lm_head(hidden_states)`, `self.codec_head(h)`, directly or
    through the name it was bound to in the same function), or the `.logits` of a model's output
    (`outputs.logits.float()`). Logits already cut to one position (`self.lm_head(h[:, -1, :])`, a
    tensor the analysis knows has two dimensions or fewer) are not flagged, nor an upcast a torch function or a
    loss consumes at once (`F.log_softmax(logits.float(), -1)`), nor one in a branch that computes a loss
    (`if labels is not None: ... loss_fct(...)`) unless that loss is a model's `loss_function`, which upcasts the logits itself
    (transformers PR #42753): there the float32 copy is returned for nothing.

    ## Why it matters
    A causal LM's logits are `batch × sequence × vocabulary`: for Llama-3.1-8B and an 8k-token prompt,
    8192 × 128256 bf16 numbers, 2 GiB. `.float()` allocates a second copy twice that size, on every forward,
    generation included, and it is what the model returns, so it lives as long as the output does. Hugging Face
    measured a Llama-3.1-8B forward at 18.5 GiB peak with the upcast and 10.6 GiB without
    (transformers PR #33902, which removed it from the `*ForCausalLM` models; PRs #34147 and #42753 found
    more). The loss functions upcast what they need themselves, chunk by chunk where they chunk.

    ## Example
    ```python
    def forward(self, input_ids, labels=None):
        hidden_states = self.model(input_ids)[0]
        logits = self.lm_head(hidden_states).float()
        loss = self.loss_function(logits, labels) if labels is not None else None
        return logits, loss
    ```

    ## Fix
    ```python
        logits = self.lm_head(hidden_states)
        loss = self.loss_function(logits, labels) if labels is not None else None  # upcasts inside
    ```
    Upcast only where precision is needed: inside the loss, or the rows a sampler reads (`logits[:, -1].float()`).
    No automatic fix: whoever reads the returned logits may rely on their dtype.
    """

    code = "VL310"
    reports_a_cost = True
    name = "logits-upcast"
    summary = "The full `batch × sequence × vocabulary` logits upcast to float32 on every forward: a second, larger copy"
    hot_path_only = True
    default_enabled = False
    off_by_default_reason = (
        "Blind probes written from public fixes met it nine times in six rounds (transformers, Liger,\n"
        "optimum-habana, NeMo RL), and transformers 5.23 still has it in a dozen models. On 26 libraries\n"
        "12 of its 15 findings are true: the other 3 upcast on purpose, for a soft cap computed in\n"
        "float32 (`beam`). Models in fp32 copy nothing. See docs/precision/VL310.md.")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("float", "to", "double", "type")

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        # Per function: name -> the head call it was last bound to (`logits = self.lm_head(h)`), or None.
        self._bound: list[dict[str, Optional[cst.Call]]] = [{}]
        self._consumed: set[int] = set()
        # Per enclosing `if`: the statement when its block computes a loss (`if labels is not None: loss = ...`), else None.
        self._branches: list[Optional[cst.If]] = []

    def visit_If(self, node: cst.If) -> None:
        computes_loss = any(isinstance(n, cst.Call) and _loss_call(n) for n in descendants(node.body))
        self._branches.append(node if computes_loss else None)

    def leave_If(self, original_node: cst.If) -> None:
        self._branches.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bound.append({})

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._bound.pop()

    def leave_Assign(self, original_node: cst.Assign) -> None:
        head = self._head_of(original_node.value)
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                self._bound[-1][target.target.value] = head

    def visit_Call(self, node: cst.Call) -> None:
        if self._consumes(node):
            for arg in node.args:
                # `F.log_softmax(logits.float(), -1)`, `loss_fn(logits.float().flatten(0, 1), y)`: a temporary the call
                # consumes (a loss or a softmax upcasts what it needs), not logits kept in float32.
                value = arg.value
                while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                    self._consumed.add(id(value))
                    value = value.func.value
        func = node.func
        if not isinstance(func, cst.Attribute) or not self._upcasts(node, func.attr.value) or id(node) in self._consumed:
            return
        receiver = func.value
        source = self._full_logits(receiver)
        if source is None:
            return
        value = self.facts.value_of(receiver)
        if value.kind not in (Kind.TENSOR, Kind.UNKNOWN) or (value.rank is not None and value.rank <= 2):
            return  # cut to one position: not the whole sequence's logits (a head's result is a tensor: no more needed)
        loss_branch = next((b for b in reversed(self._branches) if b is not None), None)
        if loss_branch is not None and not self._loss_upcasts_itself(loss_branch, node):
            return  # upcast for a loss computed here (transformers' fix keeps that one): precision, when it is needed
        hot = self.facts.hot_path_name if self.facts.in_hot_path else None
        if hot is None:
            return
        self.report(
            node,
            f"`{self.facts.short_source(node)}` copies {source} (batch × sequence × vocabulary) to float32 in hot path "
            f"{hot}: a second copy, twice their bf16 size, kept as long as the result is",
            fix_message="keep the logits in the model's dtype; upcast inside the loss, or only the positions a sampler reads",
        )

    def _loss_upcasts_itself(self, branch: cst.If, upcast: cst.Call) -> bool:
        """In a branch that computes the loss: whether what the upcast is bound to goes to a model's `loss_function`,
        which upcasts the logits itself (transformers PR #42753): then the float32 copy is returned for nothing."""
        bound = next((t.target.value for n in descendants(branch.body) if isinstance(n, cst.Assign) and n.value is upcast
                      for t in n.targets if isinstance(t.target, cst.Name)), None)
        if bound is None:
            return False
        return any(isinstance(n, cst.Call) and (dotted_name(n.func) or "").split(".")[-1] == "loss_function"
                   and any(isinstance(a.value, cst.Name) and a.value.value == bound for a in n.args)
                   for n in descendants(branch.body))

    def _consumes(self, node: cst.Call) -> bool:
        """A call that computes from its arguments without keeping them: a torch function (`F.log_softmax`), or a loss
        (`self.loss_function(...)`, `loss_fct(...)`). Not an output object built around them (`CausalLMOutput(...)`)."""
        return (self.facts.qualify(node.func) or "").startswith("torch.") or _loss_call(node)

    def _upcasts(self, node: cst.Call, method: str) -> bool:
        """`.float()`, `.double()`, `.to(torch.float32)`, `.to(dtype=torch.float)`, `.type(torch.float32)`."""
        if method in ("float", "double"):
            return not node.args
        if method not in ("to", "type") or not node.args:
            return False
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value != "dtype":
                continue
            qualified = self.facts.qualify(arg.value) or ""
            if semantics.canonical_dtype(qualified) in ("float32", "float64"):
                return True
        return False

    def _full_logits(self, receiver: cst.BaseExpression) -> Optional[str]:
        """What the receiver is, for the message, when it is the whole sequence's logits: a head's result, directly
        or through the name it was bound to here, or the `.logits` of a model's output."""
        head = self._head_of(receiver)
        if head is not None:
            return f"the logits of `{self.facts.short_source(head.func)}`"
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "logits" \
                and self.facts.value_of(receiver).origin == MODULE_OUTPUT:
            return f"the logits of the model's output `{self.facts.short_source(receiver.value)}`"
        return None

    def _head_of(self, node: cst.BaseExpression) -> Optional[cst.Call]:
        """The head call whose logits `node` is: the call itself, a name bound to them in this function, or them
        scaled by a number (`logits / self.config.logits_scaling`)."""
        if isinstance(node, cst.Name):
            return self._bound[-1].get(node.value)
        if isinstance(node, cst.BinaryOperation):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                head = self._head_of(side)
                if head is not None and not self.facts.value_of(other).is_tensor:
                    return head
            return None
        return self._head_call(node)

    def _head_call(self, node: cst.BaseExpression) -> Optional[cst.Call]:
        """`self.lm_head(h)` of an `nn.Linear` the class holds, named for a head, whose input keeps every position."""
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute) or dotted_name(node.func.value) != "self":
            return None
        attribute = node.func.attr.value.lower()
        if not any(word in attribute for word in _HEAD_WORDS):
            return None
        if self.facts.index.layer_class(self.facts.class_name, node.func.attr.value) != _LINEAR:
            return None
        given = node.args[0].value if node.args and node.args[0].keyword is None else None
        if isinstance(given, cst.Subscript) and any(
                isinstance(e.slice, cst.Index) and _integer(e.slice.value) for e in given.slice):
            return None  # `self.lm_head(h[:, -1, :])`: one position's logits
        return node


def _loss_call(node: cst.Call) -> bool:
    """A call of a loss: `self.loss_function(...)`, `loss_fct(...)`, `F.cross_entropy(...)`."""
    name = (dotted_name(node.func) or "").split(".")[-1].lower()
    return "loss" in name or "entropy" in name


def _integer(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)
