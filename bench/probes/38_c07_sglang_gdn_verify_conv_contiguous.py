# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/13604 — In the hybrid linear-attention (GDN) backend's speculative target-verify path, mixed_qkv was reshaped to [batch, dim, draft_tokens] with .transpose(1, 2).contiguous() before causal_conv1d_update and transposed back with .transpose(1, 2).contiguous().view(seq_len, -1) afterwards, i.e. two full copies of the packed QKV activations per layer per verify step. causal_conv1d_update already honours the input strides and writes its output in place, so the PR ("[GDN] Remove unnecessary contiguous()") passes the transposed view and views the result directly.
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None, conv_state_indices=None,
                         intermediate_conv_window=None):
    # x: (batch, dim, seqlen); conv_state: (..., dim, state_len)
    out = x
    width = weight.shape[-1]
    for b in range(x.shape[0]):
        idx = conv_state_indices[b]
        window = torch.cat([conv_state[idx], x[b]], dim=-1)
        y = sum(window[:, k:k + x.shape[-1]] * weight[:, k:k + 1] for k in range(width))
        if bias is not None:
            y = y + bias[:, None]
        if activation in ("silu", "swish"):
            y = F.silu(y)
        conv_state[idx].copy_(window[:, -(width - 1):])
        out[b].copy_(y)
    return out


@dataclass
class SpecInfo:
    draft_token_num: int


@dataclass
class ForwardBatch:
    spec_info: SpecInfo
    is_target_verify: bool = True


class GDNLayer:
    def __init__(self, dim, width=4):
        g = torch.Generator().manual_seed(0)
        self.conv_weights = torch.randn(dim, width, generator=g) * 0.3
        self.bias = torch.randn(dim, generator=g) * 0.1
        self.activation = "silu"


class MambaAttnBackend:
    def __init__(self, conv_states, cache_indices, key_dim, value_dim, attn_tp_size=1):
        self.conv_states, self.cache_indices = conv_states, cache_indices
        self.key_dim, self.value_dim, self.attn_tp_size = key_dim, value_dim, attn_tp_size

    def forward_extend(self, layer, forward_batch, mixed_qkv):
        conv_weights, bias, activation = layer.conv_weights, layer.bias, layer.activation
        seq_len = mixed_qkv.shape[0]
        cache_indices = self.cache_indices
        if forward_batch.is_target_verify:
            batch_size = seq_len // forward_batch.spec_info.draft_token_num
            draft_token_num = forward_batch.spec_info.draft_token_num
            mixed_qkv_reshaped = (
                mixed_qkv.view(batch_size, draft_token_num, -1)
                .transpose(1, 2)
                .contiguous()  # want: C
            )
            mixed_qkv_processed = causal_conv1d_update(
                mixed_qkv_reshaped,
                self.conv_states,
                conv_weights,
                bias,
                activation,
                conv_state_indices=cache_indices[:batch_size],
            )
            mixed_qkv = (
                mixed_qkv_processed.transpose(1, 2).contiguous().view(seq_len, -1)  # want: C
            )
        key_split_dim = self.key_dim // self.attn_tp_size
        value_split_dim = self.value_dim // self.attn_tp_size
        return torch.split(mixed_qkv, [key_split_dim, key_split_dim, value_split_dim], dim=-1)


class MambaAttnBackendFixed(MambaAttnBackend):
    def forward_extend(self, layer, forward_batch, mixed_qkv):
        conv_weights, bias, activation = layer.conv_weights, layer.bias, layer.activation
        seq_len = mixed_qkv.shape[0]
        cache_indices = self.cache_indices
        if forward_batch.is_target_verify:
            batch_size = seq_len // forward_batch.spec_info.draft_token_num
            draft_token_num = forward_batch.spec_info.draft_token_num
            mixed_qkv_reshaped = mixed_qkv.view(batch_size, draft_token_num, -1).transpose(1, 2)
            mixed_qkv_processed = causal_conv1d_update(
                mixed_qkv_reshaped,
                self.conv_states,
                conv_weights,
                bias,
                activation,
                conv_state_indices=cache_indices[:batch_size],
            )
            mixed_qkv = mixed_qkv_processed.transpose(1, 2).view(seq_len, -1)
        key_split_dim = self.key_dim // self.attn_tp_size
        value_split_dim = self.value_dim // self.attn_tp_size
        return torch.split(mixed_qkv, [key_split_dim, key_split_dim, value_split_dim], dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    key_dim, value_dim, width, bs, draft = 8, 16, 4, 3, 4
    dim = 2 * key_dim + value_dim
    layer, fb = GDNLayer(dim, width), ForwardBatch(SpecInfo(draft))
    conv_states0 = torch.randn(5, dim, width - 1)
    cache_indices = torch.tensor([4, 0, 2])
    mixed_qkv0 = torch.randn(bs * draft, dim)

    outs, ptrs = {}, {}
    for cls in (MambaAttnBackend, MambaAttnBackendFixed):
        backend = cls(conv_states0.clone(), cache_indices, key_dim, value_dim)
        mixed_qkv = mixed_qkv0.clone()
        q, k, v = backend.forward_extend(layer, fb, mixed_qkv)
        outs[cls] = (q, k, v, backend.conv_states)
        ptrs[cls] = (q.data_ptr() == mixed_qkv.data_ptr(), v.untyped_storage().data_ptr() == mixed_qkv.data_ptr())
    for a, b in zip(outs[MambaAttnBackend], outs[MambaAttnBackendFixed]):
        assert torch.allclose(a, b, atol=1e-6)
    assert ptrs[MambaAttnBackend] == (False, False)
    assert ptrs[MambaAttnBackendFixed] == (True, True)
    print("ok")
