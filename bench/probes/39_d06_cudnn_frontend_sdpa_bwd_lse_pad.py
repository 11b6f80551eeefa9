# source: NVIDIA/cudnn-frontend https://github.com/NVIDIA/cudnn-frontend/pull/554 — The torch SDPA wrapper's varlen backward re-padded the packed (H, T) softmax stats into the (B, H, S_q, 1) layout cuDNN expects with a host loop that read int(cu_seq_q[b]) and int(cu_seq_q[b + 1]) per batch, i.e. 2*B device-to-host syncs in every backward call. The reviewers noted a .tolist() would still block once, and the fix builds the padding index on device (lengths from cu_seq_q, repeat_interleave with output_size, index_copy_) so no scalar is read on the host.
import torch


def _segment_ids(cu_seq, T):
    return torch.searchsorted(cu_seq[1:], torch.arange(T, device=cu_seq.device), right=True)


def _lse_thd_to_bhs1(lse, cu_seq_q, B, S_q):
    H = lse.shape[0]
    lse_padded = torch.zeros(B, H, S_q, 1, dtype=torch.float32, device=lse.device)
    for b in range(B):
        s, e = int(cu_seq_q[b]), int(cu_seq_q[b + 1])  # want: D
        lse_padded[b, :, : e - s, 0] = lse[:, s:e]
    return lse_padded


def _lse_thd_to_bhs1_fixed(lse, cu_seq_q, B, S_q):
    H, T = lse.shape
    lengths = cu_seq_q[1:] - cu_seq_q[:-1]
    token_batch = torch.repeat_interleave(
        torch.arange(B, device=lse.device), lengths, output_size=T
    )
    pos = torch.arange(T, device=lse.device) - cu_seq_q[token_batch]
    flat_idx = token_batch.long() * S_q + pos.long()
    lse_padded = torch.zeros(B * S_q, H, dtype=torch.float32, device=lse.device)
    lse_padded.index_copy_(0, flat_idx, lse.transpose(0, 1).float())
    return lse_padded.view(B, S_q, H, 1).permute(0, 2, 1, 3).contiguous()


def _attn_thd(q, k, v, cu_seq_q, scale):
    T = q.shape[0]
    seg = _segment_ids(cu_seq_q, T)
    s = torch.einsum("thd,shd->hts", q, k) * scale
    s = s.masked_fill(seg[:, None] != seg[None, :], float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.einsum("hts,shd->thd", torch.exp(s - lse[..., None]), v)
    return o, lse


def _cudnn_sdpa_bwd(q, k, v, d_o, stats, cu_seq_q, scale):
    B, H, S_q, _ = stats.shape
    assert H == q.shape[1]
    with torch.enable_grad():
        q_, k_, v_ = (t.detach().requires_grad_() for t in (q, k, v))
        o, _ = _attn_thd(q_, k_, v_, cu_seq_q, scale)
        return torch.autograd.grad(o, (q_, k_, v_), d_o)


class _SdpaTHD(torch.autograd.Function):
    pad_stats = staticmethod(_lse_thd_to_bhs1)

    @staticmethod
    def forward(ctx, q, k, v, cu_seq_q, max_seqlen_q, scale):
        o, lse = _attn_thd(q, k, v, cu_seq_q, scale)
        ctx.save_for_backward(q, k, v, o, lse, cu_seq_q)
        ctx.max_seqlen_q, ctx.scale = max_seqlen_q, scale
        return o

    @classmethod
    def backward(cls, ctx, d_o):
        q, k, v, o, lse, cu_seq_q = ctx.saved_tensors
        B = cu_seq_q.shape[0] - 1
        stats = cls.pad_stats(lse, cu_seq_q, B, ctx.max_seqlen_q)
        dq, dk, dv = _cudnn_sdpa_bwd(q, k, v, d_o, stats, cu_seq_q, ctx.scale)
        return dq, dk, dv, None, None, None


class _SdpaTHDFixed(_SdpaTHD):
    pad_stats = staticmethod(_lse_thd_to_bhs1_fixed)


if __name__ == "__main__":
    torch.manual_seed(0)
    seqlens = [5, 3, 7]
    cu = torch.tensor([0] + torch.tensor(seqlens).cumsum(0).tolist(), dtype=torch.int32)
    T, H, D = sum(seqlens), 2, 8
    lse = torch.randn(H, T)
    a = _lse_thd_to_bhs1(lse, cu, len(seqlens), max(seqlens))
    b = _lse_thd_to_bhs1_fixed(lse, cu, len(seqlens), max(seqlens))
    assert torch.equal(a, b)

    q, k, v = (torch.randn(T, H, D, requires_grad=True) for _ in range(3))
    grads = []
    for fn in (_SdpaTHD, _SdpaTHDFixed):
        out = fn.apply(q, k, v, cu, max(seqlens), D ** -0.5)
        grads.append(torch.autograd.grad(out.sum(), (q, k, v)))
    for ga, gb in zip(*grads):
        assert torch.allclose(ga, gb)
    print("ok")
