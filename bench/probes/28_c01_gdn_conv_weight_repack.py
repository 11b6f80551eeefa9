# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/15590 — AscendGatedDeltaNetAttention._forward_core rebuilt conv1d.weight.view(D, W).transpose(0, 1).contiguous() in each of its four branches on every forward/decode step; the fix packs the [W, D] weight once in _get_packed_conv_weights and caches it on the layer.
import torch
import torch.nn as nn
import torch.nn.functional as F

_PACKED_CONV_WEIGHT_NAME = "ascend_conv1d_weight"


# ---- stand-ins for the NPU causal-conv ops; they take the weight as [W, D] ----
def npu_causal_conv1d(x, weight_wd, bias):
    # x: [T, D]  weight_wd: [W, D]
    width = weight_wd.shape[0]
    xp = F.pad(x, (0, 0, width - 1, 0))
    win = xp.unfold(0, width, 1)  # [T, D, W]
    out = torch.einsum("tdw,wd->td", win, weight_wd)
    if bias is not None:
        out = out + bias
    return F.silu(out)


def npu_causal_conv1d_update(x, conv_state, weight_wd, bias):
    # x: [B, D]  conv_state: [B, W-1, D]
    full = torch.cat([conv_state, x.unsqueeze(1)], dim=1)
    conv_state.copy_(full[:, 1:])
    out = torch.einsum("bwd,wd->bd", full, weight_wd)
    if bias is not None:
        out = out + bias
    return F.silu(out)


class AscendGatedDeltaNetAttention(nn.Module):
    def __init__(self, dim, width, use_pcp=False):
        super().__init__()
        self.conv1d = nn.Conv1d(dim, dim, width, groups=dim, bias=False)
        self.use_pcp = use_pcp

    def _forward_core(self, mixed_qkv, conv_state, spec_mask=None, is_prefill=False):
        conv_weights = self.conv1d.weight.view(
            self.conv1d.weight.size(0), self.conv1d.weight.size(2)
        )
        if spec_mask is not None:
            # speculative-decode branch
            out = npu_causal_conv1d_update(
                mixed_qkv,
                conv_state,
                conv_weights.transpose(0, 1).contiguous(),  # want: C
                self.conv1d.bias,
            )
        elif is_prefill and self.use_pcp:
            # PCP prefill branch
            out = npu_causal_conv1d(
                mixed_qkv, conv_weights.transpose(0, 1).contiguous(), self.conv1d.bias  # want: C
            )
        elif is_prefill:
            # non-PCP prefill branch
            out = npu_causal_conv1d(
                mixed_qkv, conv_weights.transpose(0, 1).contiguous(), self.conv1d.bias  # want: C
            )
        else:
            # decode branch
            out = npu_causal_conv1d_update(
                mixed_qkv,
                conv_state,
                conv_weights.transpose(0, 1).contiguous(),  # want: C
                self.conv1d.bias,
            )
        return out


# ---- fixed version: pack once, cache on the layer ----
def _get_packed_conv_weights(layer):
    cached = getattr(layer, _PACKED_CONV_WEIGHT_NAME, None)
    if cached is not None:
        return cached
    w = layer.conv1d.weight
    if w.is_meta:
        return w.view(w.size(0), w.size(2)).transpose(0, 1)
    packed = (
        w.view(w.size(0), w.size(2))
        .transpose(0, 1)
        .to(device=w.device, dtype=w.dtype)
        .contiguous()
    )
    setattr(layer, _PACKED_CONV_WEIGHT_NAME, packed)
    return packed


class AscendGatedDeltaNetAttentionFixed(AscendGatedDeltaNetAttention):
    def _forward_core(self, mixed_qkv, conv_state, spec_mask=None, is_prefill=False):
        conv_weights_t = _get_packed_conv_weights(self)
        if is_prefill:
            return npu_causal_conv1d(mixed_qkv, conv_weights_t, self.conv1d.bias)
        return npu_causal_conv1d_update(mixed_qkv, conv_state, conv_weights_t, self.conv1d.bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    D, W, T, B = 64, 4, 16, 2
    slow = AscendGatedDeltaNetAttention(D, W)
    fast = AscendGatedDeltaNetAttentionFixed(D, W)
    fast.load_state_dict(slow.state_dict())
    with torch.no_grad():
        x = torch.randn(T, D)
        a = slow._forward_core(x, None, is_prefill=True)
        b = fast._forward_core(x, None, is_prefill=True)
        assert torch.allclose(a, b, atol=1e-5)
        s1 = torch.zeros(B, W - 1, D)
        s2 = torch.zeros(B, W - 1, D)
        for _ in range(8):  # decode loop
            xt = torch.randn(B, D)
            a = slow._forward_core(xt, s1)
            b = fast._forward_core(xt, s2)
            assert torch.allclose(a, b, atol=1e-5)
    print("ok", a.shape)
