"""Kinds of code met in pass seventeen: audit 11's false findings on libraries the team had never read (fairseq,
lerobot, audiocraft, colossalai, torchrec, fairscale, ...) and round eight's blind probes. Each kind is checked with
the prefilter on and off, and with real torch where the finding claims something about run time."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from conftest import lint_both_paths, run_viewlint
from viewlint.analysis.guards import cold_test, switch_locals


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


def _lint_package(root: Path, **modules: str) -> list[tuple[str, int, str]]:
    """(file, row, code) of every finding in a package `pkg` of `modules`, the same with the prefilter on and off."""
    folder = root / "pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source).lstrip("\n"))
    found = []
    for extra in ((), ("--no-prefilter",)):
        completed = run_viewlint("check", "--isolated", "--no-cache", "--select", "ALL", "--exit-zero", *extra,
                                 "--output-format", "json", "pkg", cwd=root)
        found.append(sorted((Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in json.loads(completed.stdout)))
    assert found[0] == found[1]
    return found[0]


# ---------------------------------------------------------------- a constructor parameter a config dataclass declares
BASE = """
    import torch.nn as nn

    CRITERIONS = {}


    def register_criterion(name, dataclass=None):
        def wrap(cls):
            CRITERIONS[name] = (cls, dataclass)
            return cls
        return wrap


    class BaseCriterion(nn.Module):
        def __init__(self, task):
            super().__init__()
            self.task = task
"""

CTC = """
    from dataclasses import dataclass, field

    import torch.nn.functional as F

    from .base import BaseCriterion, register_criterion


    @dataclass
    class CtcLossConfig:
        ctc_weight: float = field(default=0.0)


    @register_criterion("ctc", dataclass=CtcLossConfig)
    class CtcLoss(BaseCriterion):
        def __init__(self, task, ctc_weight):
            super().__init__(task)
            self.ctc_weight = ctc_weight

        def forward(self, model, sample):
            logits = model(sample["input"])
            loss = F.cross_entropy(logits, sample["target"])
            if self.ctc_weight > 0.0:
                loss = loss + self.ctc_weight * logits.logsumexp(-1).mean()
            return loss


    class ClassWeightedLoss(BaseCriterion):
        def __init__(self, task, class_weight):
            super().__init__(task)
            self.class_weight = class_weight

        def forward(self, model, sample):
            logits = model(sample["input"])
            if (self.class_weight > 0).all():
                return F.cross_entropy(logits, sample["target"], weight=self.class_weight)
            return F.cross_entropy(logits, sample["target"])
"""


def test_a_constructor_parameter_a_config_dataclass_declares_a_float_is_a_float(tmp_path):
    # fairseq's criterions (audit 11, 7 false VL403): `@register_criterion("ctc", dataclass=CtcLossConfig)` builds the
    # criterion from the config's fields by name, so `self.ctc_weight` is the float the config declares, not a
    # weight tensor its name suggests. A weight nothing declares (`class_weight`) keeps its finding.
    assert _lint_package(tmp_path, base=BASE, ctc=CTC) == [("ctc.py", 34, "VL403")]


# ---------------------------------------------------------------- work on an interval, through a local or a counter
INTERVAL = """
    import torch
    import torch.nn as nn


    class Pruner(nn.Module):
        def __init__(self, pruning_interval):
            super().__init__()
            self.pruning_interval = pruning_interval
            self.row_util = nn.Parameter(torch.zeros(100))

        def reset(self, ids):
            pruned = torch.unique(ids[self.row_util[ids] < 1])
            self.row_util.data[pruned] = 0

        def forward(self, x, cur_iter):
            start_pruning: bool = (cur_iter < 10 and (cur_iter + 1) % 3 == 0) or ((cur_iter + 1) % self.pruning_interval == 0)
            if start_pruning and self.training:
                self.reset(x)
            return x * 2


    class EveryStep(Pruner):
        def clear(self, ids):
            return torch.unique(ids[self.row_util[ids] < 1])

        def forward(self, x, cur_iter):
            self.clear(x)
            return x * 2
"""


def test_a_local_set_to_an_interval_test_guards_cold_work():
    # torchrec's ITEP (audit 11): `start_pruning: bool = (...) % self.pruning_interval == 0`, then
    # `if start_pruning and self.training:` prunes once an interval. The same call on every step is reported.
    assert _lint(INTERVAL) == [(24, "VL404")]


def test_interval_tests_read_by_the_guards():
    def parsed(text: str) -> ast.expr:
        return ast.parse(text, mode="eval").body

    # torchrec's managed collision module: `now - last == interval` runs once an interval has passed.
    assert cold_test(parsed("self._current_iter - self._last_eviction_iter == self._eviction_interval"))
    assert cold_test(parsed("step - last_logged >= log_every"))
    assert cold_test(parsed("cur_iter < 10"))  # the first few steps only
    # Not intervals: a difference of positions, a layer index, a bound that is not a constant.
    assert not cold_test(parsed("end - start == length"))
    assert not cold_test(parsed("layer_id < 10"))
    assert not cold_test(parsed("cur_iter < warmup"))
    assert not cold_test(parsed("num_steps < 2")) and not cold_test(parsed("len(self.steps) < 1"))  # counts of steps
    function = ast.parse("def f(step, every):\n    due: bool = step % every == 0\n    last = end - start >= length\n"
                         "    big = step > 3\n")
    assert switch_locals(list(ast.walk(function)), frozenset()) == {"due"}


# ---------------------------------------------------------------- a GQA repeat before a mask that may be None
SDPA_MASK = """
    import torch


    def repeat_kv(hidden_states, n_rep):
        batch, num_key_value_heads, slen, head_dim = hidden_states.shape
        if n_rep == 1:
            return hidden_states
        hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
        return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


    def sdpa_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
        key = repeat_kv(key, module.num_key_value_groups)
        value = repeat_kv(value, module.num_key_value_groups)
        causal_mask = attention_mask
        if attention_mask is not None and causal_mask.ndim == 4:
            causal_mask = causal_mask[:, :, :, : key.shape[-2]]
        is_causal = query.shape[2] > 1 and causal_mask is None
        return torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=causal_mask, dropout_p=dropout, scale=scaling, is_causal=is_causal
        )


    def masked_attention_forward(module, query, key, value, attention_mask):
        key = repeat_kv(key, module.num_key_value_groups)
        value = repeat_kv(value, module.num_key_value_groups)
        return torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)


    class Attention(torch.nn.Module):
        def __init__(self, heads=8, kv_heads=2, head_dim=8, attn_fn=sdpa_attention_forward):
            super().__init__()
            self.num_key_value_groups = heads // kv_heads
            self.q_proj = torch.nn.Linear(heads * head_dim, heads * head_dim)
            self.k_proj = torch.nn.Linear(heads * head_dim, kv_heads * head_dim)
            self.v_proj = torch.nn.Linear(heads * head_dim, kv_heads * head_dim)
            self.head_dim = head_dim
            self.attn_fn = attn_fn

        def forward(self, hidden_states, attention_mask=None):
            shape = (*hidden_states.shape[:-1], -1, self.head_dim)
            q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
            k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
            v = self.v_proj(hidden_states).view(shape).transpose(1, 2)
            return self.attn_fn(self, q, k, v, attention_mask)
"""


def test_a_mask_the_function_tests_against_none_does_not_excuse_the_repeat():
    # transformers PR #39412 (round eight): `causal_mask = attention_mask` after `if attention_mask is not None`: the
    # maskless calls, which could pass `enable_gqa=True` to the flash kernel, pay for the repeated heads. A mask
    # the function never doubts (`masked_attention_forward`) still excuses them (the math kernel repeats anyway).
    assert _lint(SDPA_MASK) == [(13, "VL303"), (14, "VL303")]


def test_gqa_without_the_repeat_gives_the_same_attention():
    torch = pytest.importorskip("torch")
    if "enable_gqa" not in (torch.nn.functional.scaled_dot_product_attention.__doc__ or ""):
        pytest.skip("this torch has no enable_gqa")
    q, k, v = torch.randn(1, 8, 5, 16), torch.randn(1, 2, 5, 16), torch.randn(1, 2, 5, 16)
    repeated = torch.nn.functional.scaled_dot_product_attention(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1))
    shared = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert torch.allclose(repeated, shared, atol=1e-5)


# ---------------------------------------------------------------- a dump switched on by an environment variable
DUMP = """
    import os

    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lm_head = nn.Linear(8, 32)

        def _maybe_dump_logits(self, dump_dir, logits):
            torch.save(logits.detach().float().cpu(), os.path.join(dump_dir, "logits.pt"))

        def _log_logits(self, logits):
            print(logits.detach().float().cpu().max())

        def forward(self, hidden):
            output = self.lm_head(hidden)
            dump_dir = os.environ.get("MODEL_LOGIT_DUMP")
            if dump_dir is not None:
                self._maybe_dump_logits(dump_dir, output)
            self._log_logits(output)
            return output
"""


def test_a_local_set_from_a_dump_variable_of_the_environment_guards_cold_work():
    # torchtitan's HF backend (audit 11): `_dump_dir = os.environ.get("HF_BACKEND_LOGIT_DUMP")`, then
    # `if _dump_dir is not None:` dumps the logits for a numerical test only. The copy on every call is reported.
    assert _lint(DUMP) == [(16, "VL402")]


# ---------------------------------------------------------------- an annotation through a module's type alias
ALIAS = """
    from typing import Dict

    import torch


    class Batch:
        def __init__(self, values, index):
            self.values = values
            self.index = index


    Activations = Dict[int, Dict[int, Dict[int, Batch]]]


    def run_invocations(batch: Batch, order: torch.Tensor, stage, activations: Activations, model):
        activations[stage][order][batch.index] = Batch(model(batch.values), batch.index)
        return activations


    def write_rows(buffer: torch.Tensor, rows: torch.Tensor, value):
        buffer[rows][:, 0] = value
"""


def test_an_annotation_names_a_type_alias_of_the_module():
    # fairscale's pipeline (audit 11, 2 false VL202): `activations: Activations` with
    # `Activations = Dict[int, Dict[int, Dict[int, Batch]]]`: `activations[stage][order]` looks a dict up, whatever
    # `order` is. A tensor indexed by a tensor still gathers into a copy.
    assert _lint(ALIAS) == [(21, "VL202")]


def test_a_chained_store_through_a_gather_is_lost_on_real_torch():
    torch = pytest.importorskip("torch")
    buffer, rows = torch.zeros(4, 3), torch.tensor([0, 2])
    buffer[rows][:, 0] = 1.0
    assert buffer.sum().item() == 0.0  # the write landed in the gathered copy
    activations: dict = {0: {1: {}}}
    activations[0][1][5] = "batch"
    assert activations[0][1][5] == "batch"


# ---------------------------------------------------------------- a lambda's parameter is its own name
LAMBDAS = """
    import functools

    import torch.nn as nn


    class ShardedDDP(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module
            self._grad_to_be_reduced = []
            self._all_params = list(module.parameters())

        def refresh_trainable(self):
            if functools.reduce(lambda x, y: x or y, self._grad_to_be_reduced, False):
                print("grads waiting to be reduced")
            self._trainable_params = sorted(filter(lambda x: x.requires_grad, self._all_params), key=lambda x: x.numel())
            self._grad_to_be_reduced = [True for _ in self._trainable_params]

        def forward(self, *inputs, **kwargs):
            self.refresh_trainable()
            return self.module(*inputs, **kwargs)
"""


def test_what_a_lambda_reads_off_its_parameter_says_nothing_of_another_lambdas():
    # fairscale's ShardedDDP (audit 11): `lambda x: x.numel()` reads a parameter's `x`; `lambda x, y: x or y` folds
    # a list of bools. Each lambda's `x` is its own name.
    assert _lint(LAMBDAS) == []


# ---------------------------------------------------------------- a metric's update, hot by its class's kind
METRIC = """
    import torch


    class Metric:
        def reset(self):
            raise NotImplementedError

        def update(self, output):
            raise NotImplementedError


    class MeanSquaredError(Metric):
        def __init__(self, device="cuda"):
            self._device = device
            self.reset()

        def reset(self):
            self._sum_of_squared_errors = 0.0
            self._num_examples = 0

        def update(self, output):
            y_pred, y = output
            squared_errors = torch.pow(y_pred - y.view_as(y_pred), 2)
            self._sum_of_squared_errors += torch.sum(squared_errors).item()
            self._num_examples += y.shape[0]
"""


def test_a_metrics_update_is_hot_with_the_prefilter_on():
    # ignite PR #1238 (round eight): `update()` runs once per batch; the prefilter had judged it cold (it read hot
    # functions by name, not by the class's kind), so the `.item()` was found only with `--no-prefilter`.
    assert _lint(METRIC) == [(24, "VL401")]


# ---------------------------------------------------------------- parameters pointed at narrowed pieces of one buffer
NARROWED = """
    import torch
    import torch.nn as nn


    class Adapter(nn.Module):
        def __init__(self, sizes):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(s, s) for s in sizes])

        def flatten_parameters(self):
            params = list(self.parameters())
            flat = torch.cat([p.detach().reshape(-1) for p in params])
            offset = 0
            for p in params:
                n = p.numel()
                p.data = flat.narrow(0, offset, n).view_as(p)
                offset += n
            return flat


    def export(adapter, path):
        adapter.flatten_parameters()
        torch.save(adapter.state_dict(), path)


    def export_cloned(adapter, path):
        adapter.flatten_parameters()
        torch.save({k: v.clone() for k, v in adapter.state_dict().items()}, path)
"""


def test_parameters_pointed_at_narrowed_pieces_save_the_whole_buffer():
    # A flattened-parameter trainer (round eight's IP-Adapter probe): `p.data = flat.narrow(0, offset, n).view_as(p)`
    # makes every entry of `state_dict()` a view of `flat`, as `flat[offset:offset + n]` does. (VL101, opt-in, reads
    # the re-pointing itself as a store of a view.)
    assert _lint(NARROWED) == [(16, "VL101"), (23, "VL103")]


def test_a_narrowed_parameter_saves_its_buffer_on_real_torch(tmp_path):
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(64, 64)
    flat = torch.zeros(64 * 64 * 8)
    layer.weight.data = flat.narrow(0, 0, 64 * 64).view_as(layer.weight)
    torch.save({"w": layer.weight}, tmp_path / "view.pt")
    torch.save({"w": layer.weight.clone()}, tmp_path / "clone.pt")
    assert (tmp_path / "view.pt").stat().st_size > 4 * (tmp_path / "clone.pt").stat().st_size


# ---------------------------------------------------------------- a loop that runs the model a wrapper holds
WRAPPED = """
    import torch


    def evaluate(model, loader, device):
        model.eval()
        total_correct = 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            pred = model.module(x).argmax(dim=-1)
            total_correct += int((pred == y).sum())
        return total_correct
"""


def test_a_loop_that_runs_the_wrapped_model_is_a_step_loop():
    # pytorch_geometric PR #9896 (round eight): `model.module(x)` runs the model DDP wraps, once per batch.
    assert _lint(WRAPPED) == [(10, "VL401")]


# ---------------------------------------------------------------- the function spelling of an update assigned back
INDEX_ADD = """
    import torch
    import torch.nn as nn


    class KVCache(nn.Module):
        def __init__(self, shape):
            super().__init__()
            self.register_buffer("k", torch.zeros(shape), persistent=False)
            self.register_buffer("v", torch.zeros(shape), persistent=False)

        def forward(self, input_pos, k, v):
            k = self.k = torch.index_add(self.k, 2, input_pos, k)
            v = self.v = torch.index_add(self.v, 2, input_pos, v)
            return k, v


    class KVCacheInPlace(KVCache):
        def forward(self, input_pos, k, v):
            k = self.k.index_copy_(2, input_pos, k)
            v = self.v.index_copy_(2, input_pos, v)
            return k, v
"""


def test_an_update_spelled_as_a_torch_function_and_assigned_back_is_reported():
    # lightning-thunder PR #788 (round eight): `k = self.k = torch.index_add(self.k, 2, input_pos, k)` copies the
    # whole cache on every decode step, as `self.k = self.k.index_add(...)` does.
    assert _lint(INDEX_ADD) == [(12, "VL304"), (13, "VL304")]


# ---------------------------------------------------------------- a strided tensor passed to a tensor method
GATHER = """
    import torch


    def selective_log_softmax(logits, index):
        per_token = []
        for row_logits, row_labels in zip(logits, index):
            row_logps = torch.log_softmax(row_logits, dim=-1)
            per_token.append(row_logps.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
        return torch.stack(per_token)


    def token_logps(logits, batch):
        shift_labels = batch["completion_input_ids"][:, 1:].contiguous()
        return selective_log_softmax(logits[:, :-1], shift_labels)
"""


def test_contiguous_before_a_tensor_methods_index_argument_is_avoidable():
    # trl PR #6046 (round eight): the labels only index `gather`, which takes any layout.
    assert _lint(GATHER) == [(13, "VL306")]


# ---------------------------------------------------------------- a deep copy of a piece of a flat tensor
DEEPCOPY = """
    import copy

    import torch


    class WeightSync:
        def __init__(self):
            self._snapshots = {}

        def push(self, workers, flat_weights):
            for worker, shard in zip(workers, flat_weights.chunk(len(workers))):
                self._snapshots[id(worker)] = copy.deepcopy(shard)
                worker.receive(self._snapshots[id(worker)])


    class WeightSyncCloned(WeightSync):
        def push(self, workers, flat_weights):
            for worker, shard in zip(workers, flat_weights.chunk(len(workers))):
                self._snapshots[id(worker)] = shard.detach().clone()
                worker.receive(self._snapshots[id(worker)])
"""


def test_a_deep_copy_of_a_view_keeps_a_copy_of_its_whole_storage():
    # pytorch/pytorch#182105 (round eight): `Tensor.__deepcopy__` copies all of a view's storage.
    assert _lint(DEEPCOPY) == [(12, "VL101")]


def test_a_deep_copy_of_a_view_copies_its_whole_storage_on_real_torch():
    torch = pytest.importorskip("torch")
    import copy

    flat = torch.zeros(1000)
    assert copy.deepcopy(flat[:10]).untyped_storage().nbytes() == 4000
    assert flat[:10].clone().untyped_storage().nbytes() == 40


# ---------------------------------------------------------------- the top rows of a batch sorted by a permutation
PERMUTED = """
    import torch.nn.functional as F


    class HardExamples:
        def __init__(self, k=4):
            self.k = k
            self.history = []

        def update(self, logits, targets):
            order = F.cross_entropy(logits, targets, reduction="none").argsort(descending=True)
            ranked = logits.detach()[order]
            self.history.append(ranked[: self.k])

        def update_topk(self, logits, targets):
            worst = F.cross_entropy(logits, targets, reduction="none").topk(self.k).indices
            self.history.append(logits.detach()[worst])

        def reset_rows(self, buffer, scores):
            buffer[scores.argsort()].zero_()
"""


def test_rows_of_a_gather_by_a_permutation_keep_the_whole_gather():
    # pytorch/pytorch#40157 (round eight's hard-example tracker): `logits[order]` by an `argsort` is a copy of the
    # whole batch, and `[: k]` of it keeps all of it. A gather by `topk` indices owns just what it picked.
    # A gather by a permutation is still a gather: zeroing it in place writes a temporary (VL201).
    assert _lint(PERMUTED) == [(12, "VL101"), (19, "VL201")]


# ---------------------------------------------------------------- an interval that guards the optimizer's step
ACCUMULATING = """
    import torch


    def train(model, optimizer, loader, gas, log_every):
        steps_in_epoch = len(loader)
        for step, batch in enumerate(loader):
            loss = model(batch).mean() / gas
            loss.backward()
            do_sync_step = (step + 1) % gas == 0 or (step + 1) == steps_in_epoch
            do_log = (step + 1) % log_every == 0
            if do_sync_step:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                print(loss.detach().item())
                optimizer.step()
                optimizer.zero_grad()
            if do_log:
                print(loss.item())
"""


def test_an_interval_that_guards_the_optimizer_step_is_the_step_itself():
    # transformers' Trainer: `do_sync_step = (step + 1) % gradient_accumulation_steps == 0 or ...` guards the
    # optimizer's step, so what it guards runs on every optimizer step; `do_log` guards logging on an interval.
    assert _lint(ACCUMULATING) == [(13, "VL401")]


BRAIN = """
    import torch


    class Brain:
        def __init__(self, modules, optimizer, grad_accumulation_factor=1):
            self.modules, self.optimizer = modules, optimizer
            self.grad_accumulation_factor = grad_accumulation_factor
            self.step = 0

        def optimizers_step(self):
            self.optimizer.step()
            self.optimizer.zero_grad()

        def fit_batch(self, batch):
            self.step += 1
            should_step = (self.step % self.grad_accumulation_factor) == 0
            loss = self.modules(batch).mean()
            loss.backward()
            if should_step:
                if not torch.isfinite(loss).all():
                    self.optimizer.zero_grad()
                self.optimizers_step()
            return loss.detach()
"""


def test_a_block_that_calls_the_optimizers_step_is_the_step_itself():
    # speechbrain's `Brain.fit_batch`: `if should_step: self.optimizers_step()`, an optimizer step per accumulation
    # window; the check of the loss it makes first is a sync on every optimizer step.
    assert _lint(BRAIN) == [(20, "VL403")]


# ---------------------------------------------------------------- an object handed to a constructor
INJECTED = """
    import pickle

    import torch


    class StorageClient:
        def __init__(self):
            self.store = {}

        def put(self, keys, values):
            for key, value in zip(keys, values):
                self.store[key] = pickle.dumps(value)


    class StorageManager:
        def __init__(self, storage_client):
            self.storage_client = storage_client

        def put_data(self, data, indexes):
            keys = [f"{i}@{name}" for name in sorted(data) for i in indexes]
            values = [row for name in sorted(data) for row in data[name]]
            self.storage_client.put(keys, values)


    def main():
        client = StorageClient()
        manager = StorageManager(client)
        manager.put_data({"ids": torch.randint(0, 100, (64, 256))}, list(range(64)))
"""


def test_an_object_every_construction_passes_is_what_the_attribute_holds():
    # TransferQueue PR #170 (round eight): the manager's `self.storage_client` is the client its construction is
    # given, so `self.storage_client.put(keys, values)` runs `StorageClient.put`, which pickles row views of the batch.
    assert _lint(INJECTED) == [(12, "VL103")]


def test_pickling_a_row_view_writes_its_whole_batch_on_real_torch():
    torch = pytest.importorskip("torch")
    import pickle

    batch = torch.zeros(64, 256)
    assert len(pickle.dumps(batch[3])) > 30 * len(pickle.dumps(batch[3].clone()))  # the whole batch, not one row


DECOMPOSITION = """
    import torch
    from torch._decomp import register_decomposition

    aten = torch.ops.aten


    def _nll_loss_backward(grad_output, self, target, channel_dim):
        grad_input = torch.zeros_like(self)
        grad_input = torch.scatter(grad_input, channel_dim, target.unsqueeze(channel_dim), -1.0)
        return grad_input * grad_output


    @register_decomposition(aten.nll_loss_backward)
    def nll_loss_backward(grad_output, self, target):
        return _nll_loss_backward(grad_output, self, target, 1)
"""


def test_a_helper_of_a_module_that_registers_decompositions_stays_functional():
    # torch's `_decomp/decompositions.py`: the helpers of registered decompositions are traced too, so the
    # out-of-place `torch.scatter` assigned back is the point (found on torch once the function spelling was read).
    assert _lint(DECOMPOSITION) == []


# ---------------------------------------------------------------- a join grown after a first pass that sets the piece
FIRST_PASS = """
    import torch


    def decode(step, decoder_input, max_steps):
        outputs = torch.zeros([1])
        first_iter = True
        for _ in range(max_steps):
            out = step(decoder_input)
            if first_iter:
                outputs = out.unsqueeze(0)
                first_iter = False
            else:
                outputs = torch.cat((outputs, out.unsqueeze(0)), dim=0)
            decoder_input = out
        return outputs


    def decode_listed(step, decoder_input, max_steps):
        outputs = []
        for _ in range(max_steps):
            out = step(decoder_input)
            outputs.append(out)
            decoder_input = out
        return torch.stack(outputs)


    def decode_windowed(step, decoder_input, max_steps, window):
        outputs = torch.zeros([1])
        first_iter = True
        for _ in range(max_steps):
            out = step(decoder_input)
            if first_iter:
                outputs = out.unsqueeze(0)
                first_iter = False
            else:
                outputs = torch.cat((outputs, out.unsqueeze(0)), dim=0)
            outputs = outputs[-window:]
            decoder_input = out
        return outputs
"""


def test_a_join_grown_after_the_loops_first_pass_is_reported():
    # torchaudio PR #1850 (round nine): Tacotron2's `infer` sets its outputs on the first pass (`if first_iter:`) and
    # grows them with `torch.cat` on every later one. A list stacked once, or a window kept, is silent.
    assert _lint(FIRST_PASS) == [(13, "VL309")]


# ---------------------------------------------------------------- per-step methods by the class's own name
KINDS_BY_NAME = """
    import torch


    class NEMetric:
        def __init__(self):
            self.sum = None

        def _update(self, predictions, labels, weights):
            has_valid_weights = weights.sum(dim=-1) > 0
            if torch.any(has_valid_weights):
                self.sum = (predictions - labels).abs().sum()


    class LoadBalanceLoss:
        def __init__(self, num_experts):
            self.num_experts = num_experts

        def __call__(self, scores, topk_ids):
            counts = torch.bincount(topk_ids.flatten(), minlength=self.num_experts)
            return (counts.float() * scores.mean(0)).sum()


    class Collator:
        def __call__(self, ids):
            return torch.bincount(ids.flatten())
"""


def test_a_metrics_private_update_and_a_loss_objects_call_run_per_step():
    # torchrec PR #408 and pith-train PR #44 (round nine): a class named `*Metric` runs `_update` (what `update`
    # delegates to) for every batch; a plain class named `*Loss` is called once per step. A collator is not.
    assert _lint(KINDS_BY_NAME) == [(10, "VL403"), (19, "VL404")]


# ---------------------------------------------------------------- functions handed to a function or a constructor
HANDED = """
    import torch


    def clip_grad_norm_(parameters, max_norm):
        grads = [p.grad for p in parameters if p.grad is not None]
        total_norm = torch.norm(torch.stack([torch.norm(g) for g in grads]))
        clip_coef = max_norm / (total_norm + 1e-6)
        if clip_coef < 1:
            for g in grads:
                g.mul_(clip_coef)
        return total_norm


    def to_dense_batch(x, batch, max_num_nodes):
        num_nodes = torch.bincount(batch)
        if num_nodes.max() > max_num_nodes:
            raise ValueError("too many nodes")
        return x


    def train_step(model, optimizer, batch, clip_fn, max_norm=1.0):
        loss = model(batch).mean()
        loss.backward()
        clip_fn(model.parameters(), max_norm)
        optimizer.step()


    class Readout(torch.nn.Module):
        def __init__(self, dense_fn, max_num_nodes):
            super().__init__()
            self.dense_fn = dense_fn
            self.max_num_nodes = max_num_nodes

        def forward(self, x, batch):
            return self.dense_fn(x, batch, self.max_num_nodes).sum(1)


    def main(model, optimizer, loader):
        readout = Readout(to_dense_batch, 16)
        for batch in loader:
            train_step(model, optimizer, batch, clip_grad_norm_)
        return readout
"""


def test_functions_the_module_hands_over_run_where_they_are_called():
    # pytorch PR #61042 and pytorch_geometric PR #10660 (round nine): `clip_fn(...)` in a training step runs the
    # `clip_grad_norm_` its callers pass; `self.dense_fn(...)` in `forward` runs the `to_dense_batch` the construction
    # passes. Their syncs run on every step.
    assert _lint(HANDED) == [(8, "VL403"), (15, "VL404"), (16, "VL403")]


# ---------------------------------------------------------------- pieces of a split along a later dimension
SHARDS = """
    import torch


    class ShardLoader:
        def __init__(self, tp_size, tp_rank):
            self.tp_size, self.tp_rank = tp_size, tp_rank
            self.weights = {}

        def load_rows(self, state_dict):
            for name, tensor in state_dict.items():
                self.weights[name] = torch.chunk(tensor, self.tp_size, dim=0)[self.tp_rank].contiguous()

        def load_columns(self, state_dict):
            for name, tensor in state_dict.items():
                self.weights[name] = torch.chunk(tensor, self.tp_size, dim=1)[self.tp_rank].contiguous()
"""


def test_contiguous_of_a_piece_split_along_a_later_dimension_owns_its_storage():
    # LightX2V PR #1390 (round nine): `.contiguous()` of a row shard returns the view, which keeps the whole
    # checkpoint tensor; of a column shard (`dim=1`) it copies, so the column shard owns its storage.
    assert _lint(SHARDS) == [(11, "VL102")]


def test_contiguous_of_a_column_shard_copies_on_real_torch():
    torch = pytest.importorskip("torch")
    weight = torch.randn(8, 6)
    rows, columns = torch.chunk(weight, 2, dim=0)[1], torch.chunk(weight, 2, dim=1)[1]
    assert rows.contiguous().untyped_storage().data_ptr() == weight.untyped_storage().data_ptr()
    assert columns.contiguous().untyped_storage().nbytes() == columns.numel() * 4


# ---------------------------------------------------------------- a tensor an object of the module's classes makes
SCHEDULED = """
    import numpy as np
    import torch


    class EulerScheduler:
        def __init__(self, num_inference_steps, device):
            self.timesteps_np = np.linspace(1.0, 0.0, num_inference_steps) * 1000.0
            self.timesteps = torch.from_numpy(self.timesteps_np).float().to(device)

        def step(self, model_output, i, sample):
            return sample - model_output / len(self.timesteps_np)


    class Pipeline:
        def __init__(self, transformer, scheduler):
            self.transformer = transformer
            self.scheduler = scheduler

        def __call__(self, latents):
            for i, t in enumerate(self.scheduler.timesteps):
                timestep = t.expand(latents.shape[0])
                t_norm = timestep[0].item()
                noise_pred = self.transformer(latents, timestep * t_norm)
                latents = self.scheduler.step(noise_pred, i, latents)
            return latents


    def generate(transformer, latents):
        return Pipeline(transformer, EulerScheduler(30, "cuda"))(latents)
"""


def test_a_tensor_an_object_of_the_modules_classes_makes_is_read_through_the_object():
    # vllm-omni PR #1105 (round nine): `self.scheduler.timesteps`, which the scheduler class makes with
    # `torch.from_numpy(...).float().to(device)`, is a device tensor: `timestep[0].item()` syncs once per step.
    assert _lint(SCHEDULED) == [(22, "VL401")]
