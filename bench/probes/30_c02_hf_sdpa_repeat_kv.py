# source: huggingface/transformers https://github.com/huggingface/transformers/pull/39412 — sdpa_attention_forward always materialised GQA keys/values with repeat_kv (expand + reshape copy to num_attention_heads) before torch SDPA; the fix skips repeat_kv and passes enable_gqa=True when use_gqa_in_sdpa() allows it (torch>=2.5, no attention mask).
import torch
from torch import nn


def repeat_kv(hidden_states, n_rep):
    """
    This is the equivalent of torch.repeat_interleave(x, dim=1, repeats=n_rep). The hidden states go from (batch,
    num_key_value_heads, seqlen, head_dim) to (batch, num_attention_heads, seqlen, head_dim)
    """
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)  # maybe: C (expand+reshape copy; helper also used by the fixed masked fallback)


def sdpa_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    if hasattr(module, "num_key_value_groups"):
        key = repeat_kv(key, module.num_key_value_groups)  # want: C
        value = repeat_kv(value, module.num_key_value_groups)  # want: C

    causal_mask = attention_mask
    if attention_mask is not None and causal_mask.ndim == 4:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]

    if is_causal is None:
        is_causal = query.shape[2] > 1 and causal_mask is None

    attn_output = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=causal_mask, dropout_p=dropout, scale=scaling, is_causal=is_causal
    )
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, None


_is_torch_greater_or_equal_than_2_5 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 5)


def use_gqa_in_sdpa(attention_mask, key):
    # GQA can only be used without a mask, otherwise SDPA falls back to the math kernel
    return _is_torch_greater_or_equal_than_2_5 and attention_mask is None


def sdpa_attention_forward_fixed(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    sdpa_kwargs = {}
    if hasattr(module, "num_key_value_groups"):
        if not use_gqa_in_sdpa(attention_mask, key):
            key = repeat_kv(key, module.num_key_value_groups)
            value = repeat_kv(value, module.num_key_value_groups)
        else:
            sdpa_kwargs = {"enable_gqa": True}

    causal_mask = attention_mask
    if attention_mask is not None and causal_mask.ndim == 4:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]

    if is_causal is None:
        is_causal = query.shape[2] > 1 and causal_mask is None

    attn_output = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=causal_mask, dropout_p=dropout, scale=scaling, is_causal=is_causal, **sdpa_kwargs
    )
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, None


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size=64, num_heads=8, num_key_value_heads=2, attn_fn=sdpa_attention_forward):
        super().__init__()
        self.head_dim = hidden_size // num_heads
        self.num_key_value_groups = num_heads // num_key_value_heads
        self.scaling = self.head_dim**-0.5
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden_size, bias=False)
        self.attn_fn = attn_fn

    def forward(self, hidden_states, attention_mask=None):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        attn_output, _ = self.attn_fn(self, query_states, key_states, value_states, attention_mask, scaling=self.scaling)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


if __name__ == "__main__":
    torch.manual_seed(0)
    a = LlamaAttention(attn_fn=sdpa_attention_forward)
    b = LlamaAttention(attn_fn=sdpa_attention_forward_fixed)
    b.load_state_dict(a.state_dict())
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        assert torch.allclose(a(x), b(x), atol=1e-5)
    k = torch.randn(2, 2, 16, 8)
    r = repeat_kv(k, 4)
    print("kv bytes:", k.untyped_storage().nbytes(), "after repeat_kv:", r.untyped_storage().nbytes(),
          "new storage:", r.data_ptr() != k.data_ptr())
