# source: huggingface/transformers PR #39412 ("use the enable_gqa param in ... scaled_dot_product_attention") and PR #40315 ("Remove unnecessary contiguous calls for modern torch") — the shared sdpa_attention_forward() expanded K/V with repeat_kv for every GQA model before calling SDPA, then forced .contiguous() on q/k/v as a torch<2.2 workaround
from typing import Callable, Dict, Optional

import torch
import torch.nn.functional as F
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def sdpa_attention_forward(module: nn.Module, query, key, value, attention_mask: Optional[torch.Tensor],
                           dropout: float = 0.0, scaling: Optional[float] = None, is_causal=None, **kwargs):
    if hasattr(module, "num_key_value_groups"):
        key = repeat_kv(key, module.num_key_value_groups)  # want: C
        value = repeat_kv(value, module.num_key_value_groups)  # want: C

    causal_mask = attention_mask
    if attention_mask is not None:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]

    # SDPA with memory-efficient backend is bugged with non-contiguous inputs and custom attn_mask for some torch versions
    # Reference: https://github.com/pytorch/pytorch/issues/112577.
    query = query.contiguous()  # maybe: C (query comes from a transpose, so this copies; SDPA takes strided inputs since torch 2.2)
    key = key.contiguous()  # maybe: C (a no-op after repeat_kv's reshape, a copy when n_rep == 1)
    value = value.contiguous()  # maybe: C (same as key)

    if is_causal is None:
        is_causal = causal_mask is None and query.shape[2] > 1

    # Shapes (e.g. query.shape[2]) are tensors during jit tracing, resulting in `is_causal` being a tensor.
    if torch.jit.is_tracing() and isinstance(is_causal, torch.Tensor):
        is_causal = is_causal.item()

    attn_output = F.scaled_dot_product_attention(query, key, value, attn_mask=causal_mask, dropout_p=dropout,
                                                 scale=scaling, is_causal=is_causal)
    attn_output = attn_output.transpose(1, 2).contiguous()  # back to [b, s, h, d] for the o_proj reshape
    return attn_output, None


def use_gqa_in_sdpa(attention_mask: Optional[torch.Tensor], key: torch.Tensor) -> bool:
    # the fused kernels broadcast KV heads only without a custom mask (and on torch >= 2.5)
    return attention_mask is None


def sdpa_attention_forward_fixed(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
                                 is_causal=None, **kwargs):
    sdpa_kwargs = {}
    if hasattr(module, "num_key_value_groups"):
        if not use_gqa_in_sdpa(attention_mask=attention_mask, key=key):
            key = repeat_kv(key, module.num_key_value_groups)  # a custom mask rules out enable_gqa: expansion required
            value = repeat_kv(value, module.num_key_value_groups)
        else:
            sdpa_kwargs = {"enable_gqa": True}
    causal_mask = attention_mask
    if attention_mask is not None:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]
    if is_causal is None:
        is_causal = causal_mask is None and query.shape[2] > 1
    attn_output = F.scaled_dot_product_attention(query, key, value, attn_mask=causal_mask, dropout_p=dropout,
                                                 scale=scaling, is_causal=is_causal, **sdpa_kwargs)
    return attn_output.transpose(1, 2).contiguous(), None


ALL_ATTENTION_FUNCTIONS: Dict[str, Callable] = {
    "sdpa": sdpa_attention_forward,
    "sdpa_fixed": sdpa_attention_forward_fixed,
}


class LlamaAttention(nn.Module):
    def __init__(self, hidden=64, heads=8, kv_heads=2, impl="sdpa"):
        super().__init__()
        self.head_dim = hidden // heads
        self.num_key_value_groups = heads // kv_heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.impl = impl

    def forward(self, hidden_states, attention_mask=None):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        attention_interface = ALL_ATTENTION_FUNCTIONS[self.impl]
        attn_output, attn_weights = attention_interface(self, query_states, key_states, value_states,
                                                        attention_mask, dropout=0.0, scaling=self.scaling)
        attn_output = attn_output.reshape(*input_shape, -1)
        return self.o_proj(attn_output)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 6, 64)
    attn = LlamaAttention()
    with torch.no_grad():
        a = attn(x)
        attn.impl = "sdpa_fixed"
        b = attn(x)
        mask = torch.ones(2, 1, 6, 6, dtype=torch.bool).tril()
        c = attn(x, mask)
        attn.impl = "sdpa"
        d = attn(x, mask)
    assert torch.allclose(a, b, atol=1e-5) and torch.allclose(c, d, atol=1e-5)
    print("ok: enable_gqa gives the same output without materializing the repeated K/V")
