# source: NVIDIA/TransformerEngine https://github.com/NVIDIA/TransformerEngine/pull/3268 — get_padding_mask built the padding mask in a Python loop over the batch using `[False] * seqlens_q[i]`, which turns each element of the device cu_seqlens into a Python int (one host sync per sequence, per forward); the fix builds it as `positions >= seqlens` on the device.
import torch


def get_padding_mask(
    batch_size,
    cu_seqlens_q,
    cu_seqlens_kv,
    max_seqlen_q,
    max_seqlen_kv,
    attention_type="self",
):
    """Convert cu_seqlens to attention_mask"""
    assert attention_type in ["self", "cross"], "attention_type must be self or cross"
    seqlens_q = cu_seqlens_q[1:] - cu_seqlens_q[:-1]
    seqlens_kv = cu_seqlens_kv[1:] - cu_seqlens_kv[:-1]
    attention_mask_q = torch.Tensor([]).to(dtype=torch.bool)
    attention_mask_kv = torch.Tensor([]).to(dtype=torch.bool)
    for i in range(batch_size):
        attention_mask_q = torch.cat(
            [
                attention_mask_q,
                torch.Tensor([False] * seqlens_q[i] + [True] * (max_seqlen_q - seqlens_q[i]))  # want: D
                .to(dtype=torch.bool)
                .unsqueeze(0)
                .unsqueeze(0)
                .unsqueeze(0),
            ],
            dim=0,
        )
        attention_mask_kv = torch.cat(
            [
                attention_mask_kv,
                torch.Tensor([False] * seqlens_kv[i] + [True] * (max_seqlen_kv - seqlens_kv[i]))  # want: D
                .to(dtype=torch.bool)
                .unsqueeze(0)
                .unsqueeze(0)
                .unsqueeze(0),
            ],
            dim=0,
        )
    attention_mask_q = attention_mask_q.to(device=cu_seqlens_q.device)
    attention_mask_kv = attention_mask_kv.to(device=cu_seqlens_kv.device)
    if attention_type == "self":
        attention_mask = attention_mask_q
    else:
        attention_mask = (attention_mask_q, attention_mask_kv)
    return attention_mask


def get_padding_mask_fixed(
    batch_size,
    cu_seqlens_q,
    cu_seqlens_kv,
    max_seqlen_q,
    max_seqlen_kv,
    attention_type="self",
):
    """Convert cu_seqlens to attention_mask without reading lengths back to the host"""
    assert attention_type in ["self", "cross"], "attention_type must be self or cross"
    seqlens_q = (cu_seqlens_q[1:] - cu_seqlens_q[:-1]).unsqueeze(1)
    seqlens_kv = (cu_seqlens_kv[1:] - cu_seqlens_kv[:-1]).unsqueeze(1)
    positions_q = torch.arange(max_seqlen_q, device=cu_seqlens_q.device).unsqueeze(0)
    positions_kv = torch.arange(max_seqlen_kv, device=cu_seqlens_kv.device).unsqueeze(0)
    attention_mask_q = (positions_q >= seqlens_q).view(batch_size, 1, 1, max_seqlen_q)
    attention_mask_kv = (positions_kv >= seqlens_kv).view(batch_size, 1, 1, max_seqlen_kv)
    if attention_type == "self":
        return attention_mask_q
    return (attention_mask_q, attention_mask_kv)


class UnfusedDotProductAttention(torch.nn.Module):
    def __init__(self, softmax_scale, mask_fn=get_padding_mask):
        super().__init__()
        self.softmax_scale = softmax_scale
        self.mask_fn = mask_fn

    def forward(self, q, k, v, attn_mask_type="padding", attention_mask=None,
                cu_seqlens_q=None, cu_seqlens_kv=None, max_seqlen_q=None, max_seqlen_kv=None):
        b = q.shape[0]
        if "padding" in attn_mask_type and attention_mask is None:
            attention_mask = self.mask_fn(b, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q, max_seqlen_kv)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.softmax_scale
        scores = scores.masked_fill(attention_mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        return torch.einsum("bhqk,bhkd->bhqd", probs, v)


if __name__ == "__main__":
    torch.manual_seed(0)
    b, h, s, d = 4, 2, 16, 8
    lens = torch.tensor([16, 9, 3, 12], dtype=torch.int32)
    cu = torch.nn.functional.pad(lens.cumsum(0, dtype=torch.int32), (1, 0))
    q, k, v = (torch.randn(b, h, s, d) for _ in range(3))
    ref = get_padding_mask(b, cu, cu, s, s)
    new = get_padding_mask_fixed(b, cu, cu, s, s)
    assert torch.equal(ref, new), "masks differ"
    out_bug = UnfusedDotProductAttention(d ** -0.5)(q, k, v, cu_seqlens_q=cu, cu_seqlens_kv=cu,
                                                    max_seqlen_q=s, max_seqlen_kv=s)
    out_fix = UnfusedDotProductAttention(d ** -0.5, get_padding_mask_fixed)(
        q, k, v, cu_seqlens_q=cu, cu_seqlens_kv=cu, max_seqlen_q=s, max_seqlen_kv=s)
    print("mask shape", tuple(ref.shape), "outputs match:", torch.allclose(out_bug, out_fix))
