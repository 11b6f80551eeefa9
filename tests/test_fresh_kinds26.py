"""Kinds of code met in pass twenty-six, on model code no earlier pass had read (`bench/truth.py --models
heldout-dev`): each lint kind is checked with the prefilter on and off; what a belief claims, with real torch."""

from __future__ import annotations

import textwrap

from conftest import lint_snippet as _lint, run_snippet as _run
from viewlint.beliefs import beliefs_of_text


def _beliefs(source: str) -> dict[tuple[int, str], dict]:
    return {(r["line"], r["target"]): r for r in beliefs_of_text(textwrap.dedent(source).lstrip("\n"), "m.py")}


# ---------------------------------------------------------------- a submodule assigned a different class by each branch
BRANCHES = """
    import torch
    from torch import nn


    class Dense(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.down = nn.Linear(d, d, bias=False)

        def forward(self, x):
            return self.down(x)


    class Sparse(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.experts = nn.Linear(d, d)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b, s, d = x.shape
            y = self.experts(x.view(-1, d))
            return y.reshape(b, s, d)


    class Layer(nn.Module):
        def __init__(self, d, sparse):
            super().__init__()
            if sparse:
                self.mlp = Sparse(d)
            else:
                self.mlp = Dense(d)

        def forward(self, x):
            h = self.mlp(x)
            return h
"""


def test_a_submodule_built_by_either_branch_holds_either_class():
    # `if sparse: self.mlp = Sparse(d) else: self.mlp = Dense(d)`: the layer runs one of the two `forward`s. Before,
    # the second assignment replaced the first, and `h` was believed to own its storage (Qwen3-MoE's decoder layer
    # in `bench/truth.py`, where the sparse block's `reshape` is a view).
    beliefs = _beliefs(BRANCHES)
    assert beliefs[(21, "y")]["view"] is False  # a 2-D input: the product itself
    assert beliefs[(34, "h")]["tensor"] is True and beliefs[(34, "h")]["view"] is None


def test_either_branch_of_the_layer_is_what_the_belief_allows_with_real_torch():
    scope = _run(BRANCHES)
    torch = scope["torch"]
    x = torch.randn(2, 3, 4)
    assert scope["Layer"](4, True)(x)._base is not None  # the sparse block's reshape of a 2-D product: a view
    assert scope["Layer"](4, False)(x)._base is None  # a linear layer without a bias: the product itself


# ---------------------------------------------------------------- a linear layer another object holds
HELD_LINEAR = """
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim, bias=False):
            super().__init__()
            self.to_q = nn.Linear(dim, dim, bias=bias)


    class Processor:
        def __call__(self, attn: Attention, hidden_states: torch.Tensor):
            query = attn.to_q(hidden_states)
            return query
"""


def test_a_linear_layer_held_by_another_object_is_not_claimed_to_own_its_storage():
    # `attn.to_q(x)` of `attn: Attention`: with a bias, on a contiguous 3-D input, `F.linear` returns a view of its
    # product, and nothing here says how callers build `Attention` (diffusers' SD3 builds it with `bias=True`).
    beliefs = _beliefs(HELD_LINEAR)
    assert beliefs[(13, "query")]["tensor"] is True and beliefs[(13, "query")]["view"] is None


def test_a_held_linear_layers_output_is_a_view_with_a_bias_and_not_without_with_real_torch():
    scope = _run(HELD_LINEAR)
    torch = scope["torch"]
    x = torch.randn(2, 5, 8)
    assert scope["Processor"]()(scope["Attention"](8, bias=True), x)._base is not None
    assert scope["Processor"]()(scope["Attention"](8, bias=False), x)._base is None


# ---------------------------------------------------------------- einsum, tensordot, meshgrid, broadcast_tensors
PRODUCTS = """
    import torch


    def f(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor):
        y = torch.einsum("nhwc->nchw", x)
        z = torch.einsum("ij,jk->ik", a, b)
        t = torch.tensordot(a, b, dims=1)
        grid = torch.meshgrid(a[0], b[0], indexing="ij")
        gx, gy = torch.meshgrid(a[0], b[0], indexing="ij")
        wide, tall = torch.broadcast_tensors(a[:1], b[:, :1])
        return y, z, t, grid, gx, gy, wide, tall
"""


def test_einsum_and_tensordot_are_not_claimed_to_own_their_storage():
    # Both compute a product and reshape or permute it (a single-operand `einsum` permutes its input): `_base` is set.
    beliefs = _beliefs(PRODUCTS)
    for line, name in ((5, "y"), (6, "z"), (7, "t")):
        assert beliefs[(line, name)]["tensor"] is True and beliefs[(line, name)]["view"] is None


def test_meshgrid_and_broadcast_tensors_give_a_tuple_of_views():
    beliefs = _beliefs(PRODUCTS)
    assert beliefs[(8, "grid")]["tensor"] is False  # a tuple, not a tensor
    for line, name in ((9, "gx"), (9, "gy"), (10, "wide"), (10, "tall")):
        assert beliefs[(line, name)]["tensor"] is True and beliefs[(line, name)]["view"] is True


def test_products_and_broadcasts_are_views_with_real_torch():
    scope = _run(PRODUCTS)
    torch = scope["torch"]
    y, z, t, grid, gx, gy, wide, tall = scope["f"](torch.randn(2, 3, 4, 5), torch.randn(3, 4), torch.randn(4, 6))
    assert all(v._base is not None for v in (y, z, t))
    assert isinstance(grid, tuple) and all(v._base is not None for v in (gx, gy, wide, tall))


# ---------------------------------------------------------------- a subclass of a `torch.nn` layer
EMBEDDING = """
    import torch
    from torch import nn


    class LearnedPositions(nn.Embedding):
        def __init__(self, n, d):
            super().__init__(n + 2, d)
            self.offset = 2

        def forward(self, ids: torch.Tensor):
            return super().forward(ids + self.offset)


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.positions = LearnedPositions(16, 4)

        def forward(self, ids):
            pos = self.positions(ids)
            if pos.isnan().any():
                pos = torch.nan_to_num(pos)
            return pos
"""


def test_a_subclass_of_a_layer_returns_what_the_layer_returns():
    # `class LearnedPositions(nn.Embedding)` (BART's and OPT's positional embeddings): a module, whose
    # `super().forward(ids)` is the embedding's lookup. Before, what it returned was unknown, and the truth test of
    # its result went unreported.
    beliefs = _beliefs(EMBEDDING)
    assert beliefs[(20, "pos")]["tensor"] is True and beliefs[(20, "pos")]["view"] is False
    assert _lint(EMBEDDING) == [(21, "VL403")]


def test_the_layer_subclass_returns_an_embedding_lookup_with_real_torch():
    scope = _run(EMBEDDING)
    torch = scope["torch"]
    positions = scope["Encoder"]().positions
    pos = positions(torch.tensor([[0, 1, 2]]))
    assert isinstance(pos, torch.Tensor) and pos._base is None and pos.shape == (1, 3, 4)
    assert isinstance(positions, torch.nn.Module) and scope["Encoder"]()(torch.tensor([[0, 1, 2]])).shape == (1, 3, 4)


# ---------------------------------------------------------------- `is not None` guards
NONE_GUARD = """
    import torch
    from torch import nn


    class Filter(nn.Module):
        def forward(self, scores: torch.Tensor, threshold: float, keep_all: bool):
            mask = None if keep_all else scores > threshold
            if mask is not None:
                kept = mask
                if kept.any():
                    scores = scores.masked_fill(~kept, 0.0)
            return scores


    def first_row(batch: torch.Tensor, use: bool):
        row = batch[0] if use else None
        if row is None:
            return None
        picked = row
        return picked
"""


def test_a_name_that_may_hold_none_holds_its_tensor_where_a_test_says_it_is_not_none():
    # `mask = None if keep_all else scores > threshold`: a tensor on one path only; under `if mask is not None:`, and
    # after `if row is None: return None`, the tensor. Before, the name stayed "a tensor or None" there, and the truth
    # test of the mask inside the guard went unreported.
    beliefs = _beliefs(NONE_GUARD)
    assert beliefs[(7, "mask")]["tensor"] is None
    assert beliefs[(9, "kept")]["tensor"] is True
    assert beliefs[(19, "picked")]["view"] is True and beliefs[(19, "picked")]["base"] == "batch"
    assert _lint(NONE_GUARD) == [(10, "VL403")]


def test_the_guarded_names_hold_tensors_with_real_torch():
    scope = _run(NONE_GUARD)
    torch = scope["torch"]
    scores = torch.tensor([0.1, 0.9])
    assert torch.equal(scope["Filter"]()(scores, 0.5, False), torch.tensor([0.0, 0.9]))
    batch = torch.randn(4, 3)
    assert scope["first_row"](batch, True)._base is batch and scope["first_row"](batch, False) is None


# ---------------------------------------------------------------- a copy of a parameter annotated to admit None
OPTIONAL_PARAMETER = """
    import torch
    from torch import nn


    class Embeddings(nn.Module):
        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
            position_mask = attention_mask
            if position_mask is None:
                position_mask = torch.ones_like(input_ids)
            positions = torch.cumsum(position_mask, dim=1)
            return positions


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = Embeddings()

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
            return self.embeddings(input_ids, attention_mask)
"""


def test_a_copy_of_a_parameter_that_may_be_none_is_not_claimed_a_tensor():
    # `attention_mask: Tensor | None = None` copied before any test (OPT's `position_attention_mask`, BERT's
    # `attention_mask if ... else encoder_attention_mask`): `bench/truth.py` saw `None` there every time, and the
    # belief said "a tensor". After `if position_mask is None: position_mask = ...` it is a tensor on both paths. The
    # caller here passes its own parameter of the same annotation: no evidence that it is not `None`.
    beliefs = _beliefs(OPTIONAL_PARAMETER)
    assert beliefs[(7, "position_mask")]["tensor"] is None
    assert beliefs[(9, "position_mask")]["tensor"] is True
    assert beliefs[(10, "positions")]["tensor"] is True


def test_the_copy_is_none_when_the_caller_passes_none_with_real_torch():
    scope = _run(OPTIONAL_PARAMETER)
    torch = scope["torch"]
    ids = torch.tensor([[5, 6, 7]])
    assert torch.equal(scope["Embeddings"]()(ids), torch.tensor([[1, 2, 3]]))
    assert torch.equal(scope["Embeddings"]()(ids, torch.tensor([[0, 1, 1]])), torch.tensor([[0, 1, 2]]))
    assert torch.equal(scope["Model"]()(ids), torch.tensor([[1, 2, 3]]))


# ---------------------------------------------------------------- an annotated tuple of ints beats what callers pass
TUPLE_OF_INTS = """
    from typing import Tuple

    import torch
    from torch import nn


    class Mlp(nn.Module):
        def forward(self, x: torch.Tensor, HW: Tuple[int, int, int]) -> torch.Tensor:
            frames, height, width = HW
            rows = max(1, (1 << 30) // (height * width))
            return x[:rows]


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = Mlp()

        def forward(self, x, THW=None):
            return self.mlp(x, HW=THW)


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(2)])

        def forward(self, x: torch.Tensor, t: int, h: int, w: int):
            for block in self.blocks:
                args = (x, (t, h, w))
                x = block(*args)
            return x
"""


def test_a_parameter_annotated_a_tuple_of_ints_is_not_what_a_joined_tuple_of_arguments_says():
    # `block(*args)` of `args = (x, (t, h, w))`: what the items of a tuple passed whole may be is joined, so the callers
    # seem to pass a tensor as `HW`. An annotation of a tuple of tensors that callers give a tensor is a wrong annotation
    # real code has (GPT-2's block); one of ints is not (diffusers' Sana-WM `GLUMBConvTemp`, where this gave a false
    # VL403 once its block's `self.mlp`, assigned one of two classes, was read as a choice).
    beliefs = _beliefs(TUPLE_OF_INTS)
    assert beliefs[(9, "height")]["tensor"] is False and beliefs[(10, "rows")]["tensor"] is False
    assert _lint(TUPLE_OF_INTS) == []


def test_the_tuple_holds_ints_with_real_torch():
    scope = _run(TUPLE_OF_INTS)
    torch = scope["torch"]
    assert scope["Model"]()(torch.randn(4, 3), 1, 2, 2).shape == (4, 3)


# ---------------------------------------------------------------- a parameter annotated a tensor that callers give a tuple
ROTARY = """
    import torch
    from torch import nn


    class Rotary(nn.Module):
        def forward(self, x: torch.Tensor, pos: torch.Tensor):
            freqs = pos[..., None].float() * x.new_ones(4)
            return freqs.cos(), freqs.sin()


    class Attn(nn.Module):
        def forward(self, h: torch.Tensor, position_embeddings: torch.Tensor = None):
            cos, sin = position_embeddings
            return h * cos + h * sin


    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = Attn()

        def forward(self, h: torch.Tensor, position_embeddings: torch.Tensor = None):
            return self.attn(h, position_embeddings=position_embeddings)


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary = Rotary()
            self.layers = nn.ModuleList([Layer() for _ in range(2)])

        def forward(self, h: torch.Tensor, pos: torch.Tensor):
            pe = self.rotary(h, pos)
            for layer in self.layers:
                h = layer(h, position_embeddings=pe)
            return h
"""


def test_a_parameter_annotated_a_tensor_that_every_caller_gives_a_tuple_holds_the_tuple():
    # Gemma 3 annotates `position_embeddings: torch.Tensor = None` and passes the rotary embedding's `(cos, sin)`: read
    # as the annotation says, `cos, sin = position_embeddings` unpacked two rows of one tensor, views of it.
    beliefs = _beliefs(ROTARY)
    assert beliefs[(13, "cos")]["tensor"] is True and beliefs[(13, "cos")]["view"] is False


def test_the_rotary_pair_is_two_tensors_of_their_own_with_real_torch():
    scope = _run(ROTARY)
    torch = scope["torch"]
    cos, sin = scope["Rotary"]()(torch.randn(2, 3, 4), torch.arange(3))
    assert cos._base is None and sin._base is None
    assert scope["Model"]()(torch.randn(2, 3, 4), torch.arange(3)).shape == (2, 3, 4)


# ---------------------------------------------------------------- numbers from `math`, and results with their own `_base`
NUMBERS_AND_BASES = """
    import math

    import torch
    import torch.nn.functional as F
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(4, 2, batch_first=True)

        def forward(self, x: torch.Tensor, w: torch.Tensor, d: int):
            emb = math.log(10000) / (d - 1)
            emb = torch.exp(torch.arange(d).float() * -emb)
            repeated = torch.repeat_interleave(x, 2, dim=-1)
            joined = F.bilinear(x, x, w)
            attended = self.attn(x, x, x)[0]
            return emb.unsqueeze(0), repeated, joined, attended
"""


def test_math_gives_numbers_and_some_ops_results_may_have_a_base():
    # XGLM's `emb = math.log(10000) / (half_dim - 1)` was believed a tensor, because the name is used as one after it
    # is rebound; `math.log` gives a float. `repeat_interleave` by an int, `F.bilinear` and `nn.MultiheadAttention`
    # return tensors whose `_base` is set (Cohere's rotary embedding, SigLIP's pooling head): not claimed either way.
    beliefs = _beliefs(NUMBERS_AND_BASES)
    assert beliefs[(14, "emb")]["tensor"] is False
    for line, name in ((16, "repeated"), (17, "joined"), (18, "attended")):
        assert beliefs[(line, name)]["tensor"] is True and beliefs[(line, name)]["view"] is None


def test_the_numbers_and_bases_with_real_torch():
    scope = _run(NUMBERS_AND_BASES)
    torch = scope["torch"]
    assert isinstance(scope["math"].log(10000) / 3, float)
    x = torch.randn(2, 3, 4)
    _, repeated, joined, attended = scope["Block"]()(x, torch.randn(5, 4, 4), 4)
    assert repeated._base is not None and joined._base is not None and attended._base is not None
