# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/10454 — the 310P UnquantizedFusedMoEMethod.process_weights_after_loading did `.transpose(1, 2).contiguous()` on w13/w2 and then passed the copy to maybe_trans_nz, which writes a fresh NZ-format buffer anyway; with every MoE weight resident this doubled the peak (OOM on Qwen3-Next-80B TP=4), so the PR drops the redundant .contiguous().
import torch
import torch.nn as nn

_NZ_CASTS = []


def maybe_trans_nz(weight):
    # stand-in for torch_npu.npu_format_cast(weight, ACL_FORMAT_FRACTAL_NZ): the cast always writes a
    # new buffer in the NZ layout and accepts any input strides
    out = weight.clone(memory_format=torch.contiguous_format)
    _NZ_CASTS.append(out.data_ptr())
    return out


class FusedMoELayer(nn.Module):
    def __init__(self, num_experts, hidden, inter):
        super().__init__()
        self.w13_weight = nn.Parameter(torch.randn(num_experts, 2 * inter, hidden), requires_grad=False)
        self.w2_weight = nn.Parameter(torch.randn(num_experts, hidden, inter), requires_grad=False)


class UnquantizedFusedMoEMethod:
    def _maybe_pad_weight(self, weight):
        return weight

    def process_weights_after_loading(self, layer):
        pass

    def apply(self, layer, x, topk_ids):
        w13 = layer.w13_weight[topk_ids]  # [tokens, hidden, 2 * inter]
        gate_up = torch.bmm(x.unsqueeze(1), w13).squeeze(1)
        gate, up = gate_up.chunk(2, dim=-1)
        h = torch.nn.functional.silu(gate) * up
        return torch.bmm(h.unsqueeze(1), layer.w2_weight[topk_ids]).squeeze(1)


class AscendUnquantizedFusedMoEMethod310(UnquantizedFusedMoEMethod):
    def process_weights_after_loading(self, layer):
        super().process_weights_after_loading(layer)
        # Fused gate_up_proj (column parallel)
        w13_data = self._maybe_pad_weight(layer.w13_weight.data).transpose(1, 2).contiguous()  # want: C
        w13_data = maybe_trans_nz(w13_data)
        layer.w13_weight = torch.nn.Parameter(w13_data, requires_grad=False)
        # down_proj (row parallel)
        w2_data = self._maybe_pad_weight(layer.w2_weight.data).transpose(1, 2).contiguous()  # want: C
        w2_data = maybe_trans_nz(w2_data)
        layer.w2_weight = torch.nn.Parameter(w2_data, requires_grad=False)


class AscendUnquantizedFusedMoEMethod310Fixed(UnquantizedFusedMoEMethod):
    def process_weights_after_loading(self, layer):
        super().process_weights_after_loading(layer)
        # Fused gate_up_proj (column parallel); the NZ cast materialises the transposed view itself
        w13_data = self._maybe_pad_weight(layer.w13_weight.data).transpose(1, 2)
        w13_data = maybe_trans_nz(w13_data)
        layer.w13_weight = torch.nn.Parameter(w13_data, requires_grad=False)
        # down_proj (row parallel)
        w2_data = self._maybe_pad_weight(layer.w2_weight.data).transpose(1, 2)
        w2_data = maybe_trans_nz(w2_data)
        layer.w2_weight = torch.nn.Parameter(w2_data, requires_grad=False)


def count_transient_copies(method, layer):
    before = {layer.w13_weight.data_ptr(), layer.w2_weight.data_ptr()}
    _NZ_CASTS.clear()
    real_contiguous = torch.Tensor.contiguous
    made = []

    def spy(self, *a, **k):
        out = real_contiguous(self, *a, **k)
        if out.data_ptr() not in before and out.data_ptr() != self.data_ptr():
            made.append(out.numel() * out.element_size())
        return out

    torch.Tensor.contiguous = spy
    try:
        method.process_weights_after_loading(layer)
    finally:
        torch.Tensor.contiguous = real_contiguous
    return sum(made)


if __name__ == "__main__":
    torch.manual_seed(0)
    E, H, I = 4, 32, 48
    layer_b, layer_f = FusedMoELayer(E, H, I), FusedMoELayer(E, H, I)
    layer_f.load_state_dict(layer_b.state_dict())
    extra_b = count_transient_copies(AscendUnquantizedFusedMoEMethod310(), layer_b)
    extra_f = count_transient_copies(AscendUnquantizedFusedMoEMethod310Fixed(), layer_f)
    print("extra bytes materialised before the NZ cast  buggy:", extra_b, " fixed:", extra_f)
    x, ids = torch.randn(5, H), torch.randint(0, E, (5,))
    m = UnquantizedFusedMoEMethod()
    assert torch.allclose(m.apply(layer_b, x, ids), m.apply(layer_f, x, ids))
    print("same MoE output")
