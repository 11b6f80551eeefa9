"""Kinds of code met in pass nineteen (runtime truth, and round twelve's blind probes): the rank a shape held in a name
shows, the rank and layout a module's callers give its input, a field read off a name of nothing known, and in-place
writes into conversions the code never reads again. Each lint kind is checked with the prefilter on and off; the
beliefs about views and the lost writes with real torch."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths
from viewlint.beliefs import beliefs_of_text


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


def _beliefs(source: str) -> dict[tuple[int, str], dict]:
    return {(r["line"], r["target"]): r for r in beliefs_of_text(textwrap.dedent(source).lstrip("\n"), "m.py")}


def _run(source: str) -> dict:
    torch = pytest.importorskip("torch")
    scope: dict = {"torch": torch}
    exec(compile(textwrap.dedent(source).lstrip("\n"), "m.py", "exec"), scope)  # noqa: S102 - a fixture of this file
    return scope


# ---------------------------------------------------------------- ranks and layouts across calls
EMBEDDER = """
    import torch
    from torch import nn


    class Embeddings(nn.Module):
        def __init__(self, vocab, dim):
            super().__init__()
            self.word = nn.Embedding(vocab, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, input_ids=None, inputs_embeds=None):
            if input_ids is not None:
                input_shape = input_ids.size()
            else:
                input_shape = inputs_embeds.size()[:-1]
            batch_size, seq_length = input_shape
            if inputs_embeds is None:
                inputs_embeds = self.word(input_ids)
            return self.norm(inputs_embeds)


    class Output(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dense = nn.Linear(dim, dim)

        def _project(self, hidden_states: torch.Tensor) -> torch.Tensor:
            hidden_states = self.dense(hidden_states)
            return hidden_states


    class Model(nn.Module):
        def __init__(self, vocab, dim):
            super().__init__()
            self.embeddings = Embeddings(vocab, dim)
            self.output = Output(dim)

        def forward(self, input_ids):
            hidden = self.embeddings(input_ids=input_ids)
            return self.output._project(hidden)
"""


def test_a_shape_held_in_a_name_shows_the_rank_of_what_it_measured():
    beliefs = _beliefs(EMBEDDER)
    # `input_shape = input_ids.size()`, then `batch_size, seq_length = input_shape`: `input_ids` is 2-D, its
    # embedding 3-D; `inputs_embeds.size()[:-1]` on the other path says the same of `inputs_embeds`.
    assert beliefs[(18, "inputs_embeds")]["rank"] == 3
    # Without the unpacking nothing is known.
    unknown = _beliefs(EMBEDDER.replace("batch_size, seq_length = input_shape", "pass"))
    assert unknown[(18, "inputs_embeds")]["rank"] is None


def test_a_shape_bound_to_something_else_too_shows_nothing():
    other = EMBEDDER.replace("input_shape = inputs_embeds.size()[:-1]", "input_shape = (1, 2)")
    assert _beliefs(other)[(18, "inputs_embeds")]["rank"] is None


def test_a_methods_callers_give_its_input_their_rank_and_layout():
    """`self.dense(x)` of a contiguous 3-D input with a bias returns a view of the 2-D product it computed; the rank and
    the layout come from the caller (a `LayerNorm` of an embedding), though the annotation says only "a tensor". Only
    for a private method: a public one (a `forward`) is called by code elsewhere too, with any layout."""
    belief = _beliefs(EMBEDDER)[(28, "hidden_states")]
    assert (belief["tensor"], belief["view"], belief["rank"]) == (True, True, 3)
    scope = _run(EMBEDDER)
    model = scope["Model"](10, 8)
    assert model(scope["torch"].tensor([[1, 2, 3]])).shape == (1, 3, 8)
    hidden = model.embeddings(input_ids=scope["torch"].tensor([[1, 2, 3]]))
    assert hidden.is_contiguous() and hidden.dim() == 3
    assert model.output.dense(hidden)._base is not None  # what the belief claims, on real torch
    public = EMBEDDER.replace("_project", "project")
    assert _beliefs(public)[(28, "hidden_states")]["view"] is None


def test_a_caller_passing_a_transposed_input_leaves_the_view_unknown():
    transposed = EMBEDDER.replace("return self.output._project(hidden)", "return self.output._project(hidden.transpose(0, 1))")
    assert _beliefs(transposed)[(28, "hidden_states")]["view"] is None


# ---------------------------------------------------------------- a field of the one class that declares it
LORA = """
    from dataclasses import dataclass

    import torch
    from torch import nn


    @dataclass
    class LoRABatchInfo:
        weight_indices: torch.Tensor
        lora_ranks: torch.Tensor
        max_lora_rank: int


    def _add_delta(hidden_states, output, lora_info):
        if lora_info is None:
            return output
        active = (lora_info.lora_ranks[lora_info.weight_indices] > 0).any()
        if not active.item():
            return output
        return output + hidden_states


    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.lora_info = None

        def forward(self, x):
            return _add_delta(x, self.proj(x), self.lora_info)
"""


def test_a_field_only_one_class_declares_read_off_a_name_that_shares_its_words():
    assert _lint(LORA) == [(18, "VL401")]


@pytest.mark.parametrize("change", [
    ("lora_info", "cfg"),  # `cfg.lora_ranks`: the name says nothing of the class
    ("        max_lora_rank: int\n", "        max_lora_rank: int\n\n\n    @dataclass\n    class Other:\n        weight_indices: list\n        lora_ranks: list\n"),  # another class declares them lists
])
def test_a_field_of_a_name_unrelated_or_of_several_classes_is_not_known(change):
    assert _lint(LORA.replace(*change)) == []


# ---------------------------------------------------------------- writes into conversions never read again
CLIP = """
    import torch


    def clip_grads_(parameters, coeff, dtype=torch.float32):
        grads = [p.grad.detach().to(dtype) for p in parameters if p.grad is not None]
        for g in grads:
            g.mul_(coeff)


    def clip_grads_fixed_(parameters, coeff):
        grads = [p.grad.detach() for p in parameters if p.grad is not None]
        for g in grads:
            g.mul_(coeff)
"""


def test_in_place_writes_into_a_list_of_conversions_never_read_again_are_lost():
    assert _lint(CLIP) == [(5, "VL203")]
    torch = pytest.importorskip("torch")
    scope = _run(CLIP)
    weight = torch.nn.Parameter(torch.ones(3, dtype=torch.bfloat16))
    weight.grad = torch.ones(3, dtype=torch.bfloat16)
    scope["clip_grads_"]([weight], 0.5)
    assert torch.equal(weight.grad, torch.ones(3, dtype=torch.bfloat16))  # `.to(float32)` copied: nothing was scaled
    scope["clip_grads_fixed_"]([weight], 0.5)
    assert torch.equal(weight.grad, torch.full((3,), 0.5, dtype=torch.bfloat16))


def test_a_list_of_conversions_read_after_the_loop_is_the_point():
    used = CLIP.replace("            g.mul_(coeff)\n\n\n", "            g.mul_(coeff)\n        return grads\n\n\n", 1)
    assert _lint(used) == []


KV_WRITE = """
    import torch
    from torch import nn


    class Writer(nn.Module):
        def forward(self, k, kv_cache, slots):
            cache = kv_cache[0]
            flat = cache.reshape(-1, cache.shape[-1])
            token = k.reshape(-1, cache.shape[-1]).to(flat.dtype)
            flat.index_copy_(0, slots, token)
            return k
"""


def test_a_write_into_a_conversion_only_its_layout_is_read_from_is_lost_when_it_copied():
    """`flat.dtype` reads no value: `flat` is still never read after the write. `flat.index_copy_` says it is a tensor
    (and so is `cache`), though nothing else does."""
    assert _lint(KV_WRITE) == [(10, "VL203")]
    torch = pytest.importorskip("torch")
    scope = _run(KV_WRITE)
    raw = torch.zeros(4 * 8 * 2)
    padded = torch.as_strided(raw, (4, 5, 2), (16, 2, 1))  # pages padded: not contiguous, so `reshape` copies
    scope["Writer"]()(torch.ones(2, 2), [padded], torch.tensor([0, 1]))
    assert raw.abs().sum() == 0  # the tokens went nowhere


def test_a_conversion_read_for_its_values_after_the_write_is_used():
    read = KV_WRITE.replace("            return k\n", "            return flat.sum()\n")
    assert _lint(read) == []


# ---------------------------------------------------------------- a scalar tensor index selects
SCALAR_INDEX = """
    import torch


    def codebook_mask(mask, stage):
        stage = torch.as_tensor(stage)
        return mask[:, stage, ...].contiguous().view(-1)


    def first_row(stage):
        y = torch.zeros(4, 5)
        return y[torch.as_tensor(stage)].contiguous()
"""


def test_a_tensor_index_that_may_be_0_dim_after_a_kept_dimension_is_no_proof_of_a_contiguous_gather():
    """`mask[:, stage]` of a 0-dim `stage` is a select: a view with `mask`'s strides, which `.view(-1)` refuses; the
    `.contiguous()` is needed. Before every kept dimension the select and the gather are both row-major."""
    assert _lint(SCALAR_INDEX) == [(11, "VL301")]
    torch = pytest.importorskip("torch")
    mask = torch.ones(2, 4, 8, dtype=torch.bool)
    picked = mask[:, torch.tensor(1), ...]
    assert picked._base is mask and not picked.is_contiguous()
    with pytest.raises(RuntimeError):
        picked.view(-1)
    assert _run(SCALAR_INDEX)["codebook_mask"](mask, 1).shape == (16,)
    assert torch.zeros(4, 5)[torch.tensor(1)].is_contiguous()


# ---------------------------------------------------------------- VL310: the whole sequence's logits upcast
CAUSAL_LM = """
    import torch
    from torch import nn


    class CausalLM(nn.Module):
        def __init__(self, vocab=32, dim=8):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.lm_head = nn.Linear(dim, vocab, bias=False)

        def forward(self, input_ids, labels=None):
            hidden_states = self.embed(input_ids)
            logits = self.lm_head(hidden_states)
            logits = logits / 2.0
            {upcast}
            return logits
"""


def test_the_whole_sequences_logits_upcast_in_forward_is_a_second_larger_copy():
    source = CAUSAL_LM.format(upcast="logits = logits.float()")
    assert _lint(source) == [(15, "VL310")]
    torch = pytest.importorskip("torch")
    model = _run(source)["CausalLM"]().to(torch.bfloat16)
    ids = torch.randint(0, 32, (2, 5))
    kept = model.lm_head(model.embed(ids))
    upcast = model(ids)
    assert upcast.dtype == torch.float32 and upcast.shape == kept.shape == (2, 5, 32)
    assert upcast.untyped_storage().nbytes() == 2 * kept.untyped_storage().nbytes()  # a new copy, twice the size


@pytest.mark.parametrize("upcast", [
    "next_token = self.lm_head(hidden_states[:, -1, :]).float()",  # one position's logits
    "loss = nn.functional.cross_entropy(logits.float().flatten(0, 1), input_ids.flatten())",  # consumed by the loss
    "features = self.embed(input_ids).float()",  # not a head's logits
])
def test_upcasts_of_one_position_or_consumed_by_a_loss_are_not_the_kind(upcast):
    assert _lint(CAUSAL_LM.format(upcast=upcast)) == []


# ---------------------------------------------------------------- layouts from callers, and where they stop
LAYOUTS = """
    import torch


    class SageImpl:
        def forward(self, query: torch.Tensor):
            batch, q_len, heads, dim = query.shape
            return query.contiguous().view(batch * q_len, heads, dim)

        def packed(self, query: torch.Tensor):
            query = query.contiguous()
            return self.forward(query[:4].unsqueeze(0))


    def _quantize(x: torch.Tensor):
        x = x.contiguous()
        return x * 2


    def quantize(x: torch.Tensor):
        return _quantize(x.contiguous())


    def _store(k: torch.Tensor):
        if not k.is_contiguous():
            k = k.contiguous()
        return k


    def store(k: torch.Tensor):
        return _store(torch.cat([k, k]))
"""


def test_a_private_function_takes_its_callers_layout_a_public_method_and_a_layout_test_do_not():
    """`_quantize`'s only caller passes `x.contiguous()`: the `.contiguous()` inside is a no-op, on both paths (the
    prefilter reads what callers pass too). A public method's callers here are not all its callers (a framework calls
    `forward` with any layout), and under `if not k.is_contiguous():` the tensor is not contiguous."""
    assert _lint(LAYOUTS) == [(15, "VL301")]
    torch = pytest.importorskip("torch")
    scope = _run(LAYOUTS)
    strided = torch.randn(2, 5, 4, 3).transpose(1, 2)
    assert scope["SageImpl"]().forward(strided).shape == (8, 5, 3)  # the framework's strided call needs it
    assert scope["store"](torch.randn(2, 3)).is_contiguous()


# ---------------------------------------------------------------- round thirteen: sizes read on the host, a rebind
REPEAT_COUNTS = """
    import torch
    from torch import nn


    class PaddingMask(nn.Module):
        def forward(self, cu_seqlens: torch.Tensor, max_seqlen: int):
            seqlens = cu_seqlens[1:] - cu_seqlens[:-1]
            rows = [[False] * seqlens[i] + [True] * max_seqlen for i in range(2)]
            shapes = torch.ones(2, 3, dtype=torch.long)
            target = torch.cat([shapes[i, 1].repeat(seqlens[i]) for i in range(2)])
            return rows, target, [0] * max_seqlen
"""


def test_a_tensor_item_as_a_list_repeat_count_or_a_repeat_size_is_read_on_the_host():
    """`[False] * seqlens[i]` and `x.repeat(seqlens[i])` read a 0-dim tensor with `__index__` (a sync on the GPU); a
    Python int (`max_seqlen`) is no finding."""
    assert _lint(REPEAT_COUNTS) == [(8, "VL401"), (10, "VL401")]
    torch = pytest.importorskip("torch")
    rows, target, _ = _run(REPEAT_COUNTS)["PaddingMask"]()(torch.tensor([0, 2, 5]), 6)
    assert [len(row) for row in rows] == [8, 9] and target.shape == (5,)  # the counts were read as Python ints


REBIND = """
    import torch


    def upcast_(model):
        for name, param in model.named_parameters():
            if param.dtype != torch.float32:
                param = param.to(torch.float32)


    def upcast_fixed_(model):
        for name, param in model.named_parameters():
            if param.dtype != torch.float32:
                param.data = param.data.to(torch.float32)
"""


def test_a_loop_variable_rebound_in_an_if_block_and_never_read_again_changes_nothing():
    assert _lint(REBIND) == [(7, "VL205")]
    torch = pytest.importorskip("torch")
    scope = _run(REBIND)
    model = torch.nn.Linear(2, 2).to(torch.bfloat16)
    scope["upcast_"](model)
    assert model.weight.dtype == torch.bfloat16  # nothing changed
    scope["upcast_fixed_"](model)
    assert model.weight.dtype == torch.float32
