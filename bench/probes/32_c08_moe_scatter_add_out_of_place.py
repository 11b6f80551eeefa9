# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/1974 — MoE.forward combined the routed expert outputs with `out = torch.zeros_like(x)` followed by an out-of-place `out.scatter_add(dim=0, index=..., src=routed_output)` over an expanded [N*top_k, dim] index, allocating fresh full-size buffers; the fix ("remove scatter_add in MoE implementation") unsorts in place into the existing routed_input buffer and reduces over top_k.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenChoiceTopKRouter(nn.Module):
    def __init__(self, dim, num_experts, top_k):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.num_experts = num_experts
        self.top_k = top_k

    def forward(self, x):
        scores = F.softmax(self.gate(x), dim=1, dtype=torch.float32)
        top_scores, selected_experts_indices = torch.topk(scores, k=self.top_k, dim=1)
        num_tokens_per_expert = torch.histc(
            selected_experts_indices.view(-1).float(), bins=self.num_experts, min=0, max=self.num_experts
        )
        return top_scores.to(x.dtype), selected_experts_indices, num_tokens_per_expert


class GroupedExperts(nn.Module):
    # stand-in for the grouped GEMM over expert-sorted tokens
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x, num_tokens_per_expert):
        return self.w2(F.silu(self.w1(x)))


class MoE(nn.Module):
    def __init__(self, dim=64, hidden_dim=128, num_experts=8, top_k=2):
        super().__init__()
        self.router = TokenChoiceTopKRouter(dim, num_experts, top_k)
        self.experts = GroupedExperts(dim, hidden_dim)
        self.top_k = top_k

    def forward(self, x):
        bs, slen, dim = x.shape
        x = x.view(-1, dim)
        top_scores, selected_experts_indices, num_tokens_per_expert = self.router(x)
        token_indices_experts_sorted = torch.argsort(selected_experts_indices.view(-1), stable=True)
        top_scores_experts_sorted = top_scores.view(-1)[token_indices_experts_sorted]
        token_indices_experts_sorted = token_indices_experts_sorted // self.top_k

        # shape (bs*slen*top_k, dim)
        token_indices_experts_sorted = token_indices_experts_sorted.reshape(-1, 1).expand(-1, dim)
        routed_input = torch.gather(x, dim=0, index=token_indices_experts_sorted)
        routed_input = routed_input * top_scores_experts_sorted.reshape(-1, 1)
        routed_output = self.experts(routed_input, num_tokens_per_expert)

        out = torch.zeros_like(x)  # maybe: C (full-size zero buffer only exists as the base of the out-of-place scatter_add)
        out = out.scatter_add(dim=0, index=token_indices_experts_sorted, src=routed_output)  # want: C
        return out.reshape(bs, slen, dim)


class MoEFixed(MoE):
    def forward(self, x):
        bs, slen, dim = x.shape
        x = x.view(-1, dim)
        top_scores, selected_experts_indices, num_tokens_per_expert = self.router(x)
        token_indices_experts_sorted = torch.argsort(selected_experts_indices.view(-1), stable=True)
        top_scores_experts_sorted = top_scores.view(-1)[token_indices_experts_sorted]

        # shape (bs*slen*top_k, dim)
        routed_input = x[token_indices_experts_sorted // self.top_k]
        routed_input = routed_input * top_scores_experts_sorted.reshape(-1, 1)
        routed_output = self.experts(routed_input, num_tokens_per_expert)

        # Unsort routed outputs and save an allocation: store unsorted outputs in routed_input
        routed_input[token_indices_experts_sorted] = routed_output
        out_experts = routed_input.reshape(bs * slen, -1, dim).sum(dim=1)
        return out_experts.reshape(bs, slen, dim)


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = MoE()
    fixed = MoEFixed()
    fixed.load_state_dict(buggy.state_dict())
    x = torch.randn(4, 32, 64)
    with torch.no_grad():
        y_b = buggy(x)
        y_f = fixed(x)
    n = x.shape[0] * x.shape[1]
    print("buggy extra full buffers: zeros_like + scatter_add result =", 2 * n * 64 * 4, "bytes")
    assert torch.allclose(y_b, y_f, atol=1e-5)
