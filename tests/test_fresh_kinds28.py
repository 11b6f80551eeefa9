"""Kinds of code met in pass twenty-eight, on a third blind set of reconstructed public bugs: what a comprehension's
filter says of the items it lets through, type tests of an item by its number (`item[1]`), an optimizer's lazy state
keyed by a string (`if "step" not in state:`), and a view or conversion tried in a `try` for the error it may raise.
Each lint kind is checked with the prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

import pytest

from conftest import lint_snippet as _lint, run_snippet as _run

# ---------------------------------------------------------------- a comprehension's filter narrows its items
FILTERED = """
    import torch
    from torch import nn


    class Agent(nn.Module):
        def forward(self, xs, batch, data):
            scalars = [x.item() for x in xs if torch.is_tensor(x)]
            copies = {k: torch.tensor(v) for k, v in batch.items() if isinstance(v, torch.Tensor)}
            numbers = {k: torch.tensor(v) for k, v in batch.items() if not isinstance(v, torch.Tensor)}
            moved = {
                item[0]: torch.tensor(item[1])
                for item in data.items()
                if isinstance(item[1], torch.Tensor)
            }
            return scalars, copies, numbers, moved


    def copies_of(batch):
        return {k: torch.tensor(v) for k, v in batch.items() if isinstance(v, torch.Tensor)}
"""


def test_a_comprehension_filter_says_what_its_items_are():
    found = _lint(FILTERED)
    assert (7, "VL401") in found  # `x.item()` of the items `torch.is_tensor` let through, in `forward`
    assert (8, "VL307") in found  # `torch.tensor(v)` of a tensor `isinstance` let through
    assert (11, "VL307") in found  # `item[1]`, an item by its number, narrowed the same way
    assert (19, "VL307") in found
    assert not [f for f in found if f[0] == 9]  # `not isinstance(v, torch.Tensor)`: numbers, not tensors


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
def test_torch_tensor_of_a_filtered_tensor_copies_it():
    scope = _run(FILTERED)
    torch = scope["torch"]
    batch = {"x": torch.arange(4.0), "n": 3}
    copies = scope["copies_of"](batch)
    assert set(copies) == {"x"}
    assert copies["x"].data_ptr() != batch["x"].data_ptr()  # a new allocation, the copy the finding names
    assert torch.equal(copies["x"], batch["x"])


# ---------------------------------------------------------------- an optimizer's lazy state, keyed by a string
LAZY_STATE = """
    import torch


    class Prodigy(torch.optim.Optimizer):
        def __init__(self, params, lr=1.0):
            super().__init__(params, dict(lr=lr))

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "step" not in state:
                        state["step"] = 0
                        if p.any():
                            state["p0"] = p.flatten().clone()
                        else:
                            state["p0"] = torch.tensor(0, device=p.device, dtype=p.dtype)
                    state["step"] += 1
                    if p.grad.any():
                        p.add_(p.grad, alpha=-group["lr"])
"""


def test_an_optimizers_lazy_state_keyed_by_a_string_runs_once_per_parameter():
    found = _lint(LAZY_STATE)
    assert not [f for f in found if f[0] in (17, 20)]  # the first step's initialisation, once per parameter
    assert (22, "VL403") in found  # every step


def test_the_lazy_state_block_runs_on_the_first_step_only():
    scope = _run(LAZY_STATE)
    torch = scope["torch"]
    p = torch.nn.Parameter(torch.ones(3))
    optimizer = scope["Prodigy"]([p], lr=0.1)
    counted = []
    original = torch.Tensor.any
    try:
        torch.Tensor.any = lambda self, *a, **k: counted.append(tuple(self.shape)) or original(self, *a, **k)
        for _ in range(3):
            p.grad = torch.ones(3)
            optimizer.step()
    finally:
        torch.Tensor.any = original
    assert counted.count((3,)) == 1 + 3  # `p.any()` once (the first step), `p.grad.any()` every step


# ---------------------------------------------------------------- a view tried for the error it may raise
PROBE = """
    import torch


    def fits(y: torch.Tensor, b: int, t: int, c: int) -> bool:
        try:
            y.transpose(1, 2).view(b, t, c)
        except RuntimeError:
            return False
        try:
            y.clamp(0, 1)
        except RuntimeError:
            pass
        return True


    def reshaped(y: torch.Tensor, b: int, t: int, c: int) -> torch.Tensor:
        y.view(b, t, c)
        return y
"""


def test_a_view_tried_in_a_try_is_a_probe_but_a_lost_update_there_is_not():
    found = _lint(PROBE)
    assert (6, "VL205") not in found
    assert (10, "VL205") in found  # `clamp` has an in-place twin: the update is lost, in a `try` or not
    assert (17, "VL205") in found


def test_the_probe_answers_by_raising():
    scope = _run(PROBE)
    torch = scope["torch"]
    assert scope["fits"](torch.zeros(2, 3, 4), 2, 3, 4) is False  # a transposed tensor cannot be viewed
    assert scope["fits"](torch.zeros(2, 1, 4), 2, 4, 1) is True
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3, 4).transpose(1, 2).view(2, 3, 4)


# ---------------------------------------------------------------- a nested helper's views, a dataclass's declared fields
ROWS = """
    from dataclasses import dataclass
    from typing import Dict, List, Optional

    import torch


    @dataclass
    class State:
        text_states: torch.Tensor
        text_mask: Optional[torch.Tensor]


    class Pipeline:
        def __init__(self, encoder):
            self.encoder = encoder
            self._conditions: Dict[str, State] = {}

        @staticmethod
        def _condition_row(condition: State, index: int) -> State:
            def row(value: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
                return None if value is None else value[index : index + 1].contiguous()

            return State(text_states=row(condition.text_states), text_mask=row(condition.text_mask))

        def _plain_row(self, condition: State, index: int) -> State:
            return State(text_states=condition.text_states[index : index + 1], text_mask=None)

        def encode(self, request_ids: List[str], feats, mask):
            condition = State(*self.encoder(feats, mask))
            for index, request_id in enumerate(request_ids):
                self._conditions[request_id] = self._condition_row(condition, index)

        def encode_plain(self, request_ids: List[str], feats, mask):
            condition = State(*self.encoder(feats, mask))
            for index, request_id in enumerate(request_ids):
                kept = self._plain_row(condition, index)
                self._conditions[request_id] = kept


    def pair(h: torch.Tensor, index: int):
        def row(value):
            return value[index : index + 1]

        def doubled(value):
            return value * 2

        return row(h), doubled(h)
"""


def test_a_nested_helpers_view_of_its_parameter_is_a_view_of_what_each_call_passes():
    from viewlint.beliefs import beliefs_of_text
    import textwrap

    found = _lint(ROWS)
    assert (31, "VL102") in found  # `.contiguous()` of a row: the same storage, kept per request
    assert (37, "VL101") in found  # a field `State(*outputs)` says nothing of, read as the class declares it
    beliefs = {(r["line"], r["target"]): r for r in beliefs_of_text(textwrap.dedent(ROWS).lstrip("\n"), "m.py")}
    assert beliefs[(36, "kept")]["tensor"] is False  # an object, not a tensor


def test_what_the_nested_helper_returns_really_shares_the_whole_batch(monkeypatch):
    import sys
    import types

    monkeypatch.setitem(sys.modules, "probe", types.ModuleType("probe"))  # `dataclass` reads its class's module
    scope = _run(ROWS)
    torch = scope["torch"]

    class Encoder(torch.nn.Module):
        def forward(self, feats, mask):
            return feats * 2, mask

    pipeline = scope["Pipeline"](Encoder())
    pipeline.encode(["a", "b", "c", "d"], torch.randn(4, 8, 16), torch.ones(4, 8, dtype=torch.bool))
    kept = pipeline._conditions["d"].text_states
    assert kept.untyped_storage().nbytes() == 4 * kept.numel() * kept.element_size()  # the whole batch, for one row
    h = torch.zeros(4, 3)
    view, doubled = scope["pair"](h, 1)
    assert view._base is h and doubled._base is None


# ---------------------------------------------------------------- VL308's fix of an asynchronous move
def test_the_clone_before_a_non_blocking_move_is_removed_only_as_an_unsafe_fix():
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    source = (
        "import torch\n\n\n"
        "def upload(table: torch.Tensor, device):\n"
        "    a = table[0].clone().to(device=device, non_blocking=True)\n"
        "    b = table[1].clone().to(device=device)\n"
        "    return a, b\n"
    )
    found = sorted(lint_text(source, "m.py", Settings(select=("VL308",))), key=lambda d: d.start.row)
    assert [(d.start.row, d.fix.applicability.value) for d in found] == [(5, "unsafe"), (6, "safe")]


# ---------------------------------------------------------------- what a nested helper computes hangs on what it is given
SCHEDULER = """
    import torch


    class Scheduler:
        def __init__(self, sigmas: torch.Tensor):
            self.sigmas = sigmas.to("cpu")
            self.step_index = 0

        def step(self, sample: torch.Tensor) -> torch.Tensor:
            def sigma_fn(_t: torch.Tensor) -> torch.Tensor:
                return _t.neg().exp()

            def at(_s: torch.Tensor) -> torch.Tensor:
                return _s[self.step_index]

            sigma_to = sigma_fn(self.sigmas[self.step_index])
            sigma_up = min(sigma_to, sigma_to**2)
            if at(self.sigmas) > 0:
                sample = sample * 2
            self.step_index += 1
            return sample * sigma_up
"""


def test_what_a_nested_helper_computes_is_not_claimed_to_be_on_the_device():
    found = _lint(SCHEDULER)
    assert not [f for f in found if f[1].startswith("VL4")]  # CPU sigmas: comparing them waits for nothing


def test_the_nested_helpers_results_live_where_their_arguments_do():
    scope = _run(SCHEDULER)
    torch = scope["torch"]
    scheduler = scope["Scheduler"](torch.linspace(1.0, 0.0, 5))
    assert scheduler.step(torch.ones(2)).device.type == "cpu"
    assert scheduler.sigmas.device.type == "cpu"


# ---------------------------------------------------------------- a decode loop that calls a model's forward by name
DECODER = """
    import torch
    import torch.nn as nn


    class Generator(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def _banned(self, tokens, step: int):
            return tokens[0, : step + 1].tolist()

        @torch.no_grad()
        def _generate(self, src_tokens, max_len: int):
            tokens = src_tokens.new_zeros((src_tokens.size(0), max_len + 2))
            for step in range(max_len + 1):
                lprobs = self.model.forward_decoder(tokens[:, : step + 1])
                banned = self._banned(tokens, step)
                tokens[:, step + 1] = lprobs.argmax(dim=-1)
            return tokens

        def summary(self, tokens):
            return tokens.tolist()
"""


def test_a_loop_that_calls_a_models_forward_by_name_is_a_decode_loop():
    found = _lint(DECODER)
    assert (11, "VL401") in found  # called from the loop: once per token
    assert not [f for f in found if f[0] == 22]  # `summary` runs outside it


def test_the_decode_loop_reads_the_device_tokens_once_per_step():
    scope = _run(DECODER)
    torch = scope["torch"]

    class Model(torch.nn.Module):
        def forward_decoder(self, prev):
            return torch.nn.functional.one_hot(prev[:, -1] % 5, 5).float()

    generator = scope["Generator"](Model())
    reads = []
    original = torch.Tensor.tolist
    try:
        torch.Tensor.tolist = lambda self: reads.append(1) or original(self)
        generator._generate(torch.zeros(2, 3, dtype=torch.long), 4)
    finally:
        torch.Tensor.tolist = original
    assert len(reads) == 5  # one host read per decoded token


# ---------------------------------------------------------------- a value handed to a helper that only hands it on
PASSED_ON = """
    import torch
    from torch import nn


    def exists(v):
        return v is not None


    def default(v, d):
        return v if exists(v) else d


    def scale(x, factor):
        return x * factor


    class Mapper(nn.Module):
        def forward(self, logits, straight_through=None, mask=None):
            straight_through = default(straight_through, self.training)
            if straight_through:
                logits = logits * 2
            mask = scale(mask, 2)
            if mask.any():
                logits = logits + 1
            return logits
"""


def test_a_forward_parameter_handed_to_a_helper_that_only_hands_it_on_is_not_an_input_tensor():
    found = _lint(PASSED_ON)
    assert (20, "VL403") not in found  # `default(straight_through, self.training)`: a flag, most likely
    assert (23, "VL403") in found  # `scale(mask, 2)` computes with it: an input tensor


def test_the_flag_is_a_python_bool_and_the_mask_a_tensor():
    scope = _run(PASSED_ON)
    torch = scope["torch"]
    mapper = scope["Mapper"]().eval()
    out = mapper(torch.ones(2), mask=torch.tensor([0.0, 1.0]))
    assert torch.equal(out, torch.full((2,), 2.0))  # the flag was `self.training` (False), the mask a tensor


# ---------------------------------------------------------------- a `for`'s iterable runs once, before its loop
HEADERS = """
    import torch
    from torch import nn


    class Sampler(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        @torch.no_grad()
        def generate(self, seq, counts, steps: int):
            for n, _ in zip(counts.tolist(), range(steps)):
                logits = self.net(seq)
                seq = logits.argmax(dim=-1)
                if seq.sum().item() > n:
                    break
            return seq
"""


def test_the_iterable_of_a_step_loop_is_read_once_and_its_body_every_step():
    found = _lint(HEADERS)
    assert not [f for f in found if f[0] == 12]  # `counts.tolist()`: once per call of `generate`
    assert (15, "VL401") in found  # every step


def test_the_iterable_is_evaluated_once():
    scope = _run(HEADERS)
    torch = scope["torch"]
    reads = []
    original = torch.Tensor.tolist
    try:
        torch.Tensor.tolist = lambda self: reads.append(1) or original(self)
        scope["Sampler"](torch.nn.Identity()).generate(torch.zeros(2, 3), torch.full((4,), 100), 4)
    finally:
        torch.Tensor.tolist = original
    assert len(reads) == 1


# ---------------------------------------------------------------- Python's `sum` and `max` over tensors
SUMMED = """
    import torch
    import torch.nn.functional as F


    def train(critic, batches, optimizer, target):
        losses = []
        for batch in batches:
            current = critic(batch)
            critic_loss = 0.5 * sum(F.mse_loss(q, target) for q in current)
            assert isinstance(critic_loss, torch.Tensor)
            losses.append(critic_loss.item())
            optimizer.zero_grad()
            critic_loss.backward()
            optimizer.step()
        return losses
"""


def test_a_python_sum_of_losses_is_a_tensor():
    assert (11, "VL401") in _lint(SUMMED)


def test_the_sum_of_losses_is_a_tensor_at_run_time():
    scope = _run(SUMMED)
    torch = scope["torch"]
    F = torch.nn.functional
    total = sum(F.mse_loss(q, torch.zeros(3)) for q in (torch.ones(3), torch.ones(3)))
    assert isinstance(total, torch.Tensor) and total.dim() == 0
