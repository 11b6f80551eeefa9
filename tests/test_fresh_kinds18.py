"""Kinds of code met in pass eighteen (round ten's blind probes): what a `__main__` block's training loop calls, names
passed where only a tensor is taken, and a `state_dict()` kept as the best weights while the model trains on. Each
kind is checked with the prefilter on and off; VL105's claim (the snapshot moves with the optimizer) with real torch."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths
from viewlint.beliefs import beliefs_of_text


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


def _beliefs(source: str) -> dict[tuple[int, str], dict]:
    return {(r["line"], r["target"]): r for r in beliefs_of_text(textwrap.dedent(source).lstrip("\n"), "m.py")}


# ---------------------------------------------------------------- a `__main__` block's step loop
EMA = """
    import torch
    from torch import nn


    class AveragedModel(nn.Module):
        def __init__(self, model, device=None):
            super().__init__()
            self.module = model
            self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))

        def update_parameters(self, model):
            if self.n_averaged > 0:
                pass
            self.n_averaged += 1


    if __name__ == "__main__":
        model = nn.Linear(8, 8)
        ema = AveragedModel(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(10):
            opt.zero_grad()
            model(torch.randn(4, 8)).sum().backward()
            opt.step()
            {call}
"""


def test_what_a_main_blocks_training_loop_calls_runs_every_step():
    assert _lint(EMA.format(call="ema.update_parameters(model)")) == [(12, "VL403")]


def test_a_main_block_calling_once_or_outside_a_step_loop_makes_nothing_hot():
    once = EMA.replace("            {call}\n", "") + "    ema.update_parameters(model)\n"
    assert _lint(once) == []
    # (`loss.sum()`, not `loss.detach()`: a discarded view is a VL205 of its own.)
    no_step = EMA.format(call="pass").replace("opt.step()", "pass").replace(".backward()", ".sum()")
    assert _lint(no_step.replace("            pass\n", "            ema.update_parameters(model)\n", 1)) == []


# ---------------------------------------------------------------- passed where only a tensor is taken
LOSS = """
    import torch
    from torch import nn


    class Matcher:
        def __call__(self, boxes):
            return boxes


    class DetectionLoss:
        def __init__(self):
            self.bce = nn.BCEWithLogitsLoss(reduction="none")
            self.head = Matcher()

        def __call__(self, preds, targets, mask, weights, scale, boxes):
            loss = self.bce(preds, targets).sum()
            norm = targets.sum()
            expo = torch.exp(mask)
            count = mask.sum()
            shifted = torch.add(weights, 1)
            total = weights.sum()
            scaled = torch.add(2.0, scale)
            heads = self.head(boxes)
            boxed = boxes.sum()
            return loss.item(), norm.item(), count.item(), total.item(), scale.item(), boxed.item()
"""


def test_an_argument_a_loss_module_or_a_tensor_only_function_takes_is_a_tensor():
    # `targets` (a loss's target), `mask` (`torch.exp`'s input); not `weights` (`torch.add` takes a number first),
    # `scale` (`torch.add(2.0, scale)`), `boxes` (an object of another class may take anything).
    assert _lint(LOSS) == [(25, "VL401")] * 3
    found = _beliefs(LOSS)
    assert found[(17, "norm")]["tensor"] is True
    assert found[(19, "count")]["tensor"] is True
    assert found[(21, "total")]["tensor"] is not True
    assert found[(24, "boxed")]["tensor"] is not True


def test_a_local_loss_module_takes_tensors_too():
    source = """
        import torch
        from torch import nn


        class ClassificationLoss:
            def __call__(self, logits, labels):
                loss_fn = nn.CrossEntropyLoss()
                loss = loss_fn(logits, labels)
                correct = labels.sum()
                return loss, correct.item()
    """
    assert _lint(source) == [(10, "VL401")]


# ---------------------------------------------------------------- VL105: a state_dict() kept past training
def test_a_snapshot_in_a_while_loop_or_a_dict_copy_is_flagged():
    source = """
        import torch
        from torch import nn


        def fit(model, optimizer, loader, evaluate, max_steps):
            best, best_score, step = dict(model.state_dict()), None, 0
            while step < max_steps:
                for x, y in loader:
                    optimizer.zero_grad()
                    nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
                    step += 1
                score = evaluate(model)
                if best_score is None or score > best_score:
                    best_score = score
                    best = dict(model.state_dict())
            torch.save(best, "best.pt")
    """
    # (The tuple assignment before the loop is not read as a snapshot: only `name = ...state_dict()`.)
    assert _lint(source) == [(16, "VL105")]


def test_a_snapshot_no_training_follows_or_taken_every_epoch_is_silent():
    source = """
        from torch import nn


        def pick_model(make_model, seeds, score):
            best, best_score = None, 0.0
            for seed in seeds:
                model = make_model(seed)  # a new model each time: nothing trains the one kept
                s = score(model)
                if s > best_score:
                    best_score = s
                    best = model.state_dict()
            return best


        def fit(model, optimizer, loader, epochs):
            for _ in range(epochs):
                for x, y in loader:
                    optimizer.zero_grad()
                    nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
                last = model.state_dict()
            return last
    """
    assert _lint(source) == []


def test_the_snapshot_vl105_flags_moves_with_the_optimizer_on_real_torch():
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    best = model.state_dict()
    kept = {k: v.clone() for k, v in best.items()}
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    assert best["weight"].data_ptr() == model.weight.data_ptr()
    assert not torch.equal(best["weight"], kept["weight"])
    shallow = model.state_dict().copy()
    assert shallow["bias"].data_ptr() == model.bias.data_ptr()


# ---------------------------------------------------------------- a tensor-only method called on what a view gives
def test_a_tensor_only_method_on_a_reshape_says_the_receiver_is_a_tensor():
    source = """
        import torch


        def load(sd, name):
            def transpose(data):
                with torch.no_grad():
                    data1 = data.transpose(-1, -2).reshape(-1)
                    data.reshape(-1).copy_(data1)
                return data.reshape(data.shape[-1], data.shape[-2])

            return transpose(sd[name])


        def flatten_array(arr):
            flat = arr.reshape(-1).copy()  # NumPy's `copy()`, not a tensor's `copy_`
            return flat
    """
    assert _lint(source) == [(8, "VL203")]
    found = _beliefs(source)
    assert found[(15, "flat")]["tensor"] is not True


# ---------------------------------------------------------------- an optimizer's lazy state: once per parameter
def test_an_optimizers_lazy_state_runs_once_per_parameter():
    source = """
        import torch


        class Lars(torch.optim.Optimizer):
            @torch.no_grad()
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        if len(state) == 0:
                            state["step"] = torch.tensor(0.0, device=p.device)
                        scale = {}
                        if not scale:
                            scale["one"] = torch.tensor(1.0, device=p.device)
                        p.add_(p.grad, alpha=-group["lr"])
    """
    # The lazy state is made on the first step only; a dict made anew each step is filled each step.
    assert _lint(source) == [(14, "VL405")]


def test_a_memo_looked_up_with_get_is_filled_once_per_key():
    source = """
        import torch
        from torch import nn

        uniform_map = {}


        def gumbel_rsample(shape, device):
            gumbel = uniform_map.get(device)
            if gumbel is None:
                one = torch.tensor(1.0, device=device)
                gumbel = torch.distributions.gumbel.Gumbel(torch.zeros_like(one), one).rsample
                uniform_map[device] = gumbel
            return gumbel(shape)


        def fresh_rsample(shape, device):
            gumbel = None
            if gumbel is None:
                one = torch.tensor(1.0, device=device)
                gumbel = torch.distributions.gumbel.Gumbel(torch.zeros_like(one), one).rsample
            return gumbel(shape)


        class Router(nn.Module):
            def forward(self, logits):
                return logits + gumbel_rsample(logits.shape, logits.device) + fresh_rsample(logits.shape, logits.device)
    """
    # DeepSpeed's `gumbel_rsample`: once per device; the same without the memo, on every call.
    assert _lint(source) == [(19, "VL405")]
