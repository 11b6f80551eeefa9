# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/16189 — the internal-router MoE path recomputed router logits with gate.weight.to(torch.float32) on every forward (a per-forward Cast of the gate weight) whenever weight_fp32 had not been materialized; the fix precasts weight_fp32 once at load time in AscendMoERunner.__init__ and reads it through _gate_weight_fp32().
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReplicatedLinear(nn.Linear):
    pass


class UnquantizedLinearMethod:
    def process_weights_after_loading(self, layer):
        # Fixed path: materialize the fp32 copy once, at load time.
        if getattr(layer, "precast_fp32_weight", False):
            layer.weight_fp32 = layer.weight.data.to(torch.float32)


def fused_experts(hidden_states, w1, w2, topk_weights, topk_ids):
    out = torch.zeros_like(hidden_states)
    for e in range(w1.shape[0]):
        tok, slot = (topk_ids == e).nonzero(as_tuple=True)
        if tok.numel() == 0:
            continue
        h = F.silu(hidden_states[tok] @ w1[e].t()) @ w2[e].t()
        out.index_add_(0, tok, h * topk_weights[tok, slot, None].to(h.dtype))
    return out


class AscendMoERunner(nn.Module):
    def __init__(self, hidden, inter, num_experts, top_k, dtype, precast=False):
        super().__init__()
        self.gate = ReplicatedLinear(hidden, num_experts, bias=False).to(dtype)
        self.w13 = nn.Parameter(torch.randn(num_experts, inter, hidden, dtype=dtype) * 0.05)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, inter, dtype=dtype) * 0.05)
        self.top_k = top_k
        if precast:
            self.gate.precast_fp32_weight = True
            UnquantizedLinearMethod().process_weights_after_loading(self.gate)

    @property
    def is_internal_router(self):
        return self.gate is not None

    def forward_impl(self, hidden_states):
        gate = self.gate
        if self.is_internal_router:
            hidden_states_fp32 = hidden_states.float()
            router_logits = F.linear(
                hidden_states_fp32,
                gate.weight_fp32 if hasattr(gate, "weight_fp32") else gate.weight.to(torch.float32),  # want: C
            )
        topk_weights, topk_ids = torch.topk(router_logits.softmax(-1), self.top_k, dim=-1)
        return fused_experts(hidden_states, self.w13, self.w2, topk_weights, topk_ids)

    # fixed version
    def _gate_weight_fp32(self):
        return self.gate.weight_fp32

    def forward_impl_fixed(self, hidden_states):
        hidden_states_fp32 = hidden_states.float()
        router_logits = F.linear(hidden_states_fp32, self._gate_weight_fp32())
        topk_weights, topk_ids = torch.topk(router_logits.softmax(-1), self.top_k, dim=-1)
        return fused_experts(hidden_states, self.w13, self.w2, topk_weights, topk_ids)


if __name__ == "__main__":
    torch.manual_seed(0)
    slow = AscendMoERunner(64, 96, 8, 2, torch.bfloat16)
    fast = AscendMoERunner(64, 96, 8, 2, torch.bfloat16)
    fast.load_state_dict(slow.state_dict())
    fast.gate.precast_fp32_weight = True
    UnquantizedLinearMethod().process_weights_after_loading(fast.gate)
    with torch.no_grad():
        for _ in range(4):  # decode steps
            x = torch.randn(8, 64, dtype=torch.bfloat16)
            a = slow.forward_impl(x)
            b = fast.forward_impl_fixed(x)
            assert torch.allclose(a.float(), b.float(), atol=1e-2)
    print("ok", a.shape, a.dtype)
