"""Kinds of code met in pass sixteen's reading of the blind rounds' misses: a callable taken as a parameter with a
module function as its default, a method a base class only declares, optimizer state read back by key, K/V heads
carried through a rotation, a mask that may be `None`, and a method every caller hands a NumPy array. Each
kind is checked with the prefilter on and off, and with real torch where the finding claims something about run time."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths
from test_inference_objects import beliefs


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


# ---------------------------------------------------------------- a parameter whose default is a function of the module
SAVE_FN = """
    import torch


    def save_state_dict(model, path):
        state = {"model": model, "version": 3}
        torch.save(state, path)


    def export(full: dict[str, torch.Tensor], path, save_fn=save_state_dict):
        split = {}
        for k, v in full.items():
            split[k] = v[: v.shape[0] // 2]
        save_fn(split, path)


    def export_cloned(full: dict[str, torch.Tensor], path, save_fn=save_state_dict):
        split = {k: v[: v.shape[0] // 2].clone() for k, v in full.items()}
        save_fn(split, path)
"""


def test_a_callable_parameter_runs_its_default():
    # Pai-Megatron-Patch PR #364: `save_fn(args, model_split, path)` with `save_fn=save_state_dict`, which saves the
    # dict of slices: each file gets the full weights. The clone look-alike is silent.
    assert _lint(SAVE_FN) == [(6, "VL103")]


def test_a_callable_parameter_claim_on_real_torch(tmp_path):
    torch = pytest.importorskip("torch")
    weight = torch.randn(256, 64)
    for part, cloned in ((weight[:128], False), (weight[:128].clone(), True)):
        path = tmp_path / f"{cloned}.pt"
        torch.save({"model": {"w": part}}, path)
        size = path.stat().st_size
        assert (size < weight.numel() * 4) is cloned  # the slice writes all of `weight`; its clone half of it


# ---------------------------------------------------------------- a method the base class only declares
ABSTRACT = """
    import torch
    from torch import nn


    class Scorer(nn.Module):
        def forward(self, x):
            return self.score(x)

        def score(self, x):
            raise NotImplementedError


    class SumScorer(Scorer):
        def score(self, x: torch.Tensor):
            total = x.sum()
            return total.item()


    class Reader:
        def read(self, batch):
            got = self.decode(batch)
            return got

        def decode(self, batch):
            raise NotImplementedError

        def reset(self) -> None:
            raise NotImplementedError
"""


def test_self_call_of_a_declared_method_runs_the_subclass_override():
    # `Scorer.forward` runs `SumScorer.score` for a `SumScorer`: its `.item()` is on the forward path.
    assert _lint(ABSTRACT) == [(16, "VL401")]


def test_a_stub_that_only_raises_returns_nothing_known():
    found = beliefs(textwrap.dedent(ABSTRACT).lstrip("\n"))
    assert found[(21, "got")]["tensor"] is None  # not `None` (a stub no caller sees return)


# ---------------------------------------------------------------- what a function stored under a key, read back
OPTIMIZER_STATE = """
    import torch


    class Prodigy(torch.optim.Optimizer):
        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    if len(state) == 0:
                        state["s"] = torch.zeros_like(p).flatten()
                        state["note"] = "first"
                    state["note"] = None
                    s = state["s"]
                    note = state["note"]
                    s.mul_(0.9).add_(p.grad.flatten())
                    self.d_denom += s.abs().sum().item()
"""


def test_optimizer_state_read_by_key_is_the_tensor_stored_under_it():
    # Advanced_Optimizers PR #5: `self.d_denom += s.abs().sum().item()` per parameter, per step, with `s` read back
    # from the optimizer state where the first step stored a tensor.
    assert _lint(OPTIMIZER_STATE) == [(17, "VL401")]
    found = beliefs(textwrap.dedent(OPTIMIZER_STATE).lstrip("\n"))
    assert found[(14, "s")]["tensor"] is True
    assert found[(15, "note")]["tensor"] is None  # a key also set to a string and to `None`


# ---------------------------------------------------------------- K/V heads carried through a rotation to a held SDPA
HELD_SDPA = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class GroupedQueryAttention(nn.Module):
        def __init__(self, heads=8, kv_heads=2):
            super().__init__()
            self.heads, self.kv_heads = heads, kv_heads
            self.attn_op = F.scaled_dot_product_attention

        def rope(self, q, k):
            return q * 2, k * 2

        def forward(self, q, k, v):
            factor = self.heads // self.kv_heads
            k = k.repeat_interleave(factor, dim=1)
            v = v.repeat_interleave(factor, dim=1)
            q, k = self.rope(q, k)
            return self.attn_op(q, k, v)
"""


def test_a_rotation_carries_the_repeated_heads_to_a_held_sdpa():
    # sapiens2 PR #3: `self.attn_op = F.scaled_dot_product_attention`, K/V repeated before it, and `k` rotated on the
    # way (`q, k = self.rope(q, k)`): the rotated `k` still has every repeated head.
    assert _lint(HELD_SDPA) == [(17, "VL303"), (18, "VL303")]


def test_held_sdpa_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    f = torch.nn.functional
    q, k, v = torch.randn(1, 8, 16, 32), torch.randn(1, 2, 16, 32), torch.randn(1, 2, 16, 32)
    repeated = k.repeat_interleave(4, dim=1)
    assert repeated.untyped_storage().data_ptr() != k.untyped_storage().data_ptr()  # a copy, 4x the bytes
    assert repeated.untyped_storage().nbytes() == 4 * k.untyped_storage().nbytes()
    native = f.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    copied = f.scaled_dot_product_attention(q, repeated, v.repeat_interleave(4, dim=1))
    assert torch.allclose(native, copied, atol=1e-5)


# ---------------------------------------------------------------- a method every caller here hands a NumPy array
NUMPY_CALLERS = """
    import torch


    class Decoder:
        def decode_beams(self, log_probs: torch.Tensor):
            log_probs = log_probs.cpu().numpy()
            hyps = []
            for row in log_probs:
                hyps.append(self.decode_one(row))
            return hyps

        def decode_one(self, row: torch.Tensor):
            frames = row
            return frames
"""


def test_an_array_every_caller_passes_beats_a_methods_tensor_annotation():
    found = beliefs(textwrap.dedent(NUMPY_CALLERS).lstrip("\n"))
    assert found[(8, "row")]["tensor"] is False  # a row of a NumPy array
    assert found[(13, "frames")]["tensor"] is False


OPTIONAL_MASK = """
    from typing import Optional

    import torch
    import torch.nn.functional as F


    def attend(q, k, v, mask: Optional[torch.Tensor], groups: int):
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


    def attend_masked(q, k, v, mask: torch.Tensor, groups: int):
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
"""


def test_a_mask_that_may_be_none_leaves_the_repeat_a_waste_on_the_maskless_calls():
    # transformers PR #39412: the fused kernels share K/V heads only without a custom mask. A mask that is always
    # given (the second function) keeps the repeat silent; one that may be `None` does not.
    assert _lint(OPTIONAL_MASK) == [(8, "VL303"), (9, "VL303")]


# ---------------------------------------------------------------- a cast to the dtype a tensor has is the tensor itself
SAME_DTYPE_CAST = """
    import torch
    from torch import nn


    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(8, 50)

        def forward(self, h):
            return self.head(h).float()


    @torch.no_grad()
    def sample(model: LM, h, steps):
        raw_logits = ()
        for _ in range(steps):
            logits = model(h)
            step_logits = logits.clone()[:, -1, :].float()
            raw_logits += (step_logits,)
        return raw_logits


    @torch.no_grad()
    def sample_fixed(model: LM, h, steps):
        raw_logits = ()
        for _ in range(steps):
            logits = model(h)
            raw_logits += (logits[:, -1, :].clone().float(),)
        return raw_logits
"""


def test_a_cast_to_the_dtype_a_copy_has_keeps_the_view_of_the_copy():
    # transformers #34796: `outputs.logits.clone()[:, -1, :].float()` on float32 logits: the clone copies the whole
    # logits, and `.float()` returns the row view of that copy, kept in `raw_logits` every step.
    # (The model's `self.head(h).float()` is VL310's: the whole sequence's logits upcast, opt-in.)
    assert _lint(SAME_DTYPE_CAST) == [(11, "VL310"), (20, "VL101")]


def test_same_dtype_cast_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    logits = torch.randn(2, 7, 50)
    row = logits.clone()[:, -1, :]
    assert row.float() is row and row.float()._base is not None
    assert row.float().untyped_storage().nbytes() == logits.untyped_storage().nbytes()  # all of the copy


# ---------------------------------------------------------------- what callers pass into a dataclass-annotated parameter
DATACLASS_PARAMETER = """
    from dataclasses import dataclass

    import torch


    @dataclass
    class Item:
        key: str
        embeddings: torch.Tensor


    class Cache:
        def __init__(self):
            self.store = {}

        def set(self, key, value):
            self.store[key] = value


    class Worker:
        def __init__(self):
            self.cache = Cache()

        def encode(self, keys, encoder_out: torch.Tensor, counts):
            for key, piece in zip(keys, encoder_out.split(counts)):
                self._store(Item(key, piece))

        def _store(self, item: Item):
            self.cache.set(item.key, item.embeddings.contiguous())
"""


def test_a_dataclass_annotated_parameter_takes_what_the_callers_put_in_it():
    # ai-dynamo's encode worker: `item: EmbeddingItem` built from `embeddings.split(...)` pieces; `.contiguous()` of a
    # contiguous piece returns the piece, which the cache keeps with all of the batch.
    assert _lint(DATACLASS_PARAMETER) == [(29, "VL102")]


# ---------------------------------------------------------------- a dict of dicts filled by nested stores; `yield from`
NESTED_DICT = """
    import torch


    def encode(texts: list[str], encoder: torch.nn.Module) -> dict:
        out = torch.stack([encoder(text) for text in texts]).cpu()
        by_text = {}
        for i, text in enumerate(texts):
            by_text[text] = {}
            by_text[text]["emb"] = out[i]
        return by_text


    def save_all(texts: list[str], encoder: torch.nn.Module, path):
        embedding_dict = encode(texts, encoder)
        for text, entry in embedding_dict.items():
            torch.save(entry, f"{path}/{text}.pt")
"""


def test_a_dict_filled_by_nested_stores_holds_what_they_store():
    # A row per text in an inner dict (`d[k] = {}`, then `d[k]["emb"] = row`): each file gets the whole batch.
    assert _lint(NESTED_DICT) == [(16, "VL103")]


YIELD_FROM = """
    import torch


    def pieces(batch: torch.Tensor, sizes):
        yield from batch.split(sizes)


    def collect(batch: torch.Tensor, sizes):
        for piece in pieces(batch, sizes):
            got = piece
"""


def test_yield_from_yields_the_items_of_what_it_iterates():
    found = beliefs(textwrap.dedent(YIELD_FROM).lstrip("\n"))
    assert found[(10, "got")]["view"] is True


# ---------------------------------------------------------------- `.contiguous()` of a transpose passed in, under its name
PASSED_TRANSPOSE = """
    import torch
    import torch.nn.functional as F


    def attend(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        query = query.contiguous()
        key = key.contiguous()
        value = value.contiguous()
        return F.scaled_dot_product_attention(query, key, value)


    def scores(query: torch.Tensor, key: torch.Tensor):
        key = key.contiguous()
        first = torch.matmul(query, key.transpose(-1, -2))
        second = torch.matmul(query * 2, key.transpose(-1, -2))
        return first + second


    def caller(x: torch.Tensor):
        q = x.view(2, 8, 4, 16).transpose(1, 2)
        attend(q, q, q)
        return scores(q, q)
"""


def test_contiguous_of_a_transpose_every_caller_passes():
    # transformers PR #40315: `query = query.contiguous()` of the transposed q/k/v the layers pass, on every call,
    # though SDPA reads strided inputs. Used by two matrix products, one copy up front may be the cheaper: silent.
    # (`attend(q, q, q)` as a statement throws away all `attend` does: VL205, pass twenty-four.)
    assert _lint(PASSED_TRANSPOSE) == [(6, "VL306"), (7, "VL306"), (8, "VL306"), (21, "VL205")]


HELD_PARAMETER_FUNCTION = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    def attend(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        query = query.contiguous()
        return F.scaled_dot_product_attention(query, key, value)


    class Attention(nn.Module):
        def __init__(self, attn_fn=attend):
            super().__init__()
            self.proj = nn.Linear(64, 64)
            self.attn_fn = attn_fn

        def forward(self, x: torch.Tensor):
            q = self.proj(x).view(2, 8, 4, 16).transpose(1, 2)
            return self.attn_fn(self, q, q, q)
"""


def test_a_function_held_from_a_constructor_default_gets_what_the_forward_passes():
    # The attention function chosen by `attn_fn=sdpa_attention_forward` and kept in `self.attn_fn`: the layer passes
    # it transposes, so `query.contiguous()` copies on every call.
    assert _lint(HELD_PARAMETER_FUNCTION) == [(7, "VL306")]


def test_contiguous_of_a_transpose_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    q = torch.randn(2, 8, 4, 16).transpose(1, 2)
    copied = q.contiguous()
    assert copied.data_ptr() != q.data_ptr()  # a copy
    f = torch.nn.functional
    assert torch.allclose(f.scaled_dot_product_attention(q, q, q), f.scaled_dot_product_attention(copied, copied, copied), atol=1e-6)


# ---------------------------------------------------------------- where a saved object's view is put in it
SAVED_OBJECT = """
    import pickle
    from dataclasses import dataclass

    import torch


    @dataclass
    class Partition:
        ids: torch.Tensor


    def save_partition(path, part):
        with open(path, "wb") as f:
            pickle.dump(part.ids, f)


    def split_and_save(ids: torch.Tensor, n: int, folder: str):
        for i, chunk in enumerate(torch.chunk(ids, n)):
            part = Partition(ids=chunk)
            save_partition(f"{folder}/{i}.pkl", part)


    def save_whole(ids: torch.Tensor, folder: str):
        save_partition(f"{folder}/all.pkl", Partition(ids=ids.clone()))
"""


def test_a_helper_save_is_reported_where_the_view_goes_into_the_saved_object():
    # graphlearn-torch: `FeaturePartitionData(ids=chunk)` pickled by a helper: the fix (`ids=chunk.clone()`) and the
    # finding are on the line that puts the view in the object.
    assert _lint(SAVED_OBJECT) == [(19, "VL103")]


# ---------------------------------------------------------------- what a constructor keeps from its callers
CONSTRUCTOR_KEEPS = """
    import torch


    class BatchedCache:
        def __init__(self, states: list):
            self.states = states

        def extract(self, idx: int) -> list:
            return [s[idx:idx + 1] for s in self.states]


    def merge(per_sequence: list) -> BatchedCache:
        return BatchedCache([torch.cat(parts, dim=0) for parts in zip(*per_sequence)])


    class Scheduler:
        def __init__(self):
            self.prompt_cache = {}

        def on_finished(self, batch_cache: BatchedCache, finished: list, keys: list) -> None:
            for i in finished:
                self.prompt_cache[keys[i]] = batch_cache.extract(i)
"""


def test_an_attribute_set_from_a_constructor_parameter_is_what_its_callers_pass():
    # mlx-lm PR #1701: `[c[idx:idx + 1] for c in self.state]` of the batched state the constructor was given: rows
    # of the whole batch, kept by the prompt cache.
    assert _lint(CONSTRUCTOR_KEEPS) == [(22, "VL101")]


def test_cls_in_a_classmethod_calls_the_constructor():
    source = CONSTRUCTOR_KEEPS.replace('''
    def merge(per_sequence: list) -> BatchedCache:
        return BatchedCache([torch.cat(parts, dim=0) for parts in zip(*per_sequence)])
''', '''
        @classmethod
        def merge(cls, per_sequence: list) -> "BatchedCache":
            return cls([torch.cat(parts, dim=0) for parts in zip(*per_sequence)])
''')
    assert "cls([" in source
    assert _lint(source) == [(23, "VL101")]  # (one line further down: the decorator)


# ---------------------------------------------------------------- functions a class body holds; an overridden method
CLASS_BODY_FUNCTION = """
    import torch
    from torch import nn


    def apply_penalties(logits: torch.Tensor, penalties: torch.Tensor) -> torch.Tensor:
        logits[logits > 0] /= penalties[logits > 0]
        return logits


    class Sampler(nn.Module):
        penalty_fn = staticmethod(apply_penalties)

        def forward(self, logits, penalties):
            return self.penalty_fn(logits, penalties)
"""


def test_a_function_a_class_body_holds_runs_when_called_through_self():
    # vLLM PR #16436: the sampler's penalties, a module function held as `staticmethod(...)` in the class body,
    # run on every decode step: the boolean-mask update and read each wait for the GPU.
    assert _lint(CLASS_BODY_FUNCTION) == [(6, "VL404"), (6, "VL404")]


OVERRIDDEN_METHOD = """
    import torch
    from torch import nn


    class Dispatcher:
        def _permute(self, tokens: torch.Tensor, counts: torch.Tensor):
            index = torch.arange(counts.shape[0], device=tokens.device).repeat_interleave(counts)
            return tokens[index]


    class SizedDispatcher(Dispatcher):
        def _permute(self, tokens: torch.Tensor, counts: torch.Tensor):
            index = torch.arange(counts.shape[0], device=tokens.device).repeat_interleave(counts, output_size=tokens.shape[0])
            return tokens[index]


    class MoE(nn.Module):
        def __init__(self, dispatcher):
            super().__init__()
            self.dispatcher = dispatcher

        def forward(self, tokens, counts):
            return self.dispatcher._permute(tokens, counts)
"""


def test_a_method_a_subclass_overrides_resolves_to_the_base_for_a_receiver_of_unknown_class():
    # torchtitan PR #3274: `repeat_interleave(counts)` without `output_size` in the MoE dispatcher, reached from a
    # forward through `self.dispatcher`, whose class is not known; the subclass's override passes `output_size`.
    assert _lint(OVERRIDDEN_METHOD) == [(7, "VL404")]


KEYED_USAGE = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class CausalAttention(nn.Module):
        def forward(self, q, k, v, kv_cache):
            end = kv_cache["end_index"].item() + q.shape[1]
            kv_cache["k"][:, :end] = k
            kv_cache["end_index"].fill_(end)
            return F.scaled_dot_product_attention(q, kv_cache["k"][:, :end], kv_cache["v"][:, :end])
"""


def test_a_keyed_value_used_as_a_tensor_elsewhere_is_one():
    # lingbot-world PR #51: `kv_cache["local_end_index"].item()` in every layer's forward, the cache index filled in
    # place (`.fill_`) elsewhere in the same function.
    assert _lint(KEYED_USAGE) == [(8, "VL401")]


def test_a_message_quotes_a_multi_line_expression_without_its_comments():
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Penalties(nn.Module):
            def forward(self, logits: torch.Tensor, penalties: torch.Tensor):
                logits[logits > 0] /= torch.where(logits > 0,  # the penalised side
                                                  penalties, 1.0)[logits > 0]
                return logits
    """).lstrip("\n")
    messages = [d.message for d in lint_text(source, "snippet.py", Settings(select=("ALL",)))]
    assert any("torch.where(logits > 0, penalties, 1.0)" in m for m in messages), messages
    assert not any("#" in m for m in messages), messages


ZIP_STRICT = """
    import logging

    import torch


    def update_factors(grad: torch.Tensor, eigvals_list: list[torch.Tensor], bases: list[torch.Tensor], eps: float):
        for idx, (basis, eigvals) in enumerate(zip(bases, eigvals_list, strict=True)):
            scale = 1 / grad.shape[idx] * eigvals.clamp_min(eps) ** -1.0
            logging.debug(f"scale[{idx}]: {scale}")
            basis.mul_(scale[None, :])


    class Soap(torch.optim.Optimizer):
        update = staticmethod(update_factors)

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    self.update(p.grad, state["eigvals"], state["bases"], 1e-8)
"""


def test_items_of_zip_with_strict_and_clamp_min_are_tensors():
    # NeMo Emerging-Optimizers PR #255: `logging.debug(f"...{scale_factor}")` formats a device tensor for every
    # parameter on every step, DEBUG on or not; `zip(..., strict=True)` items and `clamp_min` results are tensors.
    assert _lint(ZIP_STRICT) == [(9, "VL401")]


# ---------------------------------------------------------------- parameters re-pointed at a flat buffer
REPOINTED = """
    import torch
    from torch import nn


    class PipelineModule(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.layers = nn.ModuleList(layers)

        def save_state_dict(self, paths):
            for layer, path in zip(self.layers, paths):
                torch.save(layer.state_dict(), path)

        def save_state_dict_fixed(self, paths):
            for layer, path in zip(self.layers, paths):
                torch.save({k: v.clone() for k, v in layer.state_dict().items()}, path)


    def flatten_into_one_buffer(module):
        params = list(module.parameters())
        flat = torch.cat([p.detach().reshape(-1) for p in params])
        offset = 0
        for p in params:
            p.data = flat[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
        return flat
"""


def test_state_dict_of_parameters_re_pointed_at_a_flat_buffer_holds_views_of_it():
    # DeepSpeed PR #1326: ZeRO points every parameter's `.data` at a slice of one flat buffer, and
    # `torch.save(layer.state_dict(), path)` writes the whole buffer into each layer's file.
    found = _lint(REPOINTED)
    assert (12, "VL103") in found and not any(row == 16 for row, _ in found), found


def test_re_pointed_parameters_claim_on_real_torch(tmp_path):
    torch = pytest.importorskip("torch")
    layers = [torch.nn.Linear(64, 64) for _ in range(4)]
    params = [p for layer in layers for p in layer.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    offset = 0
    for p in params:
        p.data = flat[offset:offset + p.numel()].view_as(p)
        offset += p.numel()
    torch.save(layers[0].state_dict(), tmp_path / "one.pt")
    torch.save({k: v.clone() for k, v in layers[0].state_dict().items()}, tmp_path / "cloned.pt")
    assert (tmp_path / "one.pt").stat().st_size > 3 * (tmp_path / "cloned.pt").stat().st_size
