"""What a join of paths lets the analysis claim: a tensor on one path and something unknown on another is not made a
tensor by `is not None`, and a tuple of one length on one path and another on the other keeps its items, not their
positions. Each case is also run with real torch, so what the belief would have claimed is shown false."""

from __future__ import annotations

import textwrap

import pytest

from viewlint.beliefs import beliefs_of_text, hover_text

# The shape of DeBERTa-v2's encoder: a tuple filtered by `is not None` on one path, a `ModelOutput`-like object on the
# other, and the caller taking `[1]` (all the hidden states: a tuple, not a tensor).
ENCODER = textwrap.dedent("""\
    import torch
    from dataclasses import dataclass
    from typing import Optional


    @dataclass
    class Output:
        last_hidden_state: torch.Tensor
        hidden_states: Optional[tuple] = None
        attentions: Optional[tuple] = None


    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])

        def forward(self, hidden_states, output_hidden_states=True, return_dict=False):
            all_hidden_states = (hidden_states,) if output_hidden_states else None
            output_states = hidden_states
            for layer in self.layer:
                output_states = layer(output_states)
                if output_hidden_states:
                    all_hidden_states = all_hidden_states + (output_states,)
            if not return_dict:
                return tuple(v for v in [output_states, all_hidden_states, None] if v is not None)
            return Output(last_hidden_state=output_states, hidden_states=all_hidden_states)


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x):
            encoder_outputs = self.encoder(x, output_hidden_states=True)
            encoded_layers = encoder_outputs[1]
            sequence_output = encoded_layers[-1]
            return sequence_output
""")


def _records(source: str) -> dict[str, dict]:
    return {r["target"]: r for r in beliefs_of_text(source, "model.py")}


def test_an_item_of_a_join_of_tuples_of_different_lengths_is_not_taken_by_position():
    found = _records(ENCODER)
    assert found["encoded_layers"]["tensor"] is None  # the second item: a tuple of hidden states, or a tensor
    assert found["sequence_output"]["tensor"] is None
    assert found["sequence_output"]["view"] is None


def test_the_encoder_really_gives_a_tuple_where_a_tensor_was_claimed():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(ENCODER, "model.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    model = namespace["Model"]()
    outputs = model.encoder(torch.randn(2, 4), output_hidden_states=True)
    assert isinstance(outputs[1], tuple)  # what `encoded_layers` really is
    last = model(torch.randn(2, 4))
    assert isinstance(last, torch.Tensor) and last._base is None  # a layer's output, not a view of `encoded_layers`


def test_is_not_none_makes_a_tensor_only_where_the_other_paths_give_none():
    found = _records(textwrap.dedent("""\
        import torch


        def pick(x, extra, flag: bool):
            t = torch.zeros(3)
            maybe = t if flag else None
            if maybe is not None:
                known = maybe
            items = [t, extra]
            kept = tuple(v for v in items if v is not None)
            second = kept[1]
            for w in [t, extra]:
                if w is not None:
                    either = w
    """))
    assert found["known"]["tensor"] is True  # `None` on the other path: `is not None` leaves the tensor
    assert found["second"]["tensor"] is None  # `extra` may be anything
    assert found["either"]["tensor"] is None


def test_a_join_of_tuples_of_one_length_keeps_positions():
    found = _records(textwrap.dedent("""\
        import torch


        def pair(x: torch.Tensor, flag: bool):
            if flag:
                out = (x * 2, 3)
            else:
                out = (x + 1, 4)
            first = out[0]
            second = out[1]
    """))
    assert found["first"]["tensor"] is True
    assert found["second"]["tensor"] is False


# A tensor parameter on one path, an unknown object's attribute on the other (SGLang's `call_begin_forward`): the rules
# still read `indptr[-1]` as the tensor's item (a slice bound read on the host), and the beliefs claim nothing of it.
SPEC = textwrap.dedent("""\
    import torch


    class Updater:
        def forward(self, indptr: torch.Tensor, indices: torch.Tensor, spec, lens: torch.Tensor):
            if spec is None:
                indptr[1:] = torch.cumsum(lens, dim=0)
            else:
                indptr, indices = spec.indptr, spec.indices
            last = indptr[-1]
            indices[:last] = 0
""")


def test_an_item_of_a_tensor_on_some_paths_is_still_a_tensor_to_the_rules():
    from conftest import lint_both_paths

    assert lint_both_paths(SPEC) == [(11, "VL401")]
    found = _records(SPEC)
    assert found["last"]["tensor"] is None
    line = SPEC.splitlines()[9]
    assert hover_text(SPEC, 10, line.index("last") + 1) == \
        "`last`: an item of a tensor on some paths only (of something unknown on others)"
