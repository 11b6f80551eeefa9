"""Host syncs of kinds found missing on code written as users write it: a sample drawn from a device tensor, a tensor
indexed by a mask of itself, a `while` test of a decoding loop, and a `training_step`; and their look-alikes."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths


def _syncs(source: str) -> list[tuple[int, str]]:
    return [(row, code) for row, code in lint_both_paths(textwrap.dedent(source)) if code.startswith("VL4")]


def _row(source: str, text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if text in line)


_SAMPLER = """\
    import torch


    class Sampler:
        def __init__(self, model):
            self.model = model

        def sample(self, ids, steps):
            tokens = []
            for _ in range(steps):
                logits = self.model(ids)[:, -1]
                nxt = torch.multinomial({probs}, 1)
                tokens.append(nxt.item())
                ids = torch.cat([ids, nxt], dim=-1)
            return tokens
"""


def test_a_sample_drawn_from_a_tensor_is_on_its_device_not_the_cpu():
    source = _SAMPLER.format(probs="logits.softmax(-1)")
    assert _syncs(source) == [(_row(source, "nxt.item()"), "VL401")]


def test_a_sample_drawn_from_a_cpu_tensor_stays_on_the_cpu():
    source = _SAMPLER.format(probs="logits.softmax(-1).cpu()")
    assert (_row(source, "nxt.item()"), "VL401") not in _syncs(source)


_MASKED = """\
    import torch.nn as nn


    class Keep(nn.Module):
        def forward(self, scores, thresh: float):
            keep = {test}
            return scores[keep]
"""


def test_a_forward_input_indexed_by_a_mask_of_itself_is_a_tensor():
    source = _MASKED.format(test="scores > thresh")
    assert _syncs(source) == [(_row(source, "return scores[keep]"), "VL404")]


def test_an_input_indexed_by_a_membership_test_is_not_taken_for_a_tensor():
    source = _MASKED.format(test="scores in thresh")
    assert _syncs(source) == []


_DECODE = """\
    import torch


    @torch.no_grad()
    def greedy({model}, seq, eos_id, max_steps=20):
        step = 0
        while (seq[:, -1] != eos_id).any() and step < max_steps:
            logits = {model}(seq)
            seq = torch.cat([seq, logits[:, -1:].argmax(-1)], dim=1)
            step += 1
        return seq
"""


def test_the_test_of_a_while_loop_that_runs_a_model_runs_every_step():
    source = _DECODE.format(model="model")
    assert _syncs(source) == [(_row(source, "while ("), "VL403")]


def test_the_test_of_a_while_loop_that_runs_no_model_is_not_hot():
    source = _DECODE.format(model="combine")
    assert _syncs(source) == []


_STEP = """\
    import torch
    import lightning as L


    class Lit(L.LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def {name}(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            self.log("loss", loss.item())
            return loss
"""


def test_an_item_in_a_training_step_syncs_every_step():
    source = _STEP.format(name="training_step")
    assert _syncs(source) == [(_row(source, "loss.item()"), "VL401")]


def test_an_item_in_a_method_run_once_is_not_reported():
    source = _STEP.format(name="on_train_end")
    assert _syncs(source) == []


_INT_READS = """\
    import torch
    import torch.nn as nn


    class Trim(nn.Module):
        def forward(self, x: torch.Tensor, lengths: torch.Tensor, lengths_cpu: torch.Tensor, n: int):
            a = x[:, :{bound}]
            for i in range({bound}):
                a = a + i
            return a[:, torch.arange({bound}, device=x.device)]
"""


def test_a_tensor_used_where_an_int_is_needed_is_read_on_the_host():
    source = _INT_READS.format(bound="lengths.max()")
    rows = [_row(source, "a = x[:, :"), _row(source, "for i in range("), _row(source, "torch.arange(")]
    assert _syncs(source) == [(row, "VL401") for row in rows]


@pytest.mark.parametrize("bound", ["n", "x.shape[1]", "int(n)", "lengths_cpu.max()"])
def test_python_ints_and_host_tensors_as_bounds_are_free(bound):
    assert _syncs(_INT_READS.format(bound=bound)) == []


def test_a_tensor_slice_bound_is_read_at_run_time():
    torch = pytest.importorskip("torch")
    read: list = []

    class Counted(torch.Tensor):
        def __index__(self):
            read.append(True)
            return super().__index__()

    bound = torch.tensor(3).as_subclass(Counted)
    assert torch.arange(10)[:bound].tolist() == [0, 1, 2] and read  # Python asked the tensor for an int


_HOST_BOOLS = """\
    import torch
    import torch.nn as nn


    class Check(nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor, a_cpu: torch.Tensor, flags: list[int]):
            {line}
            return a
"""


@pytest.mark.parametrize("line, code", [
    ("hit = any(v > 0 for v in a)", "VL403"),
    ("hit = all(a > 0)", "VL403"),
])
def test_python_asking_each_items_truth_is_a_sync(line, code):
    source = _HOST_BOOLS.format(line=line)
    assert _syncs(source) == [(_row(source, line), code)]


@pytest.mark.parametrize("line", [
    "hit = any(f > 0 for f in flags)",
    "hit = any(p.requires_grad for p in self.parameters())",
    "hit = all(a.shape)",
])
def test_any_and_all_of_host_values_are_free(line):
    assert _syncs(_HOST_BOOLS.format(line=line)) == []


def test_a_comprehension_over_a_tensor_reads_each_element_and_a_host_list_stays_on_the_host():
    # Its targets hold what iterating gives: rows of `x`, items of `xs`. A length taken from a `*_cpu` list
    # is on the host even where a type test allows a tensor (`seq_len.item() if isinstance(seq_len, Tensor)`).
    source = textwrap.dedent("""
        import torch

        class Attention(torch.nn.Module):
            def forward(self, x: torch.Tensor, xs: list[torch.Tensor], batch):
                per_row = [t.item() for t in x]
                per_item = {i: t.item() for i, t in enumerate(xs)}
                raw = batch.seq_lens_cpu if isinstance(batch.seq_lens_cpu, list) else batch.seq_lens_cpu.tolist()
                lens = [int(s.item()) if isinstance(s, torch.Tensor) else int(s) for s in raw]
                max_q = max(batch.extend_seq_lens_cpu)
                longest = int(max_q.item()) if isinstance(max_q, torch.Tensor) else int(max_q)
                return per_row, per_item, lens, longest
    """)
    assert [found for found in lint_both_paths(source) if found[1] == "VL401"] == [(6, "VL401"), (7, "VL401")]
