"""VL401–VL404: host syncs in hot paths, and the CPU-side and cold look-alikes that must stay quiet."""

from __future__ import annotations

import textwrap

SYNCS = ("VL401", "VL402", "VL403", "VL404")


def findings(lint_source, body: str, **settings) -> list[tuple[int, str]]:
    """Lint `body` placed inside `forward` of an nn.Module (the body starts on line 7)."""
    source = (
        "import torch\n"
        "import torch.nn as nn\n"
        "\n"
        "\n"
        "class M(nn.Module):\n"
        "    def forward(self, x: torch.Tensor, lengths: torch.Tensor):\n"
        + textwrap.indent(textwrap.dedent(body), " " * 8)
    )
    return [(row, code) for row, code, _ in lint_source(source, select=SYNCS, **settings)]


# ---------------------------------------------------------------- VL401 host-sync-scalar
def test_item_on_a_tensor_parameter_is_a_sync(lint_source):
    assert findings(lint_source, "n = lengths.max().item()\n") == [(7, "VL401")]


def test_tolist_and_scalar_builtins(lint_source):
    body = "a = x.tolist()\nb = int(lengths[0])\nc = float(x.sum())\nd = bool(x.any())\n"
    assert findings(lint_source, body) == [(7, "VL401"), (8, "VL401"), (9, "VL401"), (10, "VL401")]


def test_message_names_the_expression_and_the_hot_function(lint_source):
    source = "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        return x.sum().item()\n"
    [(row, code, message)] = lint_source(source, select=("VL401",))
    assert "`x.sum().item()`" in message and "`M.forward`" in message


def test_tolist_of_a_tensor_built_from_a_list_is_free(lint_source):
    assert findings(lint_source, "meta = torch.tensor([1, 2, 3])\nstarts = meta.tolist()\n") == []


def test_factory_with_a_device_variable_is_not_assumed_on_cpu(lint_source):
    body = "t = torch.zeros(3, device=x.device)\nt.item()\nc = torch.zeros(3, device='cpu')\nc.item()\n"
    assert findings(lint_source, body) == [(8, "VL401")]


def test_device_of_a_cpu_tensor_is_the_cpu(lint_source):
    body = "meta = torch.tensor([1, 2])\nidx = torch.arange(2, device=meta.device)\nidx.tolist()\n"
    assert findings(lint_source, body) == []


def test_results_of_cpu_are_on_the_host(lint_source):
    # The `.cpu()` is the one sync (VL402); reading its result afterwards is free.
    assert findings(lint_source, "host = x.cpu()\nhost.tolist()\nx.cpu().tolist()\n") == [(7, "VL402"), (9, "VL402")]


def test_dtype_conversion_keeps_a_cpu_tensor_on_the_cpu(lint_source):
    body = "m = torch.tensor([1, 2]).to(torch.float16)\nm.tolist()\nn = torch.as_tensor([1, 2])\nn.tolist()\n"
    assert findings(lint_source, body) == []


def test_cat_of_cpu_tensors_stays_on_the_cpu(lint_source):
    # With `x` on the device, `torch.cat([a, x])` would raise: a 1-D CPU input puts the result on the CPU.
    body = "a = torch.tensor([1])\nb = torch.cat([a, a])\nb.tolist()\nc = torch.cat([a, x])\nc.tolist()\nd = torch.cat([x, x])\nd.tolist()\n"
    assert findings(lint_source, body) == [(13, "VL401")]


def test_cpu_suffixed_names_are_host_side(lint_source):
    assert findings(lint_source, "seq_lens_cpu = lengths\nseq_lens_cpu.tolist()\n") == []


def test_configured_cpu_names(lint_source):
    body = "lengths.tolist()\nx.item()\n"
    assert findings(lint_source, body, cpu_names=("lengths",)) == [(8, "VL401")]


def test_configured_cpu_names_match_attributes(lint_source):
    source = (
        "import torch\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, batch):\n        return batch.seq_lens.tolist()\n"
    )
    assert lint_source(source, select=("VL401",), cpu_names=("seq_lens",)) == []


def test_item_on_an_unknown_object_is_not_enough(lint_source):
    # `value` could be a NumPy scalar, `stats` anything: unknown stays unknown.
    body = "value = self.stats()\nvalue.item()\nint(self.count)\n"
    assert findings(lint_source, body) == []


def test_int_of_a_shape_entry_is_plain_python(lint_source):
    assert findings(lint_source, "n = int(x.shape[0])\nm = int(x.size(0))\n") == []


def test_shadowed_builtin_is_not_a_conversion(lint_source):
    source = "import torch\nfrom numpy import float\n\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        return float(x)\n"
    assert lint_source(source, select=("VL401",)) == []


def test_error_path_is_cold(lint_source):
    body = "if x.dim() != 2:\n    raise ValueError(f'bad {x.max().item()}')\ntry:\n    pass\nexcept Exception:\n    print(x.item())\n"
    assert findings(lint_source, body) == []


# ---------------------------------------------------------------- VL402 host-sync-transfer
def test_cpu_and_to_cpu_are_transfers(lint_source):
    body = "a = x.cpu()\nb = x.to('cpu')\nc = x.to(device='cpu')\nd = x.to(torch.device('cpu'))\ne = x.numpy(force=True)\n"
    assert findings(lint_source, body) == [(7, "VL402"), (8, "VL402"), (9, "VL402"), (10, "VL402"), (11, "VL402")]


def test_non_blocking_copy_and_plain_numpy_are_quiet(lint_source):
    # `.numpy()` raises on a GPU tensor, so it only ever sees CPU tensors.
    body = "a = x.to('cpu', non_blocking=True)\nb = x.numpy()\nc = x.to('cuda')\nd = self.cpu()\n"
    assert findings(lint_source, body) == []


def test_cpu_of_a_cpu_tensor_is_free(lint_source):
    assert findings(lint_source, "m = torch.arange(4)\nm.cpu()\nm.to('cpu')\n") == []


# ---------------------------------------------------------------- VL403 host-sync-truthiness
def test_truth_value_of_tensors(lint_source):
    body = (
        "if x.any():\n    pass\n"
        "while (x > 0).all():\n    x = x - 1\n"
        "assert torch.all(x >= 0)\n"
        "y = 1 if x.max() > 0 else 0\n"
        "z = [i for i in range(3) if x.sum() > i]\n"
    )
    assert findings(lint_source, body) == [(7, "VL403"), (9, "VL403"), (11, "VL403"), (12, "VL403"), (13, "VL403")]


def test_callables_applied_to_tensors_give_tensors_unless_they_ask_a_question(lint_source):
    source = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self, gate, check):\n"
        "        super().__init__()\n"
        "        self.gate = gate\n"
        "        self.can_use_fast_path = check\n"
        "    def forward(self, x: torch.Tensor, fn, is_ready):\n"
        "        if self.gate(x) or fn(x):\n            pass\n"
        "        if self.can_use_fast_path(x) or is_ready(x):\n            pass\n"
    )
    expected = [(8, "VL403"), (8, "VL403")]
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS)] == expected
    # The prefilter keeps what the full walk reports.
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS, prefilter=False)] == expected


def test_and_or_not_report_each_tensor_operand_once(lint_source):
    body = "if not x.any() and lengths.sum() > 3:\n    pass\nflag = x.any() or lengths\n"
    rows = findings(lint_source, body)
    assert rows == [(7, "VL403"), (7, "VL403"), (9, "VL403")]


def test_python_tests_are_quiet(lint_source):
    body = (
        "if x is None or lengths is not None:\n    pass\n"
        "if x.shape[0] > 1 and x.dim() == 2:\n    pass\n"
        "if self.training:\n    pass\n"
        "meta = torch.tensor([1, 2])\n"
        "if (meta > 1).any():\n    pass\n"
    )
    assert findings(lint_source, body) == []


def test_a_cold_guard_short_circuits_the_rest_of_the_test(lint_source):
    body = "if step % 100 == 0 and (x < 0).any():\n    pass\nif self.debug and x.any():\n    pass\n"
    assert findings(lint_source, body) == []


def test_the_test_of_a_cold_if_is_judged_by_the_enclosing_context(lint_source):
    # `if x.any():  # viewlint: hot` — the marker covers the body, the test runs before it.
    source = (
        "import torch\n\ndef f(x: torch.Tensor):\n"
        "    if x.any():  # viewlint: hot\n        x.item()\n"
    )
    assert [(r, c) for r, c, _ in lint_source(source, select=SYNCS)] == [(5, "VL401")]


# ---------------------------------------------------------------- VL404 data-dependent-shape
def test_data_dependent_sizes(lint_source):
    body = (
        "a = x[x > 0]\n"
        "b = x.nonzero()\n"
        "c = torch.nonzero(lengths)\n"
        "d = torch.where(x > 0)\n"
        "e = torch.unique(lengths)\n"
        "f = x.masked_select(x > 0)\n"
        "x[x > 0] *= 2\n"
        "g = x[:, lengths == 0]\n"
    )
    assert findings(lint_source, body) == [(r, "VL404") for r in range(7, 15)]


def test_static_shapes_are_quiet(lint_source):
    body = (
        "x[x > 0] = 0\n"
        "del x[x > 0]\n"
        "a = torch.where(x > 0, x, 0)\n"
        "b = x.masked_fill(x > 0, 0)\n"
        "c = x[torch.arange(2)]\n"
        "meta = torch.tensor([1, 0, 2])\n"
        "d = meta[meta > 0]\n"
        "e = meta.nonzero()\n"
        "f = torch.unique(meta)\n"
    )
    assert findings(lint_source, body) == []


def test_mask_index_on_an_unknown_receiver_is_quiet(lint_source):
    assert findings(lint_source, "a = self.table[x > 0]\nb = self.lookup().nonzero()\n") == []


# ---------------------------------------------------------------- hot path gating
def test_nothing_fires_outside_a_hot_path(lint_source):
    source = (
        "import torch\n\n"
        "def evaluate(x: torch.Tensor, mask: torch.Tensor):\n"
        "    if x.any():\n        return x[mask > 0].cpu().tolist(), x.item(), x.nonzero()\n"
    )
    assert lint_source(source, select=SYNCS) == []


def test_noqa_silences_a_deliberate_sync(lint_source):
    assert findings(lint_source, "n = lengths.max().item()  # noqa: VL401\n") == []


def test_self_attributes_named_like_parameters_are_not_assumed_tensors(lint_source):
    # `self.disable_merger_proj` is a bool flag, `self.bias` often one too.
    body = "if not self.disable_merger_proj:\n    pass\nif self.bias:\n    pass\n"
    assert findings(lint_source, body) == []


def test_hyperparameters_read_from_config_are_not_tensors(lint_source):
    source = (
        "import torch\n\nclass M(torch.nn.Module):\n"
        "    def __init__(self, config):\n        self.mim_weight = config.mim_weight\n"
        "    def forward(self, x: torch.Tensor):\n        if self.mim_weight > 0 and x is not None:\n            return x\n"
    )
    assert lint_source(source, select=SYNCS) == []


def test_isinstance_guard_narrows_a_value_to_a_non_tensor(lint_source):
    body = (
        "b = self.scale()\n"
        "if isinstance(x, (int, float)) and x == 0:\n    pass\n"
        "if isinstance(x, torch.Tensor) or x == 0.0:\n    pass\n"
        "if isinstance(x, torch.Tensor) and (x == 0).all():\n    pass\n"
    )
    assert findings(lint_source, body) == [(12, "VL403")]


def test_flag_named_attributes_are_not_parameters(lint_source):
    body = "if self.use_bias and self.has_bias:\n    pass\ny = 1 if self.refresh_correction_bias else 0\n"
    assert findings(lint_source, body) == []


def test_cpu_named_attributes_feeding_torch_functions_stay_on_the_cpu(lint_source):
    body = "starts = torch.cumsum(self.meta.extend_seq_lens_cpu_int, dim=0)\nstarts.tolist()\n"
    assert findings(lint_source, body) == []


def test_isinstance_guard_anywhere_earlier_in_an_and_chain(lint_source):
    body = "if self.training and isinstance(x, (int, float)) and x == 0 and lengths is None:\n    pass\n"
    assert findings(lint_source, body) == []


def test_numpy_arrays_are_not_tensors(lint_source):
    body = "grid = lengths.cpu().numpy()\nt = grid[:, 0]\nfor size in t:\n    y = 1 if size > 1 else 0\n"
    assert findings(lint_source, body) == [(7, "VL402")]


def test_grid_metadata_tensors_are_treated_as_host_side(lint_source):
    # Processors build `grid_thw` on the CPU; whether the caller moved it is not knowable here.
    source = (
        "import torch\n\nclass V(torch.nn.Module):\n"
        "    def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):\n"
        "        sizes = grid_thw.prod(-1).tolist()\n        return x.split(sizes)\n"
    )
    assert lint_source(source, select=SYNCS) == []


def test_values_computed_from_a_cpu_named_unknown_stay_on_the_cpu(lint_source):
    source = (
        "import torch\n\nclass V(torch.nn.Module):\n"
        "    def forward(self, x, spatial_shapes, lens_cpu):\n"
        "        shapes = spatial_shapes.reshape(-1, 2).cpu()\n        return lens_cpu.float().tolist()\n"
    )
    assert lint_source(source, select=SYNCS) == []


# ---------------------------------------------------------------- device evidence and thunks
def test_a_cpu_tensor_of_one_or_more_dims_keeps_arithmetic_on_the_cpu(lint_source):
    # A device operand would raise: a 1-D CPU tensor mixes only with CPU tensors and 0-dim ones.
    body = "offsets = (torch.arange(4) * 3 + lengths[-1]).tolist()\nsums = (x.sum() + lengths[-1]).tolist()\n"
    assert findings(lint_source, body) == [(8, "VL401")]


def test_a_zero_dim_cpu_tensor_does_not_bring_the_result_to_the_cpu(lint_source):
    # `torch.tensor(2)` is 0-dim: with a device tensor the result is on the device.
    assert findings(lint_source, "(torch.tensor(2) * x).tolist()\n") == [(7, "VL401")]


def test_a_lambda_without_parameters_is_a_thunk_and_cold(lint_source):
    body = (
        "torch._check(x.shape[0] > 0, lambda: f'bad sum {int(x.sum())}')\n"
        "sizes = sorted(range(3), key=lambda i: int(lengths[i]))\n"
    )
    assert findings(lint_source, body) == [(8, "VL401")]


def test_device_type_guards_say_where_the_tensor_is(lint_source):
    body = (
        "if lengths.device.type != 'cpu':\n"
        "    return None\n"
        "a = lengths.tolist()\n"
        "if x.is_cpu:\n"
        "    b = x.tolist()\n"
        "if 'cuda' == x.device.type:\n"
        "    c = x.tolist()\n"
    )
    assert findings(lint_source, body) == [(13, "VL401")]


def test_rows_of_grid_metadata_the_name_puts_on_the_cpu_stay_there(lint_source):
    # Nothing in the code moves `grid_thw`; its rows, and arithmetic with host hyperparameters set in
    # `__init__` from an `int` or a config read, stay on the CPU.
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class V(nn.Module):\n"
        "    def __init__(self, config, merge: int = 2):\n"
        "        super().__init__()\n"
        "        self.merge = merge\n"
        "        self.unit = self.merge ** 2\n"
        "        size: int = config.window_size\n"
        "        self.window = size // self.merge\n"
        "    def forward(self, x, grid_thw):\n"
        "        offset = 0\n"
        "        for t, h, w in grid_thw:\n"
        "            n = (t * (h // self.merge) * (w // self.merge)).item()\n"
        "            lengths = (torch.arange(n) * self.unit + offset).tolist()\n"
        "            offset += n\n"
        "        return x\n"
    )
    assert lint_source(source, select=SYNCS) == []


def test_rows_of_a_device_tensor_are_on_the_device(lint_source):
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class V(nn.Module):\n"
        "    def forward(self, x, grid_thw: torch.Tensor):\n"
        "        grid_thw = grid_thw.to(x.device)\n"
        "        for row in grid_thw:\n"
        "            n = row.item()\n"
        "        return x\n"
    )
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS)] == [(7, "VL401")]


def test_a_slice_of_a_cpu_tensor_keeps_a_dimension_and_the_cpu(lint_source):
    # `seq_lens_cpu[:bs]` is at least 1-D: with an operand of unknown kind the result stays on the CPU,
    # through a cast, a comparison and a `cat` with a CPU pad.
    source = (
        "import torch\n"
        "from torch import nn\n"
        "from .ctx import get_exec\n"
        "class R(nn.Module):\n"
        "    def forward(self, x: torch.Tensor, seq_lens_cpu: torch.Tensor, bs: int):\n"
        "        interval = get_exec().track_interval\n"
        "        mask = (seq_lens_cpu[:bs].to(torch.int64) % interval) == 0\n"
        "        pad = torch.zeros((bs - mask.shape[0],), dtype=torch.bool)\n"
        "        flags = torch.cat([mask, pad]).cpu()\n"
        "        first = (seq_lens_cpu[0].to(torch.int64) % interval).item()\n"
        "        return x\n"
    )
    # `seq_lens_cpu[0]` is 0-dim: with an unknown operand nothing says where the result is.
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS)] == [(10, "VL401")]


def test_inputs_unpacked_from_a_list_comprehension_say_where_the_result_is(lint_source):
    body = (
        "grid = torch.stack(torch.meshgrid(*[torch.linspace(0, 1, 5)[:4] for _ in range(3)], indexing='ij'))\n"
        "top = grid.view(-1).max().item()\n"
        "moved = torch.stack(torch.meshgrid(*[torch.linspace(0, 1, 5, device=x.device) for _ in range(3)]))\n"
        "last = moved.max().item()\n"
    )
    assert findings(lint_source, body) == [(10, "VL401")]


def test_grid_metadata_guessed_on_the_cpu_does_not_bring_unknown_operands_there(lint_source):
    # Models that move their inputs put `image_grid_thw` on the device: the name is only a guess, so a slice
    # of it mixed with something unknown may be on the device (unlike `torch.arange(n)[:k]`, made on the CPU).
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class M(nn.Module):\n"
        "    def forward(self, x: torch.Tensor, image_grid_thw: torch.LongTensor, merge):\n"
        "        merged_h, merged_w = (image_grid_thw[:, 1:] // merge).unbind(-1)\n"
        "        sizes = (merged_h * (merged_w + 1) + 2).tolist()\n"
        "        made = (torch.arange(8)[:4] // merge).tolist()\n"
        "        return x\n"
    )
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS)] == [(6, "VL401")]


def test_an_attribute_path_every_method_moves_to_the_cpu_is_read_on_the_host(lint_source):
    source = (
        "from dataclasses import dataclass\n"
        "from typing import Optional\n"
        "import torch\n"
        "from torch import nn\n"
        "@dataclass\n"
        "class Metadata:\n"
        "    prefix_lens: Optional[torch.Tensor] = None\n"
        "    starts: Optional[torch.Tensor] = None\n"
        "class Backend(nn.Module):\n"
        "    def init_metadata(self, batch):\n"
        "        self.meta = Metadata()\n"
        "        self.meta.prefix_lens = batch.prefix_lens.to('cpu')\n"
        "        self.meta.starts = batch.starts\n"
        "    def forward(self, x: torch.Tensor):\n"
        "        a = self.meta.prefix_lens.cumsum(0).tolist()\n"
        "        c = self.meta.starts.tolist()\n"
        "        return x\n"
    )
    # `self.meta.starts` is set to whatever the batch holds: nothing says it is on the host.
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS)] == [(16, "VL401")]


def test_a_private_helper_every_caller_passes_a_number_is_not_given_a_tensor(lint_source):
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class Encoder(nn.Module):\n"
        "    def _output_lengths(self, input_lengths: torch.LongTensor):\n"
        "        return int((input_lengths - 127) / 64 + 1)\n"
        "    def output_lengths(self, input_lengths: torch.LongTensor):\n"
        "        return int((input_lengths - 127) / 64 + 1)\n"
        "    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor):\n"
        "        n = self._output_lengths(attention_mask.shape[-1])\n"
        "        m = self.output_lengths(attention_mask.shape[-1])\n"
        "        return x[:, :n + m]\n"
    )
    # A public method may be called from elsewhere with a tensor: its annotation stands.
    assert [(row, code) for row, code, _ in lint_source(source, select=SYNCS)] == [(7, "VL401")]


def test_the_batch_sizes_of_a_packed_sequence_are_on_the_host(lint_source):
    body = "data, batch_sizes, order, unorder = x\nwidest = int(batch_sizes[0])\n"
    assert findings(lint_source, body) == []


def test_builtin_max_and_min_of_device_tensors_sync_on_each_comparison():
    from conftest import lint_both_paths

    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Router(nn.Module):
            def __init__(self):
                super().__init__()
                self.gate = nn.Linear(16, 8)

            def forward(self, x: torch.Tensor, lengths: torch.Tensor, n: int):
                scores = self.gate(x)
                top = max(lengths)
                cap = min(scores.amax(), n)
                plain = max(n, 4, x.shape[0])
                host = max(torch.tensor([1, 2]))
                return scores[:top], cap, plain, host
    """).lstrip("\n")
    # (`scores[:top]` then reads the 0-dim tensor `max(lengths)` gives as an int: VL401.)
    assert lint_both_paths(source) == [(12, "VL403"), (13, "VL403"), (16, "VL401")]


def test_builtin_max_outside_a_hot_path_or_of_the_modules_own_max_is_quiet():
    from conftest import lint_both_paths

    source = textwrap.dedent("""
        import torch


        def max(a, b):
            return a


        def report(lengths: torch.Tensor, other: torch.Tensor):
            return min(lengths), max(lengths, other)
    """).lstrip("\n")
    assert lint_both_paths(source) == []
