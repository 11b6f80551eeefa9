# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/8209 — AutoEP's count_tokens_per_expert counted routed tokens with torch.bincount(flat_indices, minlength=num_experts), whose data-dependent output size forces a device-to-host sync, and the MoE forward called it again after the router had already counted; the fix counts with a pre-sized zeros(num_experts) + scatter_add_ and reuses the router histogram.
import torch
import torch.nn as nn
import torch.nn.functional as F


def count_tokens_per_expert(selected_experts_indices, num_experts, *, out_dtype=torch.float32):
    """Count routed tokens per expert."""
    flat_indices = selected_experts_indices.reshape(-1).to(torch.int64)
    counts = torch.bincount(flat_indices, minlength=num_experts)  # want: D
    return counts.to(out_dtype)


def count_tokens_per_expert_fixed(selected_experts_indices, num_experts):
    flat_indices = selected_experts_indices.reshape(-1)
    counts = torch.zeros(num_experts, dtype=torch.int32, device=flat_indices.device)
    counts.scatter_add_(0, flat_indices, torch.ones_like(flat_indices, dtype=counts.dtype))
    return counts


class TokenChoiceTopKRouter(nn.Module):
    def __init__(self, dim, num_experts, top_k):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.num_experts = num_experts
        self.top_k = top_k

    def count(self, selected_experts_indices):
        return count_tokens_per_expert(selected_experts_indices, self.num_experts)

    def forward(self, x):
        scores = F.softmax(self.gate(x).float(), dim=-1)
        top_scores, selected_experts_indices = torch.topk(scores, k=self.top_k, dim=-1)
        num_tokens_per_expert = self.count(selected_experts_indices)
        return top_scores, selected_experts_indices, num_tokens_per_expert


class AutoEPMoELayer(nn.Module):
    def __init__(self, dim, hidden, num_experts, top_k):
        super().__init__()
        self.router = TokenChoiceTopKRouter(dim, num_experts, top_k)
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * 0.02)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.02)
        self.num_experts = num_experts
        self.top_k = top_k

    def tokens_per_expert(self, selected_experts_indices, router_counts):
        # recomputed here for the split plan / local expert loop
        return count_tokens_per_expert(selected_experts_indices, self.num_experts)  # maybe: D (second call into the bincount helper; fix reuses the router histogram)

    def forward(self, x):
        bs, slen, dim = x.shape
        x = x.view(-1, dim)
        top_scores, selected, router_counts = self.router(x)
        num_tokens_per_expert = self.tokens_per_expert(selected, router_counts)
        # argsort by expert + score gather (TokenReorderer inlined)
        token_indices = torch.argsort(selected.view(-1), stable=True)
        scores_sorted = top_scores.view(-1)[token_indices]
        routed = x[token_indices // self.top_k]
        offsets = torch.cumsum(num_tokens_per_expert.to(torch.int32), dim=0)
        h = torch.bmm(routed.unsqueeze(0).expand(self.num_experts, -1, -1), self.w1)
        out = torch.bmm(F.silu(h), self.w2)
        expert_of_row = torch.searchsorted(offsets, torch.arange(routed.shape[0], device=x.device, dtype=torch.int32), right=True)
        out = out[expert_of_row.clamp(max=self.num_experts - 1), torch.arange(routed.shape[0])]
        out = out * scores_sorted.unsqueeze(-1).to(out.dtype)
        y = torch.zeros_like(x).index_add_(0, token_indices // self.top_k, out)
        return y.view(bs, slen, dim)


class TokenChoiceTopKRouterFixed(TokenChoiceTopKRouter):
    def count(self, selected_experts_indices):
        return count_tokens_per_expert_fixed(selected_experts_indices, self.num_experts)


class AutoEPMoELayerFixed(AutoEPMoELayer):
    def __init__(self, dim, hidden, num_experts, top_k):
        super().__init__(dim, hidden, num_experts, top_k)
        self.router = TokenChoiceTopKRouterFixed(dim, num_experts, top_k)

    def tokens_per_expert(self, selected_experts_indices, router_counts):
        # reuse the router's histogram
        return router_counts


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 16, 32)
    a = AutoEPMoELayer(32, 64, 8, 2)
    b = AutoEPMoELayerFixed(32, 64, 8, 2)
    b.load_state_dict(a.state_dict())
    ya, yb = a(x), b(x)
    idx = torch.randint(0, 8, (64, 2))
    print("counts equal:", torch.equal(count_tokens_per_expert(idx, 8).to(torch.int32),
                                       count_tokens_per_expert_fixed(idx, 8)))
    print("outputs close:", torch.allclose(ya, yb, atol=1e-5))
