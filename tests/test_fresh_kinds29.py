"""Kinds of code met in pass twenty-nine, on a fourth blind set of reconstructed public bugs and a fourteenth audit of
libraries never read before: a repeat along size-1 dimensions that a broadcasting read makes needless (VL311), a
private buffer rebound to a reshape of itself, an ownership fix made before the container that holds it is saved,
views of what a submodule's forward made, an integer cast that always copies, and the code a `try` reaches only
after a handler caught an error. Each lint kind is checked with the prefilter on and off; what a finding claims,
with real torch."""

from __future__ import annotations

import io

import pytest

from conftest import lint_snippet as _lint, run_snippet as _run

# ---------------------------------------------------------------- VL311: a repeat that broadcasting makes needless
REPEATS = """
    import torch
    import torch.nn.functional as F


    def erase(images, mask, fill):
        c = images.shape[1]
        mask = mask.unsqueeze(1).repeat(1, c, 1, 1).to(images)
        return torch.where(mask == 1.0, fill, images)


    def attend(q, k, v, attn_mask, heads):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask[:, None].repeat(1, heads, 1, 1))


    def biased(x_hat, n):
        bias = torch.mean(x_hat, dim=1).unsqueeze(1).repeat(1, n, 1)
        return x_hat - bias


    def tiled(x, n):
        return x.repeat(1, n) + 1


    def returned(mask, c):
        mask = mask.unsqueeze(1).repeat(1, c, 1, 1)
        return mask


    def in_a_branch(emb, b, other):
        if emb.ndim == 2:
            emb = emb.unsqueeze(0).repeat(b, 1, 1)
        elif emb is None:
            emb = other
        return emb


    def viewed(x, n):
        y = x.unsqueeze(1).repeat(1, n, 1)
        return y.view(-1, x.shape[-1]) * 2
"""


def test_a_repeat_read_only_by_broadcasting_operations_is_flagged():
    found = _lint(REPEATS)
    assert (7, "VL311") in found  # `torch.where` and `==` read it
    assert (12, "VL311") in found  # an attention mask
    assert (16, "VL311") in found  # arithmetic
    assert [row for row, code in found if code == "VL311"] == [7, 12, 16]
    # Not: a dimension not known to be 1, a returned value, a binding a branch may replace, a `view` of the copy.


def test_expand_gives_what_the_repeat_gave_without_the_copy():
    scope = _run(REPEATS)
    torch = scope["torch"]
    images, mask, fill = torch.rand(2, 3, 4, 4), (torch.rand(2, 4, 4) > 0.5).float(), torch.zeros(2, 3, 4, 4)
    viewed = mask.unsqueeze(1).expand(-1, 3, -1, -1)
    assert viewed.untyped_storage().data_ptr() == mask.untyped_storage().data_ptr()  # a view: no copy
    assert torch.equal(scope["erase"](images, mask, fill), torch.where(viewed == 1.0, fill, images))
    repeated = mask.unsqueeze(1).repeat(1, 3, 1, 1)
    assert repeated.untyped_storage().nbytes() == 3 * mask.untyped_storage().nbytes()  # the copy the finding names
    x = torch.rand(2, 5, 4)
    assert torch.allclose(scope["biased"](x, 5), x - x.mean(1, keepdim=True).expand(-1, 5, -1))


# ---------------------------------------------------------------- VL304: a private buffer reshaped under its own name
RESHAPED = """
    import torch


    def zero_pad(x, lora_ind, out_features):
        result = x.new_zeros((*x.shape[:-1], out_features))
        result = result.view(-1, out_features)
        result = result.index_copy(1, lora_ind, x.reshape(-1, x.shape[-1]))
        return result.view((*x.shape[:-1], out_features))


    def kept(x, lora_ind, out_features):
        base = x.new_zeros((x.shape[0], out_features))
        result = base.view(-1, out_features)
        result = result.index_copy(1, lora_ind, x)
        return result, base
"""


def test_a_buffer_rebound_to_a_reshape_of_itself_stays_private():
    found = _lint(RESHAPED)
    assert (7, "VL304") in found
    assert not [f for f in found if f[0] == 14]  # `base` still holds the buffer: in place would change it


def test_the_in_place_update_gives_the_same_result():
    scope = _run(RESHAPED)
    torch = scope["torch"]
    x, ind = torch.rand(2, 3, 2), torch.tensor([0, 2])
    expected = scope["zero_pad"](x, ind, 4)
    buffer = x.new_zeros((2, 3, 4)).view(-1, 4)
    pointer = buffer.data_ptr()
    buffer.index_copy_(1, ind, x.reshape(-1, 2))
    assert buffer.data_ptr() == pointer and torch.equal(buffer.view(2, 3, 4), expected)


# ---------------------------------------------------------------- VL102: the fix made before the dict is saved
SAVED_LATER = """
    import torch


    def dump(representations: "dict[int, torch.Tensor]", labels, lengths, path):
        for i, label in enumerate(labels):
            result = {"label": label}
            result["per_tok"] = {layer: t[i, 1 : lengths[i] + 1].contiguous() for layer, t in representations.items()}
            result["bos"] = {layer: t[i, 0].contiguous() for layer, t in representations.items()}
            torch.save(result, path)
"""


def test_an_ineffective_fix_is_reported_where_it_is_made():
    found = _lint(SAVED_LATER)
    assert (7, "VL102") in found and (8, "VL102") in found  # the lines to change, not the `torch.save`
    assert not [f for f in found if f[0] == 9]


def test_contiguous_of_a_row_slice_saves_the_whole_batch():
    scope = _run(SAVED_LATER)
    torch = scope["torch"]
    batch = torch.rand(4, 10, 8)
    buffer = io.BytesIO()
    scope["dump"]({0: batch}, ["a"], [3], buffer)
    buffer.seek(0)
    saved = torch.load(buffer)
    row = saved["per_tok"][0]
    assert row.numel() * row.element_size() == 3 * 8 * 4
    assert row.untyped_storage().nbytes() == batch.untyped_storage().nbytes()  # the whole batch went to the file


# ---------------------------------------------------------------- views of what a submodule's forward made
ENCODED = """
    import torch
    from torch import nn


    class Handler:
        def __init__(self, manager):
            self.embedding_cache_manager = manager
            self.vision_encoder = nn.Linear(4, 4)

        def encode(self, x, sizes, keys):
            pieces = self.vision_encoder(x).split(sizes)
            for i, key in enumerate(keys):
                self.embedding_cache_manager.set(key, pieces[i])

        def encode_kept(self, x, keys):
            for i, key in enumerate(keys):
                self.embedding_cache_manager.set(key, self.table[i])


    class Cache:
        def __init__(self):
            self.entries = {}

        def set(self, key, value):
            self.entries[key] = value
"""


def test_a_piece_of_a_submodule_output_stored_in_a_cache_is_flagged():
    found = _lint(ENCODED)
    assert (13, "VL101") in found  # what `self.vision_encoder(x)` made for this call, not a tensor `self` holds
    assert not [f for f in found if f[0] == 17]  # `self.table` lives as long as the object anyway


def test_the_cached_piece_keeps_the_whole_encoder_output():
    scope = _run(ENCODED)
    cache = scope["Cache"]()
    handler = scope["Handler"](cache)
    handler.encode(scope["torch"].rand(10, 4), [2, 8], ["a", "b"])
    piece = cache.entries["a"]
    assert piece.untyped_storage().nbytes() == 10 * 4 * 4 > piece.numel() * piece.element_size()


# ---------------------------------------------------------------- VL102: a cast to another integer type copies
CAST = """
    import torch


    class Validator:
        def __init__(self):
            self.pred = []

        def update(self, preds):
            self.pred.append(preds.argsort(1, descending=True)[:, :5].type(torch.int32))
"""


def test_a_cast_to_a_named_dtype_is_no_ineffective_fix():
    assert not [f for f in _lint(CAST) if f[1] in ("VL101", "VL102")]


def test_the_cast_owns_its_storage():
    scope = _run(CAST)
    validator = scope["Validator"]()
    validator.update(scope["torch"].rand(4, 9))
    kept = validator.pred[0]
    assert kept.untyped_storage().nbytes() == kept.numel() * kept.element_size() == 4 * 5 * 4


# ---------------------------------------------------------------- what only a caught error reaches is cold
RECOVERY = """
    import torch
    from torch import nn


    class Assigner(nn.Module):
        def forward(self, mask_gt: torch.Tensor, scores: torch.Tensor):
            try:
                return self._forward(mask_gt, scores)
            except RuntimeError as e:
                if "out of memory" not in str(e).lower():
                    raise
            return mask_gt.squeeze(-1).amax(1).tolist()

        def forward_once(self, mask_gt: torch.Tensor, scores: torch.Tensor):
            try:
                out = self._forward(mask_gt, scores)
            except RuntimeError:
                out = None
            return mask_gt.sum().item(), out

        def _forward(self, mask_gt, scores):
            return scores * mask_gt
"""


def test_code_after_a_try_that_returns_runs_only_after_an_error():
    found = _lint(RECOVERY)
    assert not [f for f in found if f[0] == 12]  # the out-of-memory retry
    assert (19, "VL401") in found  # a `try` that falls through: every call gets here


@pytest.mark.parametrize("fails", [False, True])
def test_the_code_after_the_try_runs_only_when_the_body_raised(fails):
    scope = _run(RECOVERY)
    torch = scope["torch"]
    assigner = scope["Assigner"]()
    if fails:
        def broken(mask_gt, scores):
            raise RuntimeError("CUDA out of memory")
        assigner._forward = broken
    out = assigner(torch.ones(2, 3, 1), torch.rand(2, 3, 1))
    assert isinstance(out, list) == fails


# ---------------------------------------------------------------- VL312: a whole tensor converted to keep a slice
CONVERTED = """
    import torch
    from torch import nn


    class Rope(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos_freqs = torch.cat([torch.ones(64, 2), torch.zeros(64, 2)], dim=1)

        def forward(self, start, n, device):
            rows = self.pos_freqs.to(device)[start : start + n, ...]
            kept = self.pos_freqs.float()[..., None]
            first = self.pos_freqs[start : start + n].to(device)
            return rows, kept, first


    def setup(table, n):
        return table.half()[:n]
"""


def test_a_conversion_sliced_afterwards_in_a_hot_path_is_flagged():
    found = _lint(CONVERTED)
    assert (11, "VL312") in found  # `self.pos_freqs`: a join `__init__` made, a tensor
    assert [row for row, code in found if code == "VL312"] == [11]  # not a new axis, a slice taken first, cold code


def test_the_converted_slice_keeps_all_of_the_conversion():
    scope = _run(CONVERTED)
    torch = scope["torch"]
    rope = scope["Rope"]()
    half = rope.pos_freqs.to(torch.float16)[3:5]
    assert half.untyped_storage().nbytes() == 64 * 4 * 2  # all 64 rows converted for two
    assert rope.pos_freqs[3:5].to(torch.float16).untyped_storage().nbytes() == 2 * 4 * 2
    rows, _, first = rope(3, 2, torch.device("cpu"))
    assert torch.equal(rows, first)


# ---------------------------------------------------------------- VL309: a helper grows what a looping caller hands it
HELPER_GROWS = """
    import torch


    def cat(data3d, data2d):
        for k in data2d:
            data3d[k] = torch.cat([data3d[k], data2d[k][:, None]], dim=1)
        return data3d


    def extend(history, piece):
        history = torch.cat([history, piece[:, None]], dim=1)
        return history


    def rollout(x, n):
        data = {"x": x[:, None]}
        for _ in range(n):
            data = cat(data, {"x": x})
        return data


    def windows(x, n):
        out = []
        for _ in range(n):
            fresh = x[:, None]
            out.append(extend(fresh, x))
        return out
"""


def test_a_helper_growing_what_a_looping_caller_hands_it_is_flagged():
    found = _lint(HELPER_GROWS)
    assert (6, "VL309") in found  # `rollout` hands it the same `data` on every iteration
    assert not [f for f in found if f[0] == 11]  # `windows` hands `extend` a new tensor each time


def test_the_history_is_copied_on_every_call():
    scope = _run(HELPER_GROWS)
    torch = scope["torch"]
    pointers = []
    real_cat = torch.cat

    def counting_cat(tensors, dim=0):
        pointers.append(sum(t.numel() for t in tensors))
        return real_cat(tensors, dim=dim)

    scope["torch"] = type("T", (), {"cat": staticmethod(counting_cat)})
    data = scope["rollout"](torch.ones(2, 3), 4)
    assert data["x"].shape == (2, 5, 3)
    assert pointers == [12, 18, 24, 30]  # each step copies all the earlier steps again


# ---------------------------------------------------------------- what an autograd `Function`'s `forward` is handed
AUTOGRAD = """
    import torch


    def chunked_loss_forward(_input, weight, target, ignore_index=-100):
        target_mask = target != ignore_index
        total = target_mask.sum().item()
        logits = _input @ weight.t()
        return torch.nn.functional.cross_entropy(logits, target, ignore_index=ignore_index, reduction="sum") / total


    class ChunkedLoss(torch.autograd.Function):
        @staticmethod
        def forward(ctx, _input, weight, target, ignore_index=-100):
            return chunked_loss_forward(_input=_input, weight=weight, target=target, ignore_index=ignore_index)

        @staticmethod
        def backward(ctx, grad_output):
            return None, None, None, None


    def not_a_function(values, ignore_index=-100):
        mask = values != ignore_index
        return mask.sum().item()
"""


def test_what_apply_hands_an_autograd_function_is_a_tensor():
    found = _lint(AUTOGRAD)
    assert (6, "VL401") in found  # `target`: handed by `ChunkedLoss.forward`, which runs on every step
    assert not [f for f in found if f[0] == 23]  # no evidence `values` is a tensor, nor that the function is hot


def test_item_in_the_forward_of_a_function_reads_the_device():
    scope = _run(AUTOGRAD)
    torch = scope["torch"]
    reads = []
    real_item = torch.Tensor.item

    def counting_item(self):
        reads.append(self.device.type)
        return real_item(self)

    torch.Tensor.item = counting_item
    try:
        loss = scope["ChunkedLoss"].apply(torch.rand(4, 3), torch.rand(5, 3), torch.tensor([0, 1, -100, 2]))
    finally:
        torch.Tensor.item = real_item
    assert reads == ["cpu"] and loss.dim() == 0  # one host read per call, of the tensor `apply` was handed


# ---------------------------------------------------------------- VL313: a clone nothing writes
CLONES = """
    import torch
    from torch import nn


    def _decode(out, q, cache):
        out.copy_(torch.softmax(q @ cache.t(), -1) @ cache)


    class Decode(nn.Module):
        def _padded(self, q, cache):
            padded = q.new_zeros((q.shape[0], 8, q.shape[-1]))
            padded[:, : q.shape[1]] = q
            out = torch.empty_like(padded)
            _decode(out, padded, cache)
            return out[:, : q.shape[1]]

        def forward(self, q: torch.Tensor, cache):
            q = q.clone()
            return self._padded(q.clone(), cache)

        def forward_written(self, q: torch.Tensor, cache):
            q = q.clone()
            q.mul_(2)
            return self._padded(q, cache)

        def forward_cached(self, q: torch.Tensor, states):
            ctx = states.get_state(0)
            previous = ctx.clone()
            states.update_state(0, q)
            return previous * 2
"""


def test_a_clone_nothing_writes_is_flagged():
    found = _lint(CLONES)
    assert (18, "VL313") in found  # the rest of `forward` only reads `q`
    assert (19, "VL313") in found  # `_padded` only reads its `q`, and `_decode` only reads its second argument
    assert not [f for f in found if f[0] == 22]  # the copy is written
    assert not [f for f in found if f[0] == 28]  # read out of an object whose next call may write it (a cache)


def test_without_the_clones_the_inputs_and_the_result_are_the_same():
    scope = _run(CLONES)
    torch = scope["torch"]
    q, cache = torch.randn(2, 4, 6), torch.randn(5, 6)
    before = q.clone()
    decode = scope["Decode"]()
    out = decode(q, cache)
    assert torch.equal(q, before)  # nothing wrote the original: the copy protected nothing
    assert torch.equal(out, decode._padded(q, cache))


# ---------------------------------------------------------------- look-alikes met on transformers
LOOK_ALIKES = """
    import torch


    class DropoutContext:
        def __init__(self):
            self.dropout = 0.1


    def get_mask(input, local_context):
        if not isinstance(local_context, DropoutContext):
            dropout = local_context
        else:
            dropout = local_context.dropout
        if dropout > 0:
            return (1 - torch.empty_like(input).bernoulli_(1 - dropout)).to(torch.bool), dropout
        return None, dropout


    class XDropout(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, local_ctx):
            mask, dropout = get_mask(input, local_ctx)
            if dropout > 0:
                return input.masked_fill(mask, 0) / (1 - dropout)
            return input


    def stride_pool(tensor, axis):
        if isinstance(axis, (list, tuple)):
            for ax in axis:
                tensor = stride_pool(tensor, ax)
            return tensor
        tensor = torch.cat([tensor[:1], tensor], dim=axis)
        return tensor[::2]
"""


def test_an_object_handed_to_an_autograd_function_is_no_tensor():
    found = _lint(LOOK_ALIKES)
    assert not [f for f in found if f[1] == "VL403"]  # `dropout` is a float a `DropoutContext` holds
    assert not [f for f in found if f[1] == "VL309"]  # each call hands back half of what it joined: nothing grows


def test_the_look_alikes_behave_as_read():
    scope = _run(LOOK_ALIKES)
    torch = scope["torch"]
    out = scope["XDropout"].apply(torch.ones(4, 4), 0.0)
    assert torch.equal(out, torch.ones(4, 4))
    pooled = scope["stride_pool"](torch.arange(8.0), [0, 0])
    assert pooled.shape == (3,)  # 8 -> 9 -> 5 -> 6 -> 3: shrinks, never grows

