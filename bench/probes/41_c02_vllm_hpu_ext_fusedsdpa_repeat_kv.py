# source: HabanaAI/vllm-hpu-extension https://github.com/HabanaAI/vllm-hpu-extension/pull/20 — `prompt_attention` in vllm_hpu_extension/ops.py, run for every prefill, expanded GQA keys and values to the query head count with `repeat_kv` (expand + reshape, a full K/V copy per layer) before calling FusedSDPA, as a "TODO: remove after fusedsdpa fix for query_heads != kv_heads" work-around. The PR ("Remove unnecessary repeat_kv when using fusedsdpa") drops the copy because FusedSDPA handles query_heads != kv_heads itself since Synapse 1.18; here FusedSDPA is stood in for by torch SDPA with enable_gqa.
from typing import Optional

import torch
import torch.nn.functional as F


class FusedSDPA:
    calls = []

    @staticmethod
    def apply(query, key, value, attn_mask, dropout_p, is_causal, scale,
              softmax_mode, recompute_mode, valid_sequence_lengths, padding_side):
        FusedSDPA.calls.append(key)
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask,
                                              dropout_p=dropout_p, is_causal=is_causal,
                                              scale=scale,
                                              enable_gqa=query.size(1) != key.size(1))


HPUFusedSDPA = FusedSDPA


def repeat_kv(kv: torch.Tensor, n_rep: int) -> torch.Tensor:
    if n_rep == 1:
        return kv
    bs, num_kv_heads, slen, head_dim = kv.shape
    kv = kv[:, :, None, :, :].expand(bs, num_kv_heads, n_rep, slen, head_dim)
    return kv.reshape(bs, num_kv_heads * n_rep, slen, head_dim)


def prompt_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_bias: Optional[torch.Tensor] = None,
    p: float = 0.0,
    scale: Optional[float] = None,
    matmul_qk_op=torch.matmul,
    softmax_op=torch.softmax,
    matmul_av_op=torch.matmul,
    valid_seq_lengths: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    query = query.transpose(1, 2)
    key = key.transpose(1, 2)
    value = value.transpose(1, 2)
    query_heads = query.size(1)
    kv_heads = key.size(1)
    if attn_bias is not None or HPUFusedSDPA is None:
        if query_heads != kv_heads:
            query = query.unflatten(1, (kv_heads, -1))
            key = key.unflatten(1, (kv_heads, 1))
            value = value.unflatten(1, (kv_heads, 1))
            if attn_bias is not None:
                attn_bias = attn_bias.unsqueeze(2)
        attn_weights = matmul_qk_op(query * scale, key.transpose(-1, -2))
        if attn_bias is not None:
            attn_weights.add_(attn_bias)
        attn_weights = softmax_op(attn_weights, dim=-1)
        attn_weights = matmul_av_op(attn_weights, value)
        if query_heads != kv_heads:
            attn_weights = attn_weights.flatten(1, 2)
    else:
        #TODO: remove after fusedsdpa fix for query_heads != kv_heads
        if query_heads != kv_heads:
            key = repeat_kv(key, int(query_heads // kv_heads))  # want: C
            value = repeat_kv(value, int(query_heads // kv_heads))  # want: C
        softmax_mode = 'fast'
        recompute_mode = True
        attn_weights = FusedSDPA.apply(query, key, value, None, 0.0, True,
                                       scale, softmax_mode, recompute_mode,
                                       valid_seq_lengths, 'right')
    attn_weights = attn_weights.transpose(1, 2)
    return attn_weights


def prompt_attention_fixed(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_bias: Optional[torch.Tensor] = None,
    p: float = 0.0,
    scale: Optional[float] = None,
    valid_seq_lengths: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    query = query.transpose(1, 2)
    key = key.transpose(1, 2)
    value = value.transpose(1, 2)
    softmax_mode = 'fast'
    recompute_mode = True
    attn_weights = FusedSDPA.apply(query, key, value, None, 0.0, True,
                                   scale, softmax_mode, recompute_mode,
                                   valid_seq_lengths, 'right')
    attn_weights = attn_weights.transpose(1, 2)
    return attn_weights


if __name__ == "__main__":
    torch.manual_seed(0)
    bs, seq, q_heads, kv_heads, head_dim = 2, 8, 8, 2, 16
    query = torch.randn(bs, seq, q_heads, head_dim)
    key = torch.randn(bs, seq, kv_heads, head_dim)
    value = torch.randn(bs, seq, kv_heads, head_dim)
    scale = head_dim ** -0.5

    out_a = prompt_attention(query, key, value, scale=scale)
    key_a = FusedSDPA.calls[-1]
    out_b = prompt_attention_fixed(query, key, value, scale=scale)
    key_b = FusedSDPA.calls[-1]

    assert torch.allclose(out_a, out_b, atol=1e-5)
    assert key_a.data_ptr() != key.data_ptr() and key_a.numel() == 4 * key.numel()
    assert key_b.data_ptr() == key.data_ptr()
    print("ok")
