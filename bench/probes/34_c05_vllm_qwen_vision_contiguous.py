# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/27106 — QwenVisionAttention.forward did `rearrange(x, "s b ... -> b s ...").contiguous()` on q, k and v although q/k are immediately re-copied by torch.cat for the rotary step and the attention backends accept strided input; the PR drops those .contiguous() calls (~1% vision throughput).
import torch
import torch.nn as nn
import torch.nn.functional as F


def rearrange(x, pattern):
    # tiny stand-in for einops.rearrange, only the patterns used below (einops reshapes the same way)
    if pattern == "s b ... -> b s ...":
        return x.transpose(0, 1)
    if pattern in ("b s h d -> b h s d", "b h s d -> b s h d"):
        return x.transpose(1, 2)
    if pattern == "b s h d -> s b (h d)":
        b, s, h, d = x.shape
        return x.permute(1, 0, 2, 3).reshape(s, b, h * d)
    raise ValueError(pattern)


def apply_rotary_pos_emb_vision(t, freqs):
    cos, sin = freqs.cos()[None, :, None, :], freqs.sin()[None, :, None, :]
    cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    t1, t2 = t.chunk(2, dim=-1)
    rotated = torch.cat((-t2, t1), dim=-1)
    return t * cos + rotated * sin


class Qwen2_5_VisionAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, projection_size):
        super().__init__()
        self.num_attention_heads_per_partition = num_heads
        self.hidden_size_per_attention_head = projection_size // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * projection_size)
        self.proj = nn.Linear(projection_size, embed_dim)

    def split_qkv(self, qkv):
        # [s, b, 3 * head * head_dim] -> 3 * [s, b, head, head_dim]
        seq_len, bs, _ = qkv.shape
        q, k, v = qkv.chunk(3, dim=2)
        new_shape = (seq_len, bs, self.num_attention_heads_per_partition, self.hidden_size_per_attention_head)
        q, k, v = (x.view(*new_shape) for x in (q, k, v))
        return q, k, v

    def forward(self, x, cu_seqlens, rotary_pos_emb):
        # [s, b, c] --> [s, b, head * 3 * head_dim]
        x = self.qkv(x)
        q, k, v = self.split_qkv(x)
        q, k, v = (rearrange(x, "s b ... -> b s ...").contiguous() for x in (q, k, v))  # want: C
        return self._attend(q, k, v, cu_seqlens, rotary_pos_emb)

    def _attend(self, q, k, v, cu_seqlens, rotary_pos_emb):
        if rotary_pos_emb is not None:
            # [2 * b, s, heads, head_dim]
            qk_concat = torch.cat([q, k], dim=0)
            qk_rotated = apply_rotary_pos_emb_vision(qk_concat, rotary_pos_emb)
            q, k = torch.chunk(qk_rotated, 2, dim=0)
        # TORCH_SDPA backend: execute attention entry by entry for speed & less VRAM.
        outputs = []
        for i in range(1, len(cu_seqlens)):
            start_idx, end_idx = cu_seqlens[i - 1], cu_seqlens[i]
            q_i, k_i, v_i = (t[:, start_idx:end_idx] for t in (q, k, v))
            q_i, k_i, v_i = (rearrange(t, "b s h d -> b h s d") for t in [q_i, k_i, v_i])
            output_i = F.scaled_dot_product_attention(q_i, k_i, v_i, dropout_p=0.0)
            outputs.append(rearrange(output_i, "b h s d -> b s h d"))
        context_layer = torch.cat(outputs, dim=1)
        context_layer = rearrange(context_layer, "b s h d -> s b (h d)")
        return self.proj(context_layer)


class Qwen2_5_VisionAttentionFixed(Qwen2_5_VisionAttention):
    def forward(self, x, cu_seqlens, rotary_pos_emb):
        x = self.qkv(x)
        q, k, v = self.split_qkv(x)
        q, k, v = (rearrange(x, "s b ... -> b s ...") for x in (q, k, v))
        return self._attend(q, k, v, cu_seqlens, rotary_pos_emb)


if __name__ == "__main__":
    torch.manual_seed(0)
    seq, heads, head_dim = 64, 4, 16
    buggy = Qwen2_5_VisionAttention(64, heads, heads * head_dim)
    fixed = Qwen2_5_VisionAttentionFixed(64, heads, heads * head_dim)
    fixed.load_state_dict(buggy.state_dict())
    x = torch.randn(seq, 1, 64)
    freqs = torch.randn(seq, head_dim // 2)
    cu_seqlens = [0, 16, 40, 64]  # image patch boundaries (host ints)

    real_contiguous = torch.Tensor.contiguous
    copies = []

    def spy(self, *a, **k):
        out = real_contiguous(self, *a, **k)
        if out.data_ptr() != self.data_ptr():
            copies.append(out.numel() * out.element_size())
        return out

    torch.Tensor.contiguous = spy
    with torch.no_grad():
        buggy(x, cu_seqlens, freqs)
        n_b = sum(copies)
        copies.clear()
        fixed(x, cu_seqlens, freqs)
        n_f = sum(copies)
    torch.Tensor.contiguous = real_contiguous
    print("bytes copied by .contiguous()  buggy:", n_b, " fixed:", n_f)
    with torch.no_grad():
        assert torch.allclose(buggy(x, cu_seqlens, freqs), fixed(x, cu_seqlens, freqs), atol=1e-5)
    print("outputs match without the extra q/k/v copies")
