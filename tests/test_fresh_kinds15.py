"""Kinds of code written fresh for pass fifteen, from a fourth blind round of public bug reports. Each kind is checked
with the prefilter on and off, and with real torch where the finding claims something about run time."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


# ---------------------------------------------------------------- `self(...)`: a module, or a mixin of one, runs its model
SELF_CALL = """
    import torch
    from torch import nn


    class SamplingMixin:
        def sample(self, input_ids, n):
            raw_logits = ()
            for _ in range(n):
                outputs = self(input_ids)
                next_token_logits = outputs.logits[:, -1, :]
                raw_logits += (next_token_logits,)
            return raw_logits


    class Helper:
        def sample(self, input_ids, n):
            raw_logits = ()
            for _ in range(n):
                outputs = self(input_ids)
                raw_logits += (outputs.logits[:, -1, :],)
            return raw_logits

        def __call__(self, input_ids):
            return input_ids


    class LM(nn.Module, SamplingMixin):
        def forward(self, ids):
            return ids
"""


def test_self_call_in_a_mixin_of_a_module_is_the_models_output():
    # transformers PR #30536: `outputs = self(**model_inputs)` in `GenerationMixin`, then each step's
    # `outputs.logits[:, -1, :]` kept in the returned `raw_logits` tuple. `Helper` is no module: its call is its own.
    assert _lint(SELF_CALL) == [(11, "VL101")]


def test_self_call_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    logits = torch.randn(2, 50, 1000)
    kept = logits[:, -1, :]
    assert kept._base is logits and kept.untyped_storage().nbytes() == logits.untyped_storage().nbytes()
    assert kept.untyped_storage().nbytes() == 50 * kept.numel() * kept.element_size()


# ---------------------------------------------------------------- VL306: a helper that iterates the rows it is given
ROWS_HELPER = """
    import torch
    import torch.nn.functional as F


    def selective_log_softmax(logits, index):
        out = []
        for row_logits, row_labels in zip(logits, index):
            out.append(F.log_softmax(row_logits, dim=-1).gather(-1, row_labels))
        total = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
        return torch.stack(out), total


    def viewing_rows(logits):
        return [row.view(-1) for row in logits]


    def loss(outputs, labels):
        shift_logits = outputs.logits[..., :-1, :].contiguous()
        first = selective_log_softmax(shift_logits, labels)
        shift_more = outputs.logits[..., :-1, :].contiguous()
        second = viewing_rows(shift_more)
        return first, second
"""


def test_vl306_reads_the_rows_a_helper_iterates():
    # trl PR #5926: `logits[..., :-1, :].contiguous()` handed to a helper that takes each row as it is. A helper that
    # `.view`s each row needs the copy.
    assert _lint(ROWS_HELPER) == [(18, "VL306")]


def test_vl306_rows_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    logits = torch.randn(2, 5, 7)
    sliced = logits[..., :-1, :]
    assert not sliced.is_contiguous()
    index = torch.zeros(2, 4, 1, dtype=torch.long)
    rows = [torch.log_softmax(r, dim=-1).gather(-1, i) for r, i in zip(sliced, index)]
    copied = [torch.log_softmax(r, dim=-1).gather(-1, i) for r, i in zip(sliced.contiguous(), index)]
    assert all(torch.equal(a, b) for a, b in zip(rows, copied))


# ---------------------------------------------------------------- VL309: a join in each branch of the loop
BRANCH_JOINS = """
    import torch


    def stitch(chunks, overlap):
        result = chunks[0]
        for chunk in chunks[1:]:
            if overlap > 0:
                blended = result[..., -overlap:] * 0.5 + chunk[..., :overlap] * 0.5
                result = torch.cat([result[..., :-overlap], blended, chunk[..., overlap:]], dim=-1)
            else:
                result = torch.cat([result, chunk], dim=-1)
        return result


    def window(chunks):
        result = chunks[0]
        for chunk in chunks[1:]:
            result = torch.cat([result, chunk], dim=-1)
            result = result[..., -16:]
        return result
"""


def test_vl309_joins_in_both_branches_grow_one_tensor():
    # VoiceStudio PR #2259: audio stitched chunk by chunk, cross-faded in one branch, joined plainly in the other.
    # `window` keeps the last 16 samples: nothing accumulates.
    assert [f for f in _lint(BRANCH_JOINS) if f[1] == "VL309"] == [(11, "VL309")]


# ---------------------------------------------------------------- VL103: a helper of the module writes what it is passed
HELPER_WRITES = """
    import pickle
    from typing import NamedTuple, Optional

    import torch


    class Part(NamedTuple):
        feats: Optional[torch.Tensor]
        ids: Optional[torch.Tensor]


    def append_tensor_to_file(filename, tensor):
        with open(filename, "ab") as f:
            pickle.dump(tensor, f)


    def save_chunk(out, part: Part):
        append_tensor_to_file(out + "/feats.pkl", part.feats)
        append_tensor_to_file(out + "/ids.pkl", part.ids)


    def partition(out, n_ids: torch.Tensor, feat: torch.Tensor):
        for chunk in torch.chunk(n_ids, 4):
            save_chunk(out, Part(feats=feat[chunk], ids=chunk))
            save_chunk(out, Part(feats=feat[chunk], ids=chunk.clone()))
"""


def test_vl103_reads_what_a_helper_writes_at_each_call():
    # graphlearn-for-pytorch PR #44: each `torch.chunk` piece put in a NamedTuple whose `.ids` a helper of a helper
    # pickles. The innermost `pickle.dump` sees a gathered copy from one call and a view from another (joined: not
    # a view); the call that passes the view is where it is known. The `.clone()` call writes only its elements.
    assert _lint(HELPER_WRITES) == [(24, "VL103")]


def test_vl103_helper_claim_on_real_torch():
    pickle = pytest.importorskip("pickle")
    torch = pytest.importorskip("torch")
    n_ids = torch.arange(4096)
    chunk = torch.chunk(n_ids, 4)[1]
    whole = n_ids.numel() * n_ids.element_size()
    assert len(pickle.dumps(chunk)) > whole  # the quarter pickles as all of `n_ids`
    assert len(pickle.dumps(chunk.clone())) < whole // 2


# ---------------------------------------------------------------- VL401: a tensor given where a kernel takes a host int
VARLEN_MAX = """
    import torch
    from torch import nn


    def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0):
        return q


    class Attention(nn.Module):
        def forward(self, x: torch.Tensor, x_lens: torch.Tensor, max_len: int = 0):
            cu = torch.nn.functional.pad(torch.cumsum(x_lens, 0, dtype=torch.int32), (1, 0))
            a = flash_attn_varlen_func(x, x, x, cu, cu, x_lens.max(), x_lens.max())
            b = flash_attn_varlen_func(x, x, x, cu, cu, max_seqlen_q=max_len, max_seqlen_k=x_lens.max())
            c = flash_attn_varlen_func(x, x, x, cu, cu, max_len, max_len)
            return a + b + c
"""


def test_vl401_reads_tensors_given_as_a_kernels_host_lengths():
    # WeatherGenerator issue #1531: `x_lens.max()` as flash-attn's `max_seqlen_*`, read with `int()` per layer per call.
    assert [f for f in _lint(VARLEN_MAX) if f[1] == "VL401"] == [(12, "VL401"), (12, "VL401"), (13, "VL401")]


# ---------------------------------------------------------------- a type test narrows `d["k"]` in the expression around it
KEYED_TYPE_TEST = """
    import torch
    from torch import nn


    class CausalSelfAttention(nn.Module):
        def forward(self, q, kv_cache: dict):
            end = int(kv_cache["end"].item()) if isinstance(kv_cache["end"], torch.Tensor) else int(kv_cache["end"])
            start = int(kv_cache["start"]) if isinstance(kv_cache["end"], torch.Tensor) else 0
            return q[:, start:end]
"""


def test_a_type_test_narrows_a_keyed_read_in_its_expression():
    # FastVideo PR #1660: KV-cache counters kept as device tensors in a dict, read with `.item()` in every layer
    # behind `isinstance(kv_cache[...], torch.Tensor)`. The test narrows only the key it names.
    assert [f for f in _lint(KEYED_TYPE_TEST) if f[1].startswith("VL4")] == [(7, "VL401")]


# ---------------------------------------------------------------- what a submodule of this module does with its arguments
ROPE_LISTS = """
    import torch
    from torch import nn


    class EmbedRope(nn.Module):
        def forward(self, video_fhw, txt_seq_lens, device):
            frame, height, width = video_fhw[0]
            max_len = max(txt_seq_lens)
            pos = torch.arange(max(height, width) + max_len, device=device)
            return pos[: frame * height * width]


    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos_embed = EmbedRope()

        def forward(self, hidden_states, img_shapes, txt_seq_lens=None):
            return hidden_states, self.pos_embed(img_shapes, txt_seq_lens, device=hidden_states.device)


    class Pipeline:
        def __init__(self, transformer):
            self.transformer = transformer

        def __call__(self, latents, mask, img_shapes, timesteps, scheduler):
            for t in timesteps:
                noise_pred = self.transformer(latents, img_shapes, txt_seq_lens=mask.sum(dim=1).tolist())[0]
                latents = scheduler.step(noise_pred, t, latents)[0]
            return latents
"""


def test_arguments_a_submodule_uses_as_host_values_are_not_tensors():
    # diffusers PR #12072: `img_shapes` and `txt_seq_lens` are lists the rope module reads with `max()` and slices: passing
    # them to a submodule of this module says nothing more. The `.tolist()` in the denoising loop is the sync; `mask` is
    # a tensor by `.sum(dim=1)` (NumPy says `axis=`).
    assert [f for f in _lint(ROPE_LISTS) if f[1].startswith("VL4")] == [(28, "VL401")]


# ---------------------------------------------------------------- a module function held in an attribute, called through it
HELD_FUNCTION = """
    import torch


    def _orthogonalize(p: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        w, g = p.view(-1), grad.view(-1)
        proj = torch.dot(w, g) / torch.dot(w, w).add_(1e-30)
        return g.sub(w, alpha=proj).view_as(grad)


    def _orthogonalize_fixed(p: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        w, g = p.view(-1), grad.view(-1)
        proj = torch.dot(w, g) / torch.dot(w, w).add_(1e-30)
        return g.sub(w * proj).view_as(grad)


    class OrthoSGD(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-3, fixed=False):
            super().__init__(params, dict(lr=lr))
            self._ortho = _orthogonalize_fixed if fixed else _orthogonalize

        @torch.no_grad()
        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    p.add_(self._ortho(p, p.grad), alpha=-group["lr"])
"""


def test_a_function_held_in_an_attribute_is_called_where_the_attribute_is():
    # Advanced_Optimizers PR #5: `self._ortho(p, grad)` runs the helper every step, for every parameter; its
    # `alpha=proj` (a 0-dim tensor) is read with `.item()`. `alpha=-group["lr"]` is a Python number.
    assert [f for f in _lint(HELD_FUNCTION) if f[1].startswith("VL4")] == [(7, "VL401")]


def test_tensor_alpha_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    w, g = torch.randn(8), torch.randn(8)
    proj = torch.dot(w, g) / torch.dot(w, w)
    # `alpha` is a Python number slot: a 0-dim tensor given there is converted to one (read on the host), which is why
    # one that autograd tracks is refused outright.
    assert torch.allclose(g.sub(w, alpha=proj), g - w * proj.item())
    with pytest.raises(TypeError, match="must be Number"):
        g.sub(w, alpha=proj.clone().requires_grad_())


# ---------------------------------------------------------------- a module function chosen into a local, then called
CHOSEN_FUNCTION = """
    import torch
    from torch import nn


    def _grouped(bias: torch.Tensor, counts: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        offsets = torch.cumsum(counts, dim=0)
        b = bias.repeat_interleave(counts, dim=0)
        slack = x.shape[0] - int(offsets[-1])
        return x[: b.shape[0]] + b, slack


    def _grouped_fixed(bias: torch.Tensor, counts: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return x + bias.repeat_interleave(counts, dim=0, output_size=x.shape[0]), 0


    class Experts(nn.Module):
        def __init__(self, fixed: bool = False):
            super().__init__()
            self.bias = nn.Parameter(torch.zeros(4, 8))
            self.fixed = fixed

        def forward(self, x: torch.Tensor, counts: torch.Tensor):
            run = _grouped_fixed if self.fixed else _grouped
            return run(self.bias, counts, x)
"""


def test_a_module_function_chosen_into_a_local_runs_where_the_local_is_called():
    # torchtitan PR #2440: `run_experts_fn = _grouped_mm if use_grouped_mm else ...; run_experts_fn(...)` in the MoE
    # `forward`: the function's `repeat_interleave` without `output_size` and `int(offsets[-1])` sync every call.
    assert [f for f in _lint(CHOSEN_FUNCTION) if f[1].startswith("VL4")] == [(7, "VL404"), (8, "VL401")]


# ---------------------------------------------------------------- what runs once per step by the class's kind
PER_STEP = """
    import torch
    from torch import nn


    def _format(preds: torch.Tensor) -> torch.Tensor:
        if not torch.all((preds >= 0) * (preds <= 1)):
            preds = preds.sigmoid()
        return preds


    def _normalize(preds: torch.Tensor) -> torch.Tensor:
        if preds.device == torch.device("cpu"):
            if not torch.all((preds >= 0) * (preds <= 1)):
                preds = preds.sigmoid()
            return preds
        return torch.where(((preds < 0) | (preds > 1)).any(), preds.sigmoid(), preds)


    class StatScores(nn.Module):
        def update(self, preds: torch.Tensor) -> None:
            self.seen = _format(preds).sum() + _normalize(preds).sum()

        def compute(self) -> torch.Tensor:
            return self.seen


    class EulerScheduler:
        def step(self, model_output: torch.Tensor, timestep: torch.Tensor, sample: torch.Tensor):
            if timestep.item() == 0:
                return sample
            return sample + model_output


    class WarmupLRScheduler:
        def step(self, metric: torch.Tensor):
            self.best = float(metric)
"""


def test_metric_update_and_sampler_step_run_once_per_step():
    # torchmetrics PR #2840: the format helper every `update` calls tests its logits on the host. A module with `update`
    # and `compute` is a metric; a diffusion scheduler's `step` runs once per denoising step (a learning-rate scheduler's
    # does host arithmetic once per epoch). The CPU-only branch of the fixed helper waits for nothing.
    assert [f for f in _lint(PER_STEP) if f[1].startswith("VL4")] == [(6, "VL403"), (29, "VL401")]


# ---------------------------------------------------------------- VL404: a tensor written through a boolean mask
MASK_WRITE = """
    import torch
    from torch import nn


    class Embedder(nn.Module):
        def __init__(self, dim: int):
            super().__init__()
            self.pad_token = nn.Parameter(torch.randn(dim))
            self.scale = nn.Parameter(torch.ones(()))

        def _prepare(self, feats: list[torch.Tensor], inner_pad_mask: list[torch.Tensor]) -> torch.Tensor:
            x = torch.cat(feats, dim=0)
            x[torch.cat(inner_pad_mask)] = self.pad_token
            return x

        def forward(self, feats: list[torch.Tensor], inner_pad_mask: list[torch.Tensor], keep: torch.Tensor):
            prepare = self._prepare if keep.dim() else self._prepare
            x = prepare(feats, inner_pad_mask)
            x[keep.bool()] = 0.0
            x[keep.bool()] = self.scale
            return x
"""


def test_vl404_a_vector_written_through_a_mask_needs_its_count():
    # diffusers PR #13461: `feats_cat[torch.cat(inner_pad_mask)] = pad_token` in `_prepare_sequence`, which `forward`
    # reaches through a local it chose (`prepare = self._a if … else self._b`): `index_put_` with a boolean mask turns it
    # into indices (`nonzero`). A scalar or a 0-dim parameter is written with `masked_fill_`, which needs no count.
    assert [f for f in _lint(MASK_WRITE) if f[1].startswith("VL4")] == [(13, "VL404")]


def test_vl404_mask_write_claim_on_real_torch():
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, list[str]]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func).startswith("aten.index_put"):
                self.calls.append((str(func), [str(i.dtype) for i in args[1] if i is not None]))
            return func(*args, **(kwargs or {}))

    x, mask, pad = torch.zeros(6, 4), torch.tensor([True, False, True, False, False, True]), torch.ones(4)
    with Ops() as ops:
        x[mask] = pad
    # The write is an `index_put_` given the boolean mask itself: to place a vector per selected row, the kernel turns
    # the mask into row indices (`nonzero`), whose count the host must read on CUDA.
    assert ops.calls == [("aten.index_put_.default", ["torch.bool"])]
    assert x[mask].eq(1).all() and x[~mask].eq(0).all()


# ---------------------------------------------------------------- VL205: out of place after an in-place twin, dropped
CHAINED_DROP = """
    import torch


    def adam_moments(state: dict, grad, beta1: float, beta2: float):
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.mul_(beta1).add(1 - beta1, grad)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        seen = set()
        seen.add(1)
"""


def test_vl205_an_out_of_place_call_on_an_in_place_twins_result_is_lost():
    # DeepSpeed PR #1278 (1-bit Adam): `exp_avg.mul_(beta1).add(1 - beta1, grad)`; the decay landed, the update did not.
    # What `mul_` returns is the tensor it wrote into; a set's `add` is no tensor's.
    assert _lint(CHAINED_DROP) == [(6, "VL205")]


# ---------------------------------------------------------------- an int a submodule reads through a name it binds
SLICE_BOUND = """
    import torch
    from torch import nn


    class ICLAttention(nn.Module):
        def __init__(self, emsize: int):
            super().__init__()
            self.k_projection = nn.Linear(emsize, emsize)

        def forward(self, x_BRE, single_eval_pos=None):
            B, R, _ = x_BRE.shape
            N = R if single_eval_pos is None else single_eval_pos
            k = self.k_projection(x_BRE[:, :N]).view(B, N, -1)
            if single_eval_pos is not None and N < R:
                return k
            return k * 2


    class Block(nn.Module):
        def __init__(self, emsize: int):
            super().__init__()
            self.icl_attention = ICLAttention(emsize)

        def forward(self, x_BRE, single_eval_pos):
            return self.icl_attention(x_BRE, single_eval_pos=single_eval_pos)
"""


def test_a_position_a_submodule_reads_as_a_bound_and_a_size_is_no_tensor():
    # Round six's TabPFN probe: `N = R if single_eval_pos is None else single_eval_pos`, then `x[:, :N]`,
    # `.view(B, N, …)` and `N < R`. Passing `single_eval_pos` on to that submodule says nothing of a tensor.
    assert [f for f in _lint(SLICE_BOUND) if f[1].startswith("VL4")] == []
