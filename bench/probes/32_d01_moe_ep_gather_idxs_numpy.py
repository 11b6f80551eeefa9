# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/1019 — The DeepSeek-V3 MoE expert-parallel dispatch built `gatherd_idxs` in numpy by iterating `tokens_per_expert_group.cpu().numpy()`, a device-to-host copy and stream sync on every MoE forward; the fix ("remove numpy, avoid tolist in gatherd_idxs") builds the expert-order permutation on device.
import numpy as np
import torch
import torch.nn as nn


class MoE(nn.Module):
    def __init__(self, dim, n_routed_experts, num_experts_per_tok, ep_size=1):
        super().__init__()
        self.dim = dim
        self.n_routed_experts = n_routed_experts
        self.num_experts_per_tok = num_experts_per_tok
        self.ep_size = ep_size
        self.ep_rank = 0
        self.experts_per_rank = n_routed_experts // ep_size
        self.gate = nn.Linear(dim, n_routed_experts, bias=False)
        # grouped expert weights for the experts that live on this EP rank
        self.w1 = nn.Parameter(torch.randn(self.experts_per_rank, dim, dim) * 0.02)

    def _exchange(self, tokens_per_expert, sorted_tokens):
        # single-rank stand-in for dist.all_to_all_single(tokens_per_expert_group, tokens_per_expert)
        # and the all_to_all of the token payload
        tokens_per_expert_group = tokens_per_expert.new_empty(tokens_per_expert.shape[0])
        tokens_per_expert_group.copy_(tokens_per_expert)
        return tokens_per_expert_group, sorted_tokens

    def _expert_order(self, gathered_tokens, tokens_per_expert_group):
        gatherd_idxs = np.zeros(shape=(gathered_tokens.shape[0],), dtype=np.int32)
        s = 0
        for i, k in enumerate(tokens_per_expert_group.cpu().numpy()):  # want: D
            gatherd_idxs[s : s + k] = i % self.experts_per_rank
            s += k
        expert_of_slot = torch.from_numpy(gatherd_idxs).long()
        gatherd_idxs = torch.from_numpy(gatherd_idxs.argsort(kind="stable")).long()
        return gatherd_idxs.to(gathered_tokens.device), expert_of_slot[gatherd_idxs].to(gathered_tokens.device)

    def moe_on_device(self, x, topk_ids, topk_weight):
        cnts = topk_ids.new_zeros((topk_ids.shape[0], self.n_routed_experts))
        cnts.scatter_(1, topk_ids, 1)
        tokens_per_expert = cnts.sum(dim=0)
        idxs = topk_ids.view(-1).argsort()
        sorted_tokens = x[idxs // topk_ids.shape[1]]

        tokens_per_expert_group, gathered_tokens = self._exchange(tokens_per_expert, sorted_tokens)
        gatherd_idxs, expert_ids = self._expert_order(gathered_tokens, tokens_per_expert_group)
        sorted_tokens = gathered_tokens[gatherd_idxs]

        # grouped expert matmul (one weight per routed slot)
        expert_out = torch.bmm(sorted_tokens.unsqueeze(1), self.w1[expert_ids]).squeeze(1)
        outs = torch.empty_like(expert_out)
        outs[gatherd_idxs] = expert_out

        new_x = torch.empty_like(outs)
        new_x[idxs] = outs
        final_out = (
            new_x.view(*topk_ids.shape, -1)
            .type(topk_weight.dtype)
            .mul_(topk_weight.unsqueeze(dim=-1))
            .sum(dim=1)
            .type(new_x.dtype)
        )
        return final_out

    def forward(self, hidden_states):
        orig_shape = hidden_states.shape
        x = hidden_states.view(-1, self.dim)
        scores = self.gate(x).softmax(dim=-1)
        topk_weight, topk_ids = torch.topk(scores, k=self.num_experts_per_tok, dim=-1)
        y = self.moe_on_device(x, topk_ids, topk_weight)
        return y.view(*orig_shape)


class MoEFixed(MoE):
    def _expert_order(self, gathered_tokens, tokens_per_expert_group):
        # expert id of every received slot, computed on device; the total number of
        # received tokens is already known on the host (it sized gathered_tokens)
        slot_expert = torch.arange(
            tokens_per_expert_group.shape[0], device=tokens_per_expert_group.device
        ) % self.experts_per_rank
        expert_of_slot = torch.repeat_interleave(
            slot_expert, tokens_per_expert_group, output_size=gathered_tokens.shape[0]
        )
        gatherd_idxs = expert_of_slot.argsort(stable=True)
        return gatherd_idxs, expert_of_slot[gatherd_idxs]


if __name__ == "__main__":
    torch.manual_seed(0)
    ref = MoE(dim=16, n_routed_experts=8, num_experts_per_tok=2)
    fixed = MoEFixed(dim=16, n_routed_experts=8, num_experts_per_tok=2)
    fixed.load_state_dict(ref.state_dict())
    h = torch.randn(2, 32, 16)
    a = ref(h)
    b = fixed(h)
    torch.testing.assert_close(a, b)
    print("moe outputs match:", tuple(a.shape))
