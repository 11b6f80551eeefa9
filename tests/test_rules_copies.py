"""Hidden copies: VL301 redundant-contiguous .. VL309 cat-grows-in-loop, rule by rule."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths
from viewlint.engine import lint_text
from viewlint.settings import Settings


def codes(lint_source, source: str, code: str) -> list[int]:
    """Rows where `code` fires on the dedented snippet."""
    return [row for row, found, _ in lint_source(textwrap.dedent(source), select=(code,)) if found == code]


def fix_of(source: str, code: str) -> list[str]:
    """The fixed text of each finding of `code`: every edit applied to the snippet."""
    source = textwrap.dedent(source)
    lines = source.splitlines(keepends=True)
    fixed = []
    for diagnostic in lint_text(source, "snippet.py", Settings(select=(code,))):
        assert diagnostic.fix is not None and diagnostic.fix.edits
        (edit,) = diagnostic.fix.edits
        assert edit.start.row == edit.end.row
        line = lines[edit.start.row - 1]
        fixed.append(line[: edit.start.column - 1] + edit.content + line[edit.end.column - 1 :])
    return fixed


# ---------------------------------------------------------------- VL301
def test_vl301_fires_on_factories_cat_matmul_and_double_contiguous(lint_source):
    source = """
    import torch
    def f(x: torch.Tensor, y: torch.Tensor):
        a = torch.zeros(3, 4).contiguous()
        b = torch.cat([a, a]).contiguous()
        c = (x @ y).contiguous()
        d = x.contiguous().contiguous()
        e = (a * 2 + 1).contiguous()
        f = torch.cat([x, y]).contiguous()  # channels_last inputs give a channels_last result
        return a, b, c, d, e, f
    """
    assert codes(lint_source, source, "VL301") == [4, 5, 6, 7, 8]


def test_vl301_silent_on_views_unknown_and_stride_preserving_ops(lint_source):
    source = """
    import torch
    def f(x: torch.Tensor, qkv: torch.Tensor):
        q, k, v = qkv.split([4, 4, 4], dim=-1)
        a = k.contiguous()
        b = x.t().contiguous()
        c = (x.t() + 1).contiguous()
        d = torch.empty_like(x).contiguous()
        e = x.clone().t().contiguous()
        f = x.contiguous()
        g = torch.einsum("ij->ji", torch.zeros(2, 3)).contiguous()
        h = torch.empty(1, 2, 3, 4, memory_format=torch.channels_last).contiguous()
        i = torch.zeros(3, 4).contiguous(memory_format=torch.channels_last)
        return a, b, c, d, e, f, g, h, i
    """
    assert codes(lint_source, source, "VL301") == []


def test_vl301_branch_merge_is_not_contiguous(lint_source):
    source = """
    import torch
    def f(x: torch.Tensor, flag: bool):
        y = torch.zeros(3, 4)
        if flag:
            y = x.t()
        return y.contiguous()
    """
    assert codes(lint_source, source, "VL301") == []


def test_vl301_an_except_handler_cannot_count_on_what_its_try_body_made(lint_source):
    # torchrl's `sub = sub.contiguous(canonical=True)` in the `try`, `sub = sub.contiguous()` in `except TypeError`:
    # the handler runs when the `try` line failed, on the layout `sub` had before it.
    source = """
    import torch
    def f(x: torch.Tensor):
        y = x.t()
        try:
            y = y.contiguous()
            check(y)
        except RuntimeError:
            y = y.contiguous()
        return y
    """
    assert codes(lint_source, source, "VL301") == []


def test_vl301_a_clone_of_an_object_of_another_class_is_that_class(lint_source):
    # torchrl's transport: `request_spec.clone().contiguous()` of a `TensorDictBase` (whose `clone` takes no
    # `memory_format=`), then `self._request_spec.clone().contiguous()` of that.
    source = """
    import torch
    from tensordict import TensorDictBase
    class Transport:
        def __init__(self, spec: TensorDictBase, x: torch.Tensor):
            self.spec = spec.clone().contiguous()
            self.buffer = self.spec.clone().contiguous()
            self.rows = x.t().clone().contiguous()
    """
    assert codes(lint_source, source, "VL301") == [8]


def test_vl301_clone_rewrite_is_safe_only_on_a_tensor():
    # `clone(memory_format=...)` is a tensor's: on an object nothing identifies (a TensorDict, say) it is unsafe.
    source = textwrap.dedent("""
    import torch
    def f(x: torch.Tensor, y):
        return x.clone().contiguous(), y.clone().contiguous()
    """)
    found = lint_text(source, "snippet.py", Settings(select=("VL301",)))
    assert [(d.start.column, d.fix.applicability.value) for d in found] == [(12, "safe"), (36, "unsafe")]


def test_vl301_fix_drops_contiguous_and_rewrites_clone():
    source = """
    import torch
    def f(x: torch.Tensor):
        a = torch.cat([x.contiguous(), x.contiguous()]).contiguous()
        b = x.t().clone().contiguous()
        return a, b
    """
    assert fix_of(source, "VL301") == [
        "    a = torch.cat([x.contiguous(), x.contiguous()])\n",
        "    b = x.t().clone(memory_format=torch.contiguous_format)\n",
    ]


def test_vl301_clone_fix_needs_torch_under_its_name(lint_source):
    source = """
    import torch as T
    def f(x: T.Tensor):
        return x.t().clone().contiguous()
    """
    diagnostics = lint_text(textwrap.dedent(source), "snippet.py", Settings(select=("VL301",)))
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None and not diagnostics[0].fix.edits


# ---------------------------------------------------------------- VL302
MODULE = """
import torch
import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.register_buffer("inv_freq", torch.ones(4))
        self.q_proj = nn.Linear(4, 4)
        self.w_t = self.w.t().contiguous()

    def forward(self, x):
{body}
"""


def _module(body: str) -> str:
    return MODULE.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


def test_vl302_fires_on_transposed_copy_and_casts_in_forward(lint_source):
    body = """
    a = self.w.t().contiguous()
    b = self.w.float()
    c = self.q_proj.weight.T.contiguous()
    d = self.q_proj.weight.to(torch.float16)
    return a
    """
    assert codes(lint_source, _module(body), "VL302") == [15, 17]
    with_casts = lint_source(_module(textwrap.dedent(body)), select=("VL302",), rule_options=(("VL302", (("casts", True),)),))
    assert [row for row, _, _ in with_casts] == [15, 16, 17, 18]


def test_vl302_casts_of_vectors_are_not_reported(lint_source):
    body = """
    a = self.inv_freq.float()
    b = self.bias.to(torch.float16)
    c = self.q_proj.bias.float()
    d = self.weight.float()
    return a
    """
    found = lint_source(_module(textwrap.dedent(body)), select=("VL302",), rule_options=(("VL302", (("casts", True),)),))
    assert found == []


def test_vl302_silent_on_activations_submodules_and_cached_copies(lint_source):
    body = """
    a = x.to(self.w.dtype)
    b = self.q_proj(x)
    c = self.w.to(x.dtype)
    self.cached = self.w.float()
    d = self.q_proj.float()
    return a
    """
    assert codes(lint_source, _module(body), "VL302") == []


def test_vl302_needs_a_hot_path(lint_source):
    source = """
    import torch
    class M(torch.nn.Module):
        def export(self):
            return self.weight.t().contiguous()
    """
    assert codes(lint_source, source, "VL302") == []


# ---------------------------------------------------------------- VL303
def test_vl303_tracks_repeats_through_names_and_repeat_kv(lint_source):
    source = """
    import torch
    import torch.nn.functional as F

    def repeat_kv(hidden, n_rep):
        b, h, s, d = hidden.shape
        return hidden[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)

    def a(q, k, v, n):
        k = k.repeat_interleave(n, dim=1)
        return F.scaled_dot_product_attention(q, k, v)

    def b(q, k, v, n):
        return F.scaled_dot_product_attention(q, repeat_kv(k, n), repeat_kv(v, n))

    def c(q, k, v, n):
        return F.scaled_dot_product_attention(q, k.repeat(1, n, 1, 1), v)
    """
    # Each finding sits on the copy: the repeat, not the attention call.
    assert codes(lint_source, source, "VL303") == [10, 14, 14, 17]


def test_vl303_silent_with_enable_gqa_or_other_dims(lint_source):
    source = """
    import torch.nn.functional as F

    def a(q, k, v, n):
        k = k.repeat_interleave(n, dim=1)
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=False)

    def b(q, k, v, n):
        k = k.repeat_interleave(n, dim=0)
        return F.scaled_dot_product_attention(q, k, v)

    def c(q, k, v, n):
        k = k.repeat_interleave(n, dim=1)
        k = k[:, :4]
        return F.scaled_dot_product_attention(q, k, v)

    def d(q, k, v, n, mask, **kw):
        k = k.repeat_interleave(n, dim=1)
        F.scaled_dot_product_attention(q, k, v, **kw)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    """
    assert codes(lint_source, source, "VL303") == []


# ---------------------------------------------------------------- VL304
def test_vl304_fires_on_assigned_back_updates(lint_source):
    source = """
    import torch
    class C:
        def write(self, idx, rows, mask):
            self.cache_k = self.cache_k.index_copy(0, idx, rows)
            self.cache_v = self.cache_v.masked_fill(mask, 0)
    def f(idx, src, scores, mask, arg):
        buf = torch.zeros(4, 4)
        buf = buf.scatter(0, idx, src)
        scores = scores.masked_fill(mask, 0)
        other = buf.index_put((idx,), src)
        arg = arg.index_copy(0, idx, src)
        buf = buf.index_copy(1, idx, buf)
        return buf, scores, other, arg
    """
    assert codes(lint_source, source, "VL304") == [5, 6, 9]


def test_vl304_unsafe_fix_uses_the_inplace_twin():
    source = """
    import torch
    def f(idx, rows):
        buf = torch.zeros(8, 2)
        buf = buf.index_copy(0, idx, rows)
        return buf
    """
    diagnostics = lint_text(textwrap.dedent(source), "snippet.py", Settings(select=("VL304",)))
    assert diagnostics[0].fix is not None and diagnostics[0].fix.applicability.value == "unsafe"
    assert fix_of(source, "VL304") == ["    buf.index_copy_(0, idx, rows)\n"]


# ---------------------------------------------------------------- VL305
def test_vl305_fires_only_on_host_tensor_moved_then_cast(lint_source):
    source = """
    import torch
    def f(values, device, x):
        a = torch.tensor(values, dtype=torch.float64).cuda().half()
        b = torch.tensor(values, dtype=torch.float64).to(device).to(torch.bfloat16)
        c = torch.tensor(values).float().to(device)
        d = x.to(device).half()
        e = x.cpu().float()
        f = torch.arange(4).to(device).long()
        g = torch.tensor(values, dtype=torch.float64).to(device, non_blocking=True).half()
        h = torch.tensor(values, dtype=torch.float64).to(x).half()
        return a, b, c, d, e, f, g, h
    """
    assert codes(lint_source, source, "VL305") == [4, 5]


def test_vl305_fix_fuses_device_and_dtype():
    source = """
    import torch
    def f(values, device):
        return torch.tensor(values, dtype=torch.float64).to(device).half()
    """
    assert fix_of(source, "VL305") == [
        "    return torch.tensor(values, dtype=torch.float64).to(device=device, dtype=torch.float16)\n"
    ]


def test_vl304_private_only_when_the_allocation_surely_ran(lint_source):
    source = """
    def f(x, a, b, m):
        if a:
            x = x.masked_scatter(m, a)
        if b:
            x = x.masked_scatter(m, b)
        y = x.masked_fill(m, 0)
        return y
    def g(x, m):
        x = x.masked_scatter(m, 1)
        x = x.masked_scatter(m, 2)
        return x
    """
    assert codes(lint_source, source, "VL304") == [11]


def test_vl304_silent_in_registered_decompositions(lint_source):
    source = """
    import torch
    @register_decomposition(aten.foo)
    def foo(idx, src):
        out = torch.zeros(4, 4)
        out = out.scatter_add(1, idx, src)
        return out
    """
    assert codes(lint_source, source, "VL304") == []


@pytest.mark.parametrize("repeat", [
    "x[:, :, None].expand(b, h, n, t, d).contiguous().view(b, h * n, t, d)",  # inline
    "repeat_heads(x, n)",  # through a helper of the module that does so
])
def test_heads_repeated_by_expand_then_contiguous_view_are_a_copy(repeat):
    source = textwrap.dedent(f"""\
        import torch
        import torch.nn.functional as F


        def repeat_heads(x, n):
            b, h, t, d = x.shape
            return x[:, :, None].expand(b, h, n, t, d).contiguous().view(b, h * n, t, d)


        def attend(q: torch.Tensor, x: torch.Tensor, n: int):
            b, h, t, d = x.shape
            k = {repeat}
            return F.scaled_dot_product_attention(q, k, k)
    """)
    assert (12, "VL303") in lint_both_paths(source)


def test_a_view_of_expanded_heads_without_a_copy_is_not_reported():
    source = textwrap.dedent("""\
        import torch
        import torch.nn.functional as F


        def attend(q: torch.Tensor, x: torch.Tensor, n: int):
            k = x[:, :, None].expand(-1, -1, n, -1, -1).view(-1)
            return F.scaled_dot_product_attention(q, k, k)
    """)
    assert [code for _, code in lint_both_paths(source) if code == "VL303"] == []


# ---------------------------------------------------------------- VL307
def test_vl307_fires_on_a_tensor_the_analysis_knows_and_only_there():
    source = textwrap.dedent("""
        import numpy as np
        import torch

        def _to_device(data, device):
            return torch.tensor(data, device=device)

        def positions(offsets: torch.Tensor, values: list[float], rows: np.ndarray, anything, n: int):
            a = torch.tensor(offsets)[:, None]
            b = torch.tensor(values)
            c = torch.tensor(rows)
            d = torch.tensor(anything)
            e = torch.tensor(n, dtype=torch.long)
            f = torch.as_tensor(offsets)
            g = torch.tensor(offsets.sum().item())
            h = torch.tensor(torch.arange(4) * 2, requires_grad=True)
            return a, b, c, d, e, f, g, h

        def fit(X: torch.Tensor, ids):
            return _to_device(X[ids], "cpu")
    """)
    assert [row for row, code in lint_both_paths(source) if code == "VL307"] == [6, 9, 16]


def test_vl307_fix_is_as_tensor_only_with_dtype_and_device():
    source = """
    import torch
    def f(x: torch.Tensor, device):
        a = torch.tensor(x, dtype=torch.float32, device=device)
        b = torch.tensor(x, requires_grad=True)
        return a, b
    """
    (first, second) = lint_text(textwrap.dedent(source), "snippet.py", Settings(select=("VL307",)))
    assert [e.content for e in first.fix.edits] == ["torch.as_tensor"]
    assert first.fix.applicability.value == "unsafe"
    assert not second.fix.edits


def test_vl307_claim_and_fix_on_real_torch():
    import warnings

    torch = pytest.importorskip("torch")

    x = torch.randn(16, 4)[torch.arange(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copied = torch.tensor(x, device="cpu")
    assert copied.data_ptr() != x.data_ptr() and torch.equal(copied, x)  # the copy the finding claims
    assert torch.as_tensor(x, device="cpu").data_ptr() == x.data_ptr()  # the fix makes none


def test_vl307_reads_the_type_tests_around_the_call():
    # Each `torch.tensor` runs only where a test in the same statement, or the `if` around it, says its data is a
    # list or a number: a conditional expression's `else`, `type(x) is list`, `isinstance(x, Number)`.
    source = textwrap.dedent("""
        from numbers import Number
        import torch

        def register(value, device):
            return value.detach().clone() if isinstance(value, torch.Tensor) else torch.tensor(value, device=device)

        def rebuild(scales, zero_points):
            n = scales.numel() + zero_points.numel()
            if type(scales) is list and type(zero_points) is list:
                scales = torch.tensor(scales)
            return scales, n

        def degrees(df, param):
            if isinstance(df, Number):
                return torch.tensor(df, dtype=param.dtype)
            return df.shape

        def still_a_tensor(x: torch.Tensor, flag):
            y = torch.tensor(x) if flag else x
            return y, isinstance(x, torch.Tensor) and torch.tensor(x)
    """)
    assert [row for row, code in lint_both_paths(source) if code == "VL307"] == [20, 21]


def test_vl302_a_dropout_of_a_parameter_is_an_activation_while_training():
    # `self.dropout(w)` is `w` itself only in eval mode; while training it is a new tensor: what is copied from it
    # per call is an activation, not a weight the module could keep transposed. An `Identity` gives `w` itself.
    source = textwrap.dedent("""
        import torch
        from torch import nn

        class Stream(nn.Module):
            def __init__(self, d: int):
                super().__init__()
                self.mask_emb = nn.Parameter(torch.zeros(1, 1, d))
                self.weight = nn.Parameter(torch.zeros(d, d))
                self.dropout = nn.Dropout(0.1)
                self.same = nn.Identity()

            def forward(self, x: torch.Tensor):
                g = self.dropout(self.mask_emb.expand(x.shape[0], x.shape[1], -1))
                states = [(x, g)]
                out = tuple(h.permute(1, 0, 2).contiguous() for pair in states for h in pair)
                w = self.same(self.weight)
                return out, w.t().contiguous()
    """)
    assert [found for found in lint_both_paths(source) if found[1] == "VL302"] == [(18, "VL302")]


# ---------------------------------------------------------------- VL308
def test_vl308_fires_on_a_clone_next_to_a_conversion_and_only_there(lint_source):
    source = """
    import torch
    def f(x: torch.Tensor, dev, y):
        a = x.clone().float()
        b = x.detach().clone().to(dev)
        c = x.cpu().clone()
        d = x.to(dev, torch.float16).clone()
        e = x.clone().to(x.device)
        g = x.clone().detach()
        h = x.clone().to(dev, copy=True)
        i = torch.zeros(3).clone().float()
        j = x.clone(memory_format=torch.channels_last).half()
        k = y.clone().to(dev)
        m = {"a": 1}.copy()
        n = torch.zeros(3, dtype=torch.int64).clone().to(torch.long)
        return a, b, c, d, e, g, h, i, j, k, m, n
    """
    # `e`: `.to(x.device)` of `x` moves nothing; `i`, `n`: the dtype is known already; `h`: one copy, said so;
    # `j`: the clone asks for a layout. `y` may be a tensor: reported, with an unsafe fix.
    assert codes(lint_source, source, "VL308") == [4, 5, 6, 7, 13]


def test_vl308_fix_is_one_to_with_copy():
    source = """
    import torch
    def f(x: torch.Tensor, dev):
        a = x.clone().float()
        b = x.detach().clone().to(dev, non_blocking=True)
        c = x.cpu().clone()
        d = x.to(device=dev, dtype=torch.float16).clone()
        e = x.clone().cuda()
    """
    assert [line.strip() for line in fix_of(source, "VL308")] == [
        "a = x.to(torch.float32, copy=True)",
        "b = x.detach().to(dev, non_blocking=True, copy=True)",
        'c = x.to("cpu", copy=True)',
        "d = x.to(device=dev, dtype=torch.float16, copy=True)",
        'e = x.to("cuda", copy=True)',
    ]


def test_vl308_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 5, dtype=torch.bfloat16)[:, 1:]
    cloned = x.clone()
    converted = cloned.float()
    fused = x.to(torch.float32, copy=True)
    # The chain allocates twice; the fused call once, with the same values, dtype and strides.
    assert cloned.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert converted.untyped_storage().data_ptr() != cloned.untyped_storage().data_ptr()
    assert torch.equal(fused, converted) and fused.stride() == converted.stride()
    # Where the cast changes nothing, the fused call still copies, as the clone did.
    same = torch.randn(3)
    assert same.to(torch.float32, copy=True).untyped_storage().data_ptr() != same.untyped_storage().data_ptr()
    assert same.clone().float().untyped_storage().data_ptr() != same.untyped_storage().data_ptr()


# ---------------------------------------------------------------- VL309
def test_vl309_fires_where_one_tensor_grows_across_iterations(lint_source):
    source = """
    import torch
    def f(chunks, model, layers, h, skip, ids, tensors, merged, transfers):
        out = torch.zeros(0, 4)
        for c in chunks:
            out = torch.cat([out, model(c)])
        acc = None
        for c in chunks:
            acc = model(c) if acc is None else torch.concat((acc, model(c)))
        first = None
        for c in chunks:
            if first is None:
                first = model(c)
            else:
                first = torch.hstack([model(c), first])
        for layer in layers:
            h = torch.cat([h, skip], dim=1)
            h = layer(h)
        while ids.shape[1] < 10:
            ids = torch.cat([ids, model(ids)], dim=-1)
            ids = ids[:, -4:]
        for t in tensors:
            t = torch.cat([t, t])
        for tr in transfers:
            earlier = merged.get(tr)
            earlier.idx = torch.cat([earlier.idx, tr.idx])
        for c in chunks:
            def inner(y):
                y = torch.cat([y, c])
                return y
        total = torch.cat([out, acc])
        while out.shape[0] < 100:
            out = torch.cat([out, out.flip(0)[:3]])
        return out, acc, first, h, ids, total
    """
    # Not: `h` is rebound by the layer, `ids` trimmed to a window, `t` is the loop variable, `earlier` is another object
    # each iteration, `y` is joined once per call of `inner`, `total` is outside any loop; the last piece is a part of
    # `out` itself (padding by reflection: each join may double it).
    assert codes(lint_source, source, "VL309") == [6, 9, 15]


def test_vl309_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    piece = torch.ones(8, 4)
    grown = piece[:0]
    written = []
    for _ in range(6):
        previous = grown
        grown = torch.cat([grown, piece])
        assert grown.untyped_storage().data_ptr() != previous.untyped_storage().data_ptr() or previous.numel() == 0
        written.append(grown.numel())
    # Every join writes the whole result: 1 + 2 + ... + 6 pieces, against 6 for one join after the loop.
    assert sum(written) == 21 * piece.numel()
    assert torch.cat([piece] * 6).numel() == 6 * piece.numel()


def test_vl308_a_constructors_copy_cast_at_once(lint_source):
    source = """
    import numpy as np
    import torch
    def f(ids: np.ndarray, lens: list[int], scale: float):
        a = torch.Tensor(ids).long()
        b = torch.Tensor(ids).float()
        c = torch.tensor([1.0, 2.0]).float()
        d = torch.tensor([1.0, 8.0]).bfloat16()
        e = torch.tensor(ids).float()
        g = torch.tensor(scale).float()
        h = torch.tensor(ids, dtype=torch.int64).long()
        return a, b, c, d, e, g, h
    """
    # `b`: `torch.Tensor` is float32 already; `c`: float literals make float32; `g`: a Python number of unknown kind;
    # `h`: the dtype is given.
    assert codes(lint_source, source, "VL308") == [5, 8, 9]


def test_vl308_constructor_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    ids = [0, 1, 2, 3, 4, 5]  # (a NumPy array of ints goes the same way)
    made = torch.Tensor(ids)
    assert made.dtype == torch.float32  # the legacy constructor copies into float32 whatever the data is
    cast = made.long()
    assert cast.untyped_storage().data_ptr() != made.untyped_storage().data_ptr()
    assert torch.equal(cast, torch.tensor(ids, dtype=torch.int64))


def test_vl309_a_cache_grown_on_every_call_of_forward(lint_source):
    source = """
    import torch
    from torch import nn
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.cache_k = torch.zeros(1, 0, 8)
        def forward(self, k):
            self.cache_k = torch.cat([self.cache_k, k], dim=1)
            self.window = torch.cat([self.cache_k, k], dim=1)[:, -4:]
            return self.cache_k
        def reset(self, k):
            self.cache_k = torch.cat([self.cache_k, k], dim=1)
    """
    # `reset` is no hot path; `self.window` is not what it joins.
    assert codes(lint_source, source, "VL309") == [9]
