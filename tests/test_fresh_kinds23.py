"""Kinds of code met in pass twenty-three: each lint kind is checked with the prefilter on and off; what a message
claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- a comprehension of training steps is a loop
EPOCH_OF_STEPS = """
    import torch


    class Trainer:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def train_step(self, batch):
            self.optimizer.zero_grad()
            loss = self.model(batch).mean()
            loss.backward()
            self.optimizer.step()
            return loss.detach()

        def train_epoch(self, loader):
            losses = [self.train_step(batch) for batch in loader]
            return torch.stack(losses).mean().item()

        def train_epoch_loop(self, loader):
            losses = []
            for batch in loader:
                losses.append(self.train_step(batch))
            return torch.stack(losses).mean().item()

        def train_once(self, batch):
            loss = self.train_step(batch)
            return loss.item()
"""


def test_what_follows_a_comprehension_of_steps_runs_once_per_epoch():
    # torchebm's fixed trainer: `[self.train_step(b) for b in loader]`, then one host read for the epoch. The
    # comprehension runs the steps; the function runs once per epoch, as the `for` loop's twin does. A function that
    # runs one step per call stays hot.
    assert _lint(EPOCH_OF_STEPS) == [(28, "VL401")]


def test_the_epoch_reads_the_host_once_and_gives_the_mean_of_its_steps():
    scope = _run(EPOCH_OF_STEPS)
    torch = scope["torch"]
    model = torch.nn.Linear(3, 1)
    trainer = scope["Trainer"](model, torch.optim.SGD(model.parameters(), lr=0.0))  # lr 0: every step sees one model
    loader = [torch.randn(4, 3) for _ in range(3)]
    expected = sum(model(b).mean().item() for b in loader) / 3
    assert abs(trainer.train_epoch(loader) - expected) < 1e-6
    assert abs(trainer.train_epoch_loop(loader) - expected) < 1e-6


# ---------------------------------------------------------------- what PyTorch passes a registered hook
HOOKS = """
    import torch
    from torch import nn

    GRADS = {}
    BANK = {}


    def keep_first_row(grad):
        GRADS["first"] = grad[0]


    def keep_first_row_fixed(grad):
        GRADS["first"] = grad[0].clone()


    def track(model, fixed=False):
        for p in model.parameters():
            p.register_hook(keep_first_row_fixed if fixed else keep_first_row)


    def bank_rows(module, inputs, output):
        per_image = output.shape[0] // 2
        for j in range(2):
            BANK[j] = output[j * per_image].detach()


    def bank_first(module, inputs, output):
        BANK["first"] = output[0]


    def run(head, batch, hook):
        handle = head.register_forward_hook(hook)
        head(batch)
        handle.remove()


    def index(head, batch):
        run(head, batch, bank_rows)
        run(head, batch, hook=bank_first)


    class Stats:
        def __init__(self):
            self.rows = []

        def get_hook(self):
            def hook(module, args, output):
                self.rows.append(output[:, 0].detach())
            return hook

        def attach(self, model):
            model.register_forward_hook(self.get_hook())
"""


def test_a_hook_keeps_a_view_of_what_pytorch_passes_it():
    # A tensor hook's gradient is a tensor; a forward hook's output is one where the hook uses it as one (`.shape`,
    # `[:, 0]`), registered by name, through a parameter its callers fill, or as what a factory returns. `output[0]`
    # alone (a layer may return a tuple, whose item is no view) is not claimed.
    assert _lint(HOOKS) == [(9, "VL101"), (24, "VL101"), (48, "VL101")]


def test_each_kept_row_holds_the_storage_of_the_whole_tensor():
    scope = _run(HOOKS)
    torch = scope["torch"]
    head = torch.nn.Linear(3, 8)
    batch = torch.randn(6, 3)
    scope["index"](head, batch)
    row = scope["BANK"][0]
    assert row.untyped_storage().nbytes() == 6 * 8 * 4 > row.numel() * row.element_size()
    scope["track"](head)
    head(batch).sum().backward()
    grad_row = scope["GRADS"]["first"]
    assert grad_row.untyped_storage().nbytes() > grad_row.numel() * grad_row.element_size()
    stats = scope["Stats"]()
    stats.attach(head)
    head(batch)
    kept = stats.rows[0]
    assert kept.shape == (6,) and kept.untyped_storage().nbytes() == 6 * 8 * 4


# ---------------------------------------------------------------- a NaN detector's hooks are a debugging tool's
NAN_DETECTOR = """
    import torch


    class NanDetector:
        def __init__(self, model):
            self.handles = [m.register_forward_hook(self.fhook_fn) for m in model.modules()]

        def fhook_fn(self, module, inputs, output):
            if torch.isnan(output).any():
                raise FloatingPointError(f"NaN in the output of {module}")


    class StepStats:
        def __init__(self, model):
            self.handles = [m.register_forward_hook(self.fhook_fn) for m in model.modules()]

        def fhook_fn(self, module, inputs, output):
            if torch.isnan(output).any():
                print("nan")
"""


def test_a_nan_detectors_hooks_inspect_values_on_purpose():
    # fairseq's `NanDetector`, attached only for a diagnostic re-run after a `FloatingPointError`: its truth test of
    # the output is what it is for. The same hook in a class that is not a debugging tool syncs on every forward.
    assert _lint(NAN_DETECTOR) == [(18, "VL403")]


def test_the_detector_raises_on_a_nan_output():
    scope = _run(NAN_DETECTOR)
    torch = scope["torch"]
    layer = torch.nn.Identity()
    scope["NanDetector"](layer)
    layer(torch.ones(2))
    try:
        layer(torch.tensor([float("nan")]))
    except FloatingPointError:
        return
    raise AssertionError("no FloatingPointError")


# ---------------------------------------------------------------- an RNN's `.bias` is a flag
RECURRENT = """
    import torch
    from torch import nn


    class LSTMBase(nn.RNNBase):
        pass


    class LSTM(LSTMBase):
        pass


    class LSTMModule(nn.Module):
        def __init__(self, input_size, hidden_size, lstm=None, python_based=False):
            super().__init__()
            if lstm is None:
                lstm = LSTM("LSTM", input_size, hidden_size) if python_based else nn.LSTM(input_size, hidden_size)
            self.lstm = lstm
            self.cell = nn.GRUCell(input_size, hidden_size)
            self.scale = nn.Parameter(torch.ones(1))

        def forward(self, x):
            b_ih = self.lstm.bias_ih_l0 if self.lstm.bias else None
            b_cell = self.cell.bias_ih if self.cell.bias else None
            if self.scale:
                x = x * 2
            return x, b_ih, b_cell
"""


def test_the_bias_of_a_recurrent_module_is_its_constructor_flag():
    # torchrl's `LSTMModule`: `self.lstm.bias` of an `nn.LSTM` (or its own Python LSTM) is the `bias=` flag, a
    # bool; the parameters are `bias_ih_l0`, `bias_hh_l0`. A one-element parameter tested for truth still syncs.
    assert _lint(RECURRENT) == [(25, "VL403")]


def test_an_lstm_and_a_gru_cell_hold_a_bool_bias_and_bias_parameters():
    scope = _run(RECURRENT)
    module = scope["LSTMModule"](3, 4)
    assert module.lstm.bias is True and module.cell.bias is True
    assert isinstance(module.lstm.bias_ih_l0, scope["torch"].nn.Parameter)
    out, b_ih, b_cell = module(scope["torch"].ones(2, 3))
    assert b_ih.shape == (16,) and b_cell.shape == (12,)


# ---------------------------------------------------------------- a model runner's per-step preparation
MODEL_RUNNER = """
    import torch


    class ModelRunner:
        def __init__(self, device="cuda"):
            self.device = device

        def _prepare_sample(self, groups):
            selected = []
            for group in groups:
                selected.extend(group)
            return torch.tensor(selected, dtype=torch.long, device=self.device)

        def load_model(self, sizes):
            return torch.tensor(sizes, device=self.device)
"""


def test_a_model_runners_sample_preparation_runs_every_step():
    # vLLM's `ModelRunner._prepare_sample` (and `_prepare_inputs`, `execute_model`): serving code that runs once per
    # scheduler step, where `torch.tensor(list, device=...)` is a blocking upload; loading the model is not.
    assert _lint(MODEL_RUNNER) == [(12, "VL405")]


def test_the_prepared_indices_are_the_flattened_groups():
    scope = _run(MODEL_RUNNER)
    runner = scope["ModelRunner"]("cpu")
    assert runner._prepare_sample([[1, 2], [3]]).tolist() == [1, 2, 3]


# ---------------------------------------------------------------- a view or a `torch.where` as a statement
DISCARDED_VIEWS = """
    import weakref

    import torch


    def parse_gates(gate_outputs):
        gate_outputs = torch.stack(gate_outputs)
        if gate_outputs.dim() == 1:
            gate_outputs.unsqueeze(0)
        return gate_outputs


    def mask_prewarp(prewarp_result, mask):
        torch.where(mask != 1.0, torch.zeros(1), prewarp_result)
        return prewarp_result


    def summed(a, b, out):
        torch.add(a, b, out=out).squeeze(1)
        return out


    class Registry:
        def __init__(self):
            self._finalizers = {}

        def forget(self, key):
            finalizer = self._finalizers.pop(key, None)
            if finalizer is not None:
                finalizer.detach()
"""


def test_a_view_or_a_where_as_a_statement_loses_its_result():
    # SpeechBrain's Tacotron2 `gate_outputs.unsqueeze(0)` and metroem's `torch.where(...)` as statements: the result
    # is all they give. Not a view of a call that wrote into `out=`, nor `.detach()` of what only that call says is
    # a tensor (a `weakref.finalize`, whose `detach` unregisters it).
    assert _lint(DISCARDED_VIEWS) == [(9, "VL205"), (14, "VL205")]


def test_the_statements_leave_their_tensors_as_they_were():
    scope = _run(DISCARDED_VIEWS)
    torch = scope["torch"]
    assert scope["parse_gates"]([torch.tensor(1.0), torch.tensor(0.0)]).dim() == 1
    prewarp = torch.ones(3)
    assert torch.equal(scope["mask_prewarp"](prewarp, torch.tensor([0.0, 1.0, 0.0])), torch.ones(3))
    out = torch.empty(2, 1)
    assert torch.equal(scope["summed"](torch.ones(2, 1), torch.ones(2, 1), out), torch.full((2, 1), 2.0))


NESTED_EPOCHS = """
    import torch


    class Trainer:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def train_step(self, batch):
            self.optimizer.zero_grad()
            loss = self.model(batch).mean()
            loss.backward()
            self.optimizer.step()
            return loss.detach()

        def train_epoch(self, loader):
            losses = [[value for value in self.train_step(batch).reshape(1)] for batch in loader]
            return torch.stack([value for row in losses for value in row]).mean().item()
"""


def test_what_an_inner_comprehension_iterates_runs_in_the_outer_one():
    # The inner comprehension's iterable (`self.train_step(batch)...`) is read once per inner comprehension, but that
    # is once per item of the outer one: the function runs many steps, not one per call, so its read after them is
    # once per epoch.
    assert _lint(NESTED_EPOCHS) == []
    scope = _run(NESTED_EPOCHS)
    torch = scope["torch"]
    model = torch.nn.Linear(3, 1)
    trainer = scope["Trainer"](model, torch.optim.SGD(model.parameters(), lr=0.0))
    loader = [torch.ones(2, 3), torch.zeros(2, 3)]
    expected = (model(torch.ones(2, 3)).mean().item() + model(torch.zeros(2, 3)).mean().item()) / 2
    assert abs(trainer.train_epoch(loader) - expected) < 1e-6
