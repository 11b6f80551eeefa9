"""Kinds of code met in pass thirty-one, on a seventh blind set of reconstructed public bugs and a seventeenth audit
of libraries never read before (verl, bitsandbytes, sentence-transformers, Composer). Each lint kind is checked with
the prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- a `*_weight` attribute a method sets to a number is no parameter
SCHEDULED = """
    import torch


    class TrainerCallback:
        pass


    class WeightScheduler(TrainerCallback):
        def __init__(self, loss, warmup_steps=10):
            self.loss = loss
            self.max_query_weight = loss.query_weight
            self._current_query_weight = 0.0 if self.max_query_weight is not None else None
            self._current_doc_weight = 0.0
            self.warmup_steps = warmup_steps

        def _value(self, step: int, max_value: float) -> float:
            return max_value * min(step / self.warmup_steps, 1.0)

        def on_step_begin(self, step):
            new_query_weight = self._value(step, self.max_query_weight)
            if new_query_weight != self._current_query_weight or self._current_doc_weight > 0:
                self._current_query_weight = new_query_weight
                self.loss.query_weight = new_query_weight


    class Gate(torch.nn.Module):
        def forward(self, x):
            if self.gate_weight.any():
                return x * self.gate_weight
            return x
"""


def test_a_weight_named_attribute_some_method_sets_to_a_number_is_not_taken_for_a_parameter():
    from viewlint.beliefs import beliefs_of_text
    import textwrap

    # The callback's weights are numbers (`= 0.0` in `__init__`); the module's `gate_weight`, set nowhere here,
    # is still a parameter by its name, and testing it in `forward` is a sync.
    assert _lint(SCHEDULED) == [(28, "VL403")]
    source = textwrap.dedent(SCHEDULED).lstrip("\n")
    probe = source.replace("        new_query_weight = self._value",
                           "        w = self._current_query_weight\n        new_query_weight = self._value")
    believed = {r["target"]: r["tensor"] for r in beliefs_of_text(probe, "m.py")}
    assert believed["w"] is not True
    scope = _run(SCHEDULED)

    class Loss:
        query_weight = 5e-5

    loss = Loss()
    scheduler = scope["WeightScheduler"](loss)
    assert scheduler._current_query_weight == 0.0 and not isinstance(scheduler._current_doc_weight, scope["torch"].Tensor)
    scheduler.on_step_begin(5)
    assert loss.query_weight == 2.5e-5 and isinstance(loss.query_weight, float)
