"""Kinds of code written fresh for pass fourteen, from public bug reports not tuned on before. Each kind is checked
with the prefilter on and off, and with real torch where the finding claims something about run time."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


# ---------------------------------------------------------------- VL201: a loop over a gathered copy no name holds
LOOP_OVER_GATHER = """
    import torch


    def clear_rows(x: torch.Tensor, idx: torch.Tensor):
        for row in x[idx]:
            row.zero_()
        return x


    def clear_rows_named(x: torch.Tensor, idx: torch.Tensor):
        picked = x[idx]
        for row in picked:
            row.zero_()
        return picked


    def clear_rows_kept(x: torch.Tensor, idx: torch.Tensor):
        out = []
        for row in x[idx]:
            row.zero_()
            out.append(row)
        return out


    def clear_slices(x: torch.Tensor):
        for row in x[1:3]:
            row.zero_()
        return x
"""


def test_an_in_place_write_on_a_row_of_a_gathered_copy_no_name_holds_is_lost():
    # The rows of `x[idx]` are views of a copy only the loop sees; a named copy read later, a row kept, and rows of a
    # basic slice (views of `x`) are written into something that is read.
    assert _lint(LOOP_OVER_GATHER) == [(6, "VL201")]


def test_the_write_into_a_row_of_a_gathered_copy_really_leaves_the_tensor_unchanged():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(textwrap.dedent(LOOP_OVER_GATHER), namespace)
    x = torch.ones(4, 3)
    namespace["clear_rows"](x, torch.tensor([0, 2]))
    assert bool((x == 1).all())  # nothing reached `x`
    namespace["clear_slices"](x)
    assert bool((x[1:3] == 0).all())  # rows of a basic slice are views: the write lands


# ---------------------------------------------------------------- VL203: a store into a conversion's result
STORE_INTO_CONVERSION = """
    import torch


    def set_first(w: torch.Tensor, y: torch.Tensor):
        w.T.contiguous()[0] = 1
        w.t().reshape(-1)[:2] += 1
        y.float()[0] = 1
        return w, y


    def write_kv(cache: torch.Tensor, slots: torch.Tensor, k: torch.Tensor):
        cache.flatten(0, 1)[slots] = k
        cache.view(-1, k.shape[-1])[slots] = k
        cache.reshape(-1)[0] = 0
        return cache
"""


def test_a_store_into_a_conversion_no_name_holds_is_lost_when_it_copies():
    # `.float()` copies a tensor of another dtype; a reshape or `.contiguous()` copies a transposed one. A reshape of
    # a cache of unknown layout is how contiguous caches are written into: not reported.
    assert _lint(STORE_INTO_CONVERSION) == [(5, "VL203"), (6, "VL203"), (7, "VL203")]


def test_the_store_into_a_transposed_conversion_really_is_lost():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(textwrap.dedent(STORE_INTO_CONVERSION), namespace)
    w, y = torch.zeros(2, 3), torch.zeros(3, dtype=torch.float16)
    namespace["set_first"](w, y)
    assert bool((w == 0).all()) and bool((y == 0).all())
    cache = torch.zeros(2, 4, 3)
    namespace["write_kv"](cache, torch.tensor([1, 5]), torch.ones(2, 3))
    assert int((cache == 1).all(-1).sum()) == 2  # the contiguous cache took the rows


# ---------------------------------------------------------------- VL101/VL103: views that leave by new ways
def test_a_helper_method_that_returns_a_view_of_what_it_made_pins_each_batch_a_loop_adds():
    found = _lint("""
        import torch
        from torch import nn


        class Extractor:
            def __init__(self, model: nn.Module):
                self.model = model

            @torch.no_grad()
            def extract_batch(self, batch: torch.Tensor) -> torch.Tensor:
                out = self.model(batch)
                return out[:, 0, :]

            def extract_features(self, batches) -> torch.Tensor:
                features = []
                for batch in batches:
                    features.append(self.extract_batch(batch))
                return torch.cat(features)

            def extract_owned(self, batches) -> torch.Tensor:
                features = []
                for batch in batches:
                    features.append(self.extract_batch(batch).clone())
                return torch.cat(features)
    """)
    assert found == [(17, "VL101")]


def test_a_list_returned_through_a_conditional_expression_is_handed_back():
    found = _lint("""
        import torch


        @torch.no_grad()
        def decode(model, ids: torch.Tensor, steps: int, keep: bool = False):
            raw = ()
            for _ in range(steps):
                logits = model(ids)
                last = logits[:, -1, :]
                raw += (last,)
                ids = torch.cat([ids, last.argmax(-1, keepdim=True)], dim=-1)
            return {"ids": ids, "logits": raw if keep else None}
    """)
    # (`ids` grown by `torch.cat` every step is VL309's, opt-in.)
    assert found == [(10, "VL101"), (11, "VL309")]


def test_an_object_collective_pickles_the_views_it_sends():
    found = _lint("""
        import torch
        import torch.distributed as dist


        def scatter_columns(A: torch.Tensor, world: int):
            shards = [A[:, i::world] for i in range(world)]
            received = [None]
            dist.scatter_object_list(received, shards, src=0)
            owned = [A[:, i::world].clone() for i in range(world)]
            dist.broadcast_object_list(owned, src=0)
            return received[0]
    """)
    assert found == [(8, "VL103")]


# ---------------------------------------------------------------- VL201: what torch's tuple results unpack to
def test_the_unique_values_a_tuple_unpacks_to_are_an_index_that_gathers():
    found = _lint("""
        import torch


        def sparse_step(acc: torch.Tensor, ids: torch.Tensor, g: torch.Tensor):
            uniq, inverse = torch.unique(ids, return_inverse=True)
            acc[uniq].add_(g)
            vals, order = torch.sort(ids)
            acc[order].zero_()
            best, where = acc.max(dim=0)
            acc[where].zero_()
            first, rest = ids.split(2)
            acc[first[0]].zero_()
            return acc
    """)
    # `acc.max(dim=0)` gives an index tensor not known to be 0-dim (it is one only of a 1-D `acc`), as an annotated
    # tensor is; a row of a split piece may be 0-dim.
    assert found == [(6, "VL201"), (8, "VL201"), (10, "VL201")]


# ---------------------------------------------------------------- VL401-VL404: hot paths and syncs of new shapes
def test_an_optimizer_through_a_base_class_of_the_module_and_a_class_annotated_parameter_are_hot():
    found = _lint("""
        import torch
        from torch import nn


        class LiteOptimizer(torch.optim.Optimizer):
            pass


        class Prodigy(LiteOptimizer):
            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        print(p.grad.norm().item())


        class Metric(nn.Module):
            def update(self, weights: torch.Tensor):
                valid = weights > 0
                if torch.any(valid):
                    return 1


        def train(model, metric: Metric, batches, opt):
            for x, w in batches:
                loss = model(x).sum()
                loss.backward()
                opt.step()
                metric.update(w)
    """)
    assert found == [(14, "VL401"), (20, "VL403")]


def test_formatting_a_tensor_reading_a_mask_by_its_name_and_sizes_from_tensors_sync():
    found = _lint("""
        import torch
        from torch import nn


        class Loss(nn.Module):
            def forward(self, pred: torch.Tensor, target: torch.Tensor, natoms: torch.Tensor):
                loss = (pred - target).abs().mean()
                print(f"loss={loss:.3f}")
                flat = pred.view(natoms.sum(), 3)
                count = torch.bincount(natoms)
                rows = torch.repeat_interleave(natoms, natoms)
                sized = torch.repeat_interleave(natoms, natoms, output_size=64)
                return self._masked(loss, flat), count, rows, sized

            def _masked(self, loss, keep_mask):
                return loss[keep_mask].sum()
    """)
    assert found == [(8, "VL401"), (9, "VL401"), (10, "VL404"), (11, "VL404"), (16, "VL404")]


def test_the_syncs_named_above_really_read_the_device(tmp_path):
    # What the findings claim, on CPU: formatting calls `Tensor.__format__` (an `.item()`), a tensor size goes through
    # `__index__`, and `repeat_interleave` by tensor repeats sizes its result by their sum.
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    loss, natoms = torch.tensor(0.5), torch.tensor([2, 1])
    with profile(activities=[ProfilerActivity.CPU]) as formatted:
        f"{loss:.3f}"
        torch.zeros(6).view(natoms.sum(), 2)
    names = {event.name for event in formatted.events()}
    assert "aten::item" in names or "aten::_local_scalar_dense" in names
    assert torch.repeat_interleave(natoms, natoms).shape == (int(natoms.sum()),)


# ---------------------------------------------------------------- VL101/VL103: containers that say less than they hold
def test_a_bare_dict_annotation_and_setdefault_keep_what_the_dict_holds():
    # `-> dict` and `per: dict` say what holds the values, not what they are: the rows of a batch, stored through
    # `setdefault(...)[k]`, reach the helper that saves each entry.
    found = _lint("""
        import torch


        class Embeddings:
            def _encode(self, x: torch.Tensor, keys: list) -> dict:
                out = {}
                for i, k in enumerate(keys):
                    out.setdefault(k, {})["row"] = x[i]
                return out

            def _save(self, key: str, per: dict):
                torch.save(per, key)

            def _sizes(self, keys: list) -> dict[str, int]:
                return {k: len(k) for k in keys}

            def run(self, x: torch.Tensor, keys: list):
                for key, per in self._encode(x, keys).items():
                    self._save(key, per)
    """)
    assert found == [(12, "VL103")]


def test_a_store_into_a_cache_object_the_caller_hands_in_outlives_the_call():
    found = _lint("""
        from typing import Optional

        import torch


        class StateCache:
            def __init__(self, size: int):
                self.state = [None] * size

            def __setitem__(self, i, value):
                self.state[i] = value


        def mix(x: torch.Tensor, cache: Optional[StateCache] = None, kv_cache=None, slot: int = 0):
            conv_input = torch.cat([x, x], dim=1)
            if cache is not None:
                cache[0] = conv_input[:, -3:]
            if kv_cache is not None:
                kv_cache[slot] = conv_input[:, -1]  # unknown: most often a tensor, written into
            local_cache = {}
            local_cache[0] = conv_input[:, -3:]
            return conv_input, local_cache
    """)
    assert found == [(17, "VL101")]


# ---------------------------------------------------------------- round two: what a blind batch of probes missed
def test_a_slice_of_a_copy_of_a_whole_tensor_pins_the_copy_a_slice_of_a_copy_of_a_part_does_not():
    found = _lint("""
        import torch


        @torch.no_grad()
        def sample(model, ids, steps: int):
            raw = ()
            for _ in range(steps):
                outputs = model(ids)
                last = outputs.logits.clone()[:, -1, :]
                raw += (last,)
            return ids, raw


        @torch.no_grad()
        def sample_fixed(model, ids, steps: int):
            raw = ()
            for _ in range(steps):
                outputs = model(ids)
                last = outputs.logits[:, -1:, :].clone()[:, 0]
                raw += (last,)
            return ids, raw
    """)
    assert found == [(10, "VL101")]


def test_a_buffer_the_module_registers_lives_on_its_device_and_a_models_output_has_tensor_methods():
    found = _lint("""
        import torch
        from torch import nn


        class Replay(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model
                self.register_buffer("ptr", torch.tensor(0))
                self.host_ptr = 0

            def _advance(self, n: int) -> int:
                start = int(self.ptr.item())
                self.ptr += n
                return start + self.host_ptr

            def forward(self, x):
                self._advance(x.shape[0])
                return self.model(x)


        class Trainer:
            def __init__(self, model, loss_fn):
                self.model, self.loss_fn = model, loss_fn

            def train_step(self, x):
                loss, negatives = self.loss_fn(x)
                loss.backward()
                energy = self.model(negatives).mean()
                return energy.item()
    """)
    assert found == [(13, "VL401"), (30, "VL401")]


def test_a_host_named_field_a_dataclass_annotates_as_a_tensor_is_a_host_tensor():
    found = _lint("""
        from dataclasses import dataclass

        import torch


        @dataclass
        class CommonMetadata:
            query_start_loc_cpu: torch.Tensor
            num_tokens: int


        class Builder:
            def build(self, common: CommonMetadata, start: int, device: torch.device):
                starts = common.query_start_loc_cpu
                lens = starts[1:] - starts[:-1]
                longest = lens.max().item()
                return torch.tensor(lens[start:], dtype=torch.int32).to(device), longest
    """)
    # A tensor (copied again by `torch.tensor`), on the host (`.item()` of it waits for nothing).
    assert found == [(17, "VL307")]


def test_a_save_of_either_arm_of_a_conditional_expression_is_a_save_of_it():
    found = _lint("""
        import io

        import torch


        def clone_all(state):
            return {k: v.clone() for k, v in state.items()}


        def save(model: dict, clone: bool):
            state = {"iteration": 0, "model": model}
            buffer = io.BytesIO()
            torch.save(clone_all(state) if clone else state, buffer)
            return buffer


        def split(full: torch.Tensor, ranks: int):
            for rank in range(ranks):
                save({"weight": full[rank * 4:(rank + 1) * 4]}, clone=False)
    """)
    assert found == [(13, "VL103")]


SAVED_TOGETHER = """
    import io
    import pickle

    import torch


    def save_partition(ids: torch.Tensor):
        buffer = io.BytesIO()
        torch.save(list(torch.chunk(ids, 4)), buffer)
        return buffer


    def itemize(images: torch.Tensor, n: int):
        items = []
        for i in range(n):
            items.append({"image": images[i]})
        return items


    def write(images: torch.Tensor, n: int):
        items = itemize(images, n)
        as_torch, as_pickle = io.BytesIO(), io.BytesIO()
        torch.save(items, as_torch)
        pickle.dump(items, as_pickle)
        torch.save(images[0], io.BytesIO())
        return as_torch, as_pickle
"""


def test_torch_save_writes_a_storage_once_per_file_pickle_once_per_tensor():
    # Every chunk in one file, or the rows a loop picks, write the storage once with `torch.save`; `pickle` writes it
    # again for each tensor; one row saved alone writes all of the storage.
    assert _lint(SAVED_TOGETHER) == [(24, "VL103"), (25, "VL103")]


def test_what_the_serialisers_write_for_views_sharing_one_storage():
    torch = pytest.importorskip("torch")
    import io
    import pickle

    namespace: dict = {}
    exec(textwrap.dedent(SAVED_TOGETHER), namespace)
    images = torch.zeros(64, 256)
    as_torch, as_pickle = namespace["write"](images, 8)
    storage = 64 * 256 * 4
    assert as_torch.getbuffer().nbytes < 1.1 * storage < 8 * storage < as_pickle.getbuffer().nbytes
    one_row = io.BytesIO()
    torch.save(images[0], one_row)
    assert one_row.getbuffer().nbytes > storage  # a row alone writes the whole storage
    assert namespace["save_partition"](torch.zeros(100_000)).getbuffer().nbytes < 1.1 * 100_000 * 4  # written once


def test_a_copy_of_a_gather_owns_just_what_it_picked():
    # (flair's fix: `hidden[dims, i, :].detach().clone()`, then a row per token stored on each token.)
    found = _lint("""
        import torch


        class Token:
            def set_embedding(self, name, vector):
                self.embeddings = {name: vector}


        def embed(hidden: torch.Tensor, dims: list, tokens: list):
            sentence = hidden[dims, 0, :].detach().clone()
            for index, token in enumerate(tokens):
                token.set_embedding("lm", sentence[index])
    """)
    assert found == []


def test_a_tensor_formatted_in_a_message_argument_is_read_on_both_paths():
    # (transformers' `get_placeholder_mask`: the message is formatted before the check runs, on every forward.)
    found = _lint("""
        import torch
        from torch import nn


        def check(condition, message):
            if not condition:
                raise ValueError(message)


        class Model(nn.Module):
            def forward(self, input_ids: torch.Tensor, features: torch.Tensor):
                n_tokens = (input_ids == 7).sum()
                check(True, f"tokens: {n_tokens}, features: {features.shape[0]}")
                return features
    """)
    assert found == [(13, "VL401")]


def test_a_loop_over_range_max_new_tokens_is_a_decode_loop():
    found = _lint("""
        import torch


        @torch.inference_mode()
        def generate(talker, token: torch.Tensor, eos_id: int, max_new_tokens: int = 64, max_length: int = 8):
            out = []
            for _ in range(max_new_tokens):
                if token.item() == eos_id:
                    break
                token = talker.step(token)
                out.append(token)
            for i in range(max_length):
                print(token.item())
            return out
    """)
    assert found == [(8, "VL401")]
