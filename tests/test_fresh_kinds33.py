"""Kinds of code met in pass thirty-five, on a tenth blind set of reconstructed public bugs and a twentieth audit of
libraries never read before (torchrl, torchmetrics, speechbrain, monai). Each lint kind is checked with the prefilter
on and off; what a finding claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- a cast to another tensor's dtype keeps the device; so does a type test
PROJECTION = """
    import torch
    from torch import nn


    class DistributionalLoss(nn.Module):
        def __init__(self, gamma=0.99):
            super().__init__()
            self.register_buffer("gamma", torch.tensor(gamma))

        def forward(self, reward, terminated, support):
            discount = self.gamma
            if isinstance(discount, torch.Tensor):
                discount = discount.to("cpu")
            terminated = terminated.to("cpu")
            reward = reward.to("cpu")
            support = support.to("cpu")
            tz = reward + (1 - terminated.to(reward.dtype)) * discount * support
            b = (tz.clamp(-10, 10) + 10) / 2.0
            low, up = b.floor().to(torch.int64), b.ceil().to(torch.int64)
            low[(up > 0) & (low == up)] -= 1
            return low, up
"""


def test_a_cast_to_another_tensors_dtype_and_an_isinstance_test_keep_tensors_on_the_cpu():
    # torchrl's distributional DQN moves the projection's operands to the CPU on purpose (`.to("cpu")`) and then
    # updates through a boolean mask there: no sync. `.to(reward.dtype)` is a cast, not a move to the device, and the
    # `else` of `isinstance(discount, torch.Tensor)` holds no tensor, so the operands are all on the CPU.
    # (The moves themselves wait for the GPU: VL402.)
    assert _lint(PROJECTION) == [(13, "VL402"), (15, "VL402")]
    # Not moved (the operands stay where the caller's are): the masked update counts on the device.
    kept = PROJECTION.replace('.to("cpu")', "")
    assert _lint(kept) == [(20, "VL404")]
    scope = _run(PROJECTION)
    torch = scope["torch"]
    reward, support = torch.ones(4, 1), torch.linspace(-10, 10, 5)
    terminated = torch.zeros(4, 1, dtype=torch.bool)
    assert terminated.to(reward.dtype).device == terminated.device  # a cast: where the tensor was
    low, up = scope["DistributionalLoss"]()(reward, terminated, support)
    assert low.device.type == "cpu" and low.shape == (4, 5)


# ------------------------------------------- lengths handed to `pack_padded_sequence` must be on the host
PACKED_ENCODER = """
    import torch
    from torch import nn


    class Encoder(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.lstm = nn.LSTM(dim, dim, batch_first=True)

        def forward(self, x: torch.Tensor, lens: torch.Tensor, splits: torch.Tensor):
            packed = nn.utils.rnn.pack_padded_sequence(x, lens.cpu(), batch_first=True, enforce_sorted=False)
            lengths = splits.detach().to(device="cpu", dtype=torch.long)
            again = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, _ = self.lstm(packed)
            out2, _ = self.lstm(again)
            return out, out2, splits.cpu()
"""


def test_lengths_copied_to_the_host_for_pack_padded_sequence_are_no_finding_other_copies_are():
    # torchrl's and SpeechBrain's RNN modules copy the lengths to the CPU for `pack_padded_sequence`, which requires
    # them there (it makes the same copy itself otherwise): no finding, given directly or through a name. The
    # `splits.cpu()` returned on line 16 is a copy like any other.
    assert _lint(PACKED_ENCODER) == [(16, "VL402")]
    scope = _run(PACKED_ENCODER)
    torch = scope["torch"]
    out, out2, _ = scope["Encoder"]()(torch.randn(2, 3, 4), torch.tensor([3, 2]), torch.tensor([2, 3]))
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(2, 3, 4), torch.tensor([3, 2]), batch_first=True)
    assert packed.batch_sizes.device.type == "cpu"  # the sizes the call computes from `lengths` live on the host
    assert out.data.shape[-1] == 4 and out2.data.shape[-1] == 4


# ------------------------------------------- a docstring's type and the callers' CPU values: a tensor on the host
TRAINER = """
    import torch


    class Brain:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer
            self.step = 0

        def fit_batch(self, batch):
            loss = self.model(batch).pow(2).mean()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.detach().cpu()

        def update_average(self, loss, avg_loss):
            \"\"\"Update the running average.

            Arguments
            ---------
            loss : torch.Tensor
                detached loss.
            \"\"\"
            if torch.isfinite(loss):
                avg_loss += (float(loss) - avg_loss) / self.step
            return avg_loss

        def fit(self, batches):
            avg = 0.0
            for batch in batches:
                self.step += 1
                loss = self.fit_batch(batch)
                avg = self.update_average(loss, avg)
            return avg
"""


def test_a_parameter_typed_by_its_docstring_is_where_every_caller_has_it():
    # SpeechBrain's `Brain.update_average` tests `torch.isfinite(loss)` of what `fit_batch` returns, a loss already
    # copied to the host (`loss.detach().cpu()`): no wait there. The docstring says `loss` is a tensor; the callers say
    # where it lives. Returned without the copy, the test and the `float()` wait for the GPU once per step (lines 25, 26). (The copy itself,
    # once per step, is VL402's.)
    assert _lint(TRAINER) == [(15, "VL402")]
    assert _lint(TRAINER.replace("return loss.detach().cpu()", "return loss.detach()")) == [(25, "VL403"), (26, "VL401")]
    scope = _run(TRAINER)
    torch = scope["torch"]
    model = torch.nn.Linear(3, 1)
    brain = scope["Brain"](model, torch.optim.SGD(model.parameters(), lr=0.1))
    assert brain.fit_batch(torch.randn(4, 3)).device.type == "cpu"
    assert isinstance(brain.fit([torch.randn(4, 3), torch.randn(4, 3)]), float)


# ------------------------------------------- a reshape as a statement loses its result, whatever gave the value
OPERATOR_NET = """
    import torch
    from torch import nn


    class NN(nn.Module):
        def __init__(self):
            super().__init__()
            self._output_transform = None

        def apply_output_transform(self, transform):
            self._output_transform = transform


    class FNN(NN):
        def __init__(self, sizes):
            super().__init__()
            self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

        def forward(self, x):
            inputs = x
            for linear in self.linears:
                x = torch.tanh(linear(x))
            if self._output_transform is not None:
                x = self._output_transform(inputs, x)
            return x


    class Merged(nn.Module):
        def __init__(self, merger_sizes):
            super().__init__()
            if callable(merger_sizes[1]):
                self.output_merger = merger_sizes[1]
            else:
                self.output_merger = FNN(merger_sizes)

        def forward(self, y_func, y_loc):
            y = y_func[:, None, :] * y_loc[None, :]
            shape0, shape1 = y.shape[0], y.shape[1]
            y = self.output_merger(y.reshape(shape0 * shape1, -1))
            y.reshape(shape0, shape1)
            return y
"""


def test_a_reshape_as_a_statement_of_what_a_submodule_or_a_given_callable_returns_is_lost():
    # DeepXDE's MIONet (PR #904) reshaped the output merger's result as a bare statement: the network returned the flat
    # `(n * m, 1)` column. `self.output_merger` is an `FNN` (whose output a transform the caller gives may replace) or
    # a callable the caller gave: not known to be a tensor, but a reshape (which tensors and arrays alike do out of
    # place) leaves `y` as it was either way.
    assert _lint(OPERATOR_NET) == [(40, "VL205")]
    # A class of the module that defines `reshape` (which may do it in place): nothing said of unknown receivers.
    own = OPERATOR_NET.replace("    class Merged(nn.Module):", "    class Grid:\n        def reshape(self, *shape):\n"
                               "            self.shape = shape\n\n\n    class Merged(nn.Module):")
    assert _lint(own) == []
    # Nothing known of the receiver: OpenVINO's `model.reshape({...})` reshapes the model in place.
    assert _lint("""
        import openvino as ov


        def load(path):
            ov_model = ov.Core().read_model(path)
            ov_model.reshape({0: [1, 3, 640, 640]})
            return ov_model
    """) == []
    scope = _run(OPERATOR_NET)
    torch = scope["torch"]
    net = scope["Merged"]([4, 8, 1])
    out = net(torch.randn(3, 4), torch.randn(5, 4))
    assert out.shape == (15, 1)  # the grid `(3, 5)` the statement made was thrown away


# ------------------------------------------- what runs only when a tested value holds a NaN is no hot path
NAN_STRATEGY = """
    import torch


    class MeanMetric:
        def __init__(self, nan_strategy="warn"):
            self.nan_strategy = nan_strategy
            self.total = torch.tensor(0.0)

        def _cast_and_nan_check_input(self, x, weight):
            nans = torch.isnan(x)
            nans_weight = torch.isnan(weight)
            if nans.any() or nans_weight.any():
                if self.nan_strategy == "error":
                    raise RuntimeError("Encountered `nan` values in tensor")
                x = x[~(nans | nans_weight)]
                weight = weight[~(nans | nans_weight)]
            return x, weight

        def update(self, value, weight):
            value, weight = self._cast_and_nan_check_input(value, weight)
            self.total += (value * weight).sum()
"""


def test_a_branch_taken_only_when_a_local_nan_mask_has_a_nan_is_cold():
    # torchmetrics' aggregation drops NaN entries by a boolean mask only when the input holds one: the test on line
    # 12 waits on every `update` (true), the masked reads under it run on anomalies only (not reported).
    assert _lint(NAN_STRATEGY) == [(12, "VL403"), (12, "VL403")]
    # Tested in place, not through a local, it was cold already; a mask that is no NaN test keeps its findings.
    other = NAN_STRATEGY.replace("nans = torch.isnan(x)", "nans = x < 0")
    assert any(code == "VL404" for _, code in _lint(other))
    scope = _run(NAN_STRATEGY)
    torch = scope["torch"]
    metric = scope["MeanMetric"]()
    metric.update(torch.tensor([1.0, float("nan"), 2.0]), torch.ones(3))
    assert float(metric.total) == 3.0  # the NaN was dropped: the branch ran only because one was there


# ------------------------------------------- a storage-size test decides: what passes it covers its storage
DENSE_GRIDS = """
    import torch


    def write_grid(path, grid):
        if grid.untyped_storage().nbytes() > grid.numel() * grid.element_size():
            grid = grid.clone()
        torch.save(grid, path)


    class Extractor:
        def __init__(self):
            self.encoder = torch.nn.Conv2d(3, 2, 4, stride=4)

        @torch.no_grad()
        def extract(self, tiles, paths):
            batch = self.encoder(tiles)
            for i, grid in enumerate(batch):
                write_grid(paths[i], grid)
"""


def test_a_view_saved_after_a_storage_size_test_that_clones_it_pins_nothing():
    # soma's dense-grid writer clones a grid only where its storage is larger than its own bytes (a row of the batch);
    # where the test fails the grid covers its storage, so the save writes only it. Without the test, each file would
    # hold the whole batch (line 7).
    assert _lint(DENSE_GRIDS) == []
    bare = DENSE_GRIDS.replace(
        "        if grid.untyped_storage().nbytes() > grid.numel() * grid.element_size():\n            grid = grid.clone()\n", "")
    assert [code for _, code in _lint(bare)] == ["VL103"]
    scope = _run(DENSE_GRIDS)
    torch = scope["torch"]
    batch = torch.zeros(4, 2, 3, 3)
    row, whole = batch[1], torch.zeros(2, 3, 3)
    assert row.untyped_storage().nbytes() > row.numel() * row.element_size()  # the test clones a row
    assert whole.untyped_storage().nbytes() == whole.numel() * whole.element_size()  # and leaves what covers its storage
