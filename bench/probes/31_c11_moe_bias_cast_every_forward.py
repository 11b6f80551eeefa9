# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/39999 — on ROCm the DeepSeek/Kimi-K2 router passed `e_score_correction_bias.to(gating_output.dtype)` to the biased grouped-topk kernel, re-casting the fp32 bias parameter to bf16 (a new tensor + elementwise kernel) on every MoE layer of every forward; the fix pre-casts the shared `e_score_correction_bias` parameter to the gate's output dtype once in DeepseekV2MoE.__init__.
import torch
from torch import nn


def biased_grouped_topk(gating_output, correction_bias, topk_weights, topk_ids, num_expert_group, topk_group,
                        renormalize, routed_scaling_factor):
    # stand-in for torch.ops.vllm.rocm_aiter_biased_grouped_topk (writes into topk_weights / topk_ids)
    assert correction_bias.dtype == gating_output.dtype
    scores = gating_output.sigmoid()
    biased = scores + correction_bias
    num_token = scores.shape[0]
    group_scores = biased.view(num_token, num_expert_group, -1).topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = torch.topk(group_scores, k=topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1)
    biased = biased.view(num_token, num_expert_group, -1).masked_fill(group_mask.unsqueeze(-1) == 0, float("-inf"))
    biased = biased.view(num_token, -1)
    ids = torch.topk(biased, k=topk_ids.shape[1], dim=-1, sorted=False)[1]
    w = scores.gather(1, ids).float()
    if renormalize:
        w = w / w.sum(dim=-1, keepdim=True)
    topk_weights.copy_(w * routed_scaling_factor)
    topk_ids.copy_(ids)


def rocm_aiter_grouped_topk(hidden_states, gating_output, topk, renormalize, num_expert_group, topk_group,
                            routed_scaling_factor=1.0, e_score_correction_bias=None):
    token = hidden_states.shape[0]
    device = hidden_states.device
    topk_ids = torch.empty((token, topk), dtype=torch.int32, device=device)
    topk_weights = torch.empty((token, topk), dtype=torch.float32, device=device)
    biased_grouped_topk(
        gating_output,
        e_score_correction_bias.to(gating_output.dtype),  # want: C
        topk_weights, topk_ids, num_expert_group, topk_group, renormalize, routed_scaling_factor,
    )
    return topk_weights, topk_ids


def rocm_aiter_grouped_topk_fixed(hidden_states, gating_output, topk, renormalize, num_expert_group, topk_group,
                                  routed_scaling_factor=1.0, e_score_correction_bias=None):
    token = hidden_states.shape[0]
    device = hidden_states.device
    topk_ids = torch.empty((token, topk), dtype=torch.int32, device=device)
    topk_weights = torch.empty((token, topk), dtype=torch.float32, device=device)
    biased_grouped_topk(
        gating_output,
        e_score_correction_bias,
        topk_weights, topk_ids, num_expert_group, topk_group, renormalize, routed_scaling_factor,
    )
    return topk_weights, topk_ids


class DeepseekV2MoE(nn.Module):
    def __init__(self, hidden_size=64, n_routed_experts=32, n_group=4, topk_group=2, top_k=4, precast=False):
        super().__init__()
        self.gate = nn.Linear(hidden_size, n_routed_experts, bias=False, dtype=torch.bfloat16)
        self.gate.out_dtype = torch.bfloat16
        self.gate.e_score_correction_bias = nn.Parameter(torch.rand(n_routed_experts, dtype=torch.float32))
        self.n_group, self.topk_group, self.top_k = n_group, topk_group, top_k
        self.precast = precast
        if precast:
            # cast once at construction; router and FusedMoE share this Parameter object
            self.gate.e_score_correction_bias.data = self.gate.e_score_correction_bias.data.to(self.gate.out_dtype)

    def forward(self, hidden_states):
        router_logits = self.gate(hidden_states.to(torch.bfloat16))
        select = rocm_aiter_grouped_topk_fixed if self.precast else rocm_aiter_grouped_topk
        return select(hidden_states, router_logits, self.top_k, True, self.n_group, self.topk_group,
                      e_score_correction_bias=self.gate.e_score_correction_bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = DeepseekV2MoE()
    fix = DeepseekV2MoE(precast=True)
    with torch.no_grad():
        fix.gate.weight.copy_(bug.gate.weight)
        fix.gate.e_score_correction_bias.copy_(bug.gate.e_score_correction_bias)
        x = torch.randn(16, 64)
        wb, ib = bug(x)
        wf, idf = fix(x)
    assert torch.equal(ib.sort(-1)[0], idf.sort(-1)[0])
    bias = bug.gate.e_score_correction_bias
    print("buggy: per-forward bias cast allocates:", bias.to(torch.bfloat16).data_ptr() != bias.data_ptr())
    print("fixed: bias already", fix.gate.e_score_correction_bias.dtype)
