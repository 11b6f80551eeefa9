# source: unslothai/unsloth-zoo https://github.com/unslothai/unsloth-zoo/pull/1248 — MoE routing counted tokens per expert with torch.bincount (data-dependent output size, so CUDA reads max(input) back to the host every MoE forward) and the gpt-oss expert-bias expansion used repeat_interleave with tensor repeats and no output_size (another sync to learn the row count); the fix counts with scatter_add_ into a pre-zeroed tensor and expands biases with index_select by each sorted row's expert id.
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def _get_routing_indices(selected_experts, num_experts):
    flat_experts = selected_experts.view(-1)
    # bincount is faster than histc since it doesn't require float conversion
    token_counts_by_expert = torch.bincount(flat_experts, minlength=num_experts).to(torch.int32)  # want: D
    # argsort with stable=True preserves order within each expert
    gather_indices = flat_experts.argsort(stable=True)
    return token_counts_by_expert, gather_indices


@torch.no_grad()
def count_tokens_per_expert(flat_experts, num_experts):
    counts = torch.zeros(num_experts, dtype=torch.int32, device=flat_experts.device)
    counts.scatter_add_(0, flat_experts, torch.ones_like(flat_experts, dtype=torch.int32))
    return counts


@torch.no_grad()
def _get_routing_indices_fixed(selected_experts, num_experts):
    flat_experts = selected_experts.view(-1)
    token_counts_by_expert = count_tokens_per_expert(flat_experts, num_experts)
    gather_indices = flat_experts.argsort(stable=True)
    return token_counts_by_expert, gather_indices


def _grouped_mm(x, w, row_experts, offs):
    # stand-in for torch._grouped_mm(x, w, offs=offs): rows are already sorted by expert
    return torch.bmm(x.unsqueeze(1), w[row_experts]).squeeze(1)


class GptOssExperts(nn.Module):
    def __init__(self, num_experts=8, hidden_size=32, intermediate_size=48):
        super().__init__()
        self.num_experts = num_experts
        self.gate_up_proj = nn.Parameter(torch.randn(num_experts, hidden_size, 2 * intermediate_size) * 0.05)
        self.gate_up_proj_bias = nn.Parameter(torch.randn(num_experts, 2 * intermediate_size) * 0.05)
        self.down_proj = nn.Parameter(torch.randn(num_experts, intermediate_size, hidden_size) * 0.05)
        self.down_proj_bias = nn.Parameter(torch.randn(num_experts, hidden_size) * 0.05)

    def _route(self, router_indices):
        return _get_routing_indices(router_indices, self.num_experts)

    def _expand_bias(self, bias, token_counts_by_expert, sorted_experts):
        return bias.repeat_interleave(token_counts_by_expert, dim=0)  # want: D

    def forward(self, hidden_states, router_indices, routing_weights):
        num_tokens, hidden_dim = hidden_states.shape
        top_k = router_indices.shape[-1]
        token_counts_by_expert, gather_indices = self._route(router_indices)
        offs = token_counts_by_expert.cumsum(0, dtype=torch.int32)
        sorted_experts = router_indices.view(-1)[gather_indices]
        token_idx = gather_indices // top_k

        x = hidden_states[token_idx]
        gate_up = _grouped_mm(x, self.gate_up_proj, sorted_experts, offs)
        gate_up = gate_up + self._expand_bias(self.gate_up_proj_bias, token_counts_by_expert, sorted_experts)
        gate, up = gate_up.chunk(2, dim=-1)
        h = F.silu(gate) * up
        y = _grouped_mm(h, self.down_proj, sorted_experts, offs)
        y = y + self._expand_bias(self.down_proj_bias, token_counts_by_expert, sorted_experts)

        weights = routing_weights.view(-1)[gather_indices].unsqueeze(-1)
        out = torch.zeros_like(hidden_states)
        out.index_add_(0, token_idx, (y * weights).to(out.dtype))
        return out


class GptOssExpertsFixed(GptOssExperts):
    def _route(self, router_indices):
        return _get_routing_indices_fixed(router_indices, self.num_experts)

    def _expand_bias(self, bias, token_counts_by_expert, sorted_experts):
        # rows are already permuted into expert order: select each row's own bias
        return bias.index_select(0, sorted_experts)


if __name__ == "__main__":
    torch.manual_seed(0)
    num_experts, top_k, T, H = 8, 2, 64, 32
    router = nn.Linear(H, num_experts, bias=False)
    x = torch.randn(T, H)
    logits = router(x)
    routing_weights, router_indices = torch.topk(logits.softmax(-1), top_k, dim=-1)

    buggy = GptOssExperts(num_experts, H)
    fixed = GptOssExpertsFixed(num_experts, H)
    fixed.load_state_dict(buggy.state_dict())
    with torch.no_grad():
        a = buggy(x, router_indices, routing_weights)
        b = fixed(x, router_indices, routing_weights)
    c1, _ = _get_routing_indices(router_indices, num_experts)
    c2, _ = _get_routing_indices_fixed(router_indices, num_experts)
    assert torch.equal(c1, c2)
    assert torch.allclose(a, b, atol=1e-6)
    print("counts", c1.tolist(), "max |diff|", (a - b).abs().max().item())
