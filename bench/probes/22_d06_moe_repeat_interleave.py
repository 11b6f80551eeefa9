# source: pytorch/torchtitan PR #3274 — MoE token dispatch called torch.repeat_interleave(expert ids, num_tokens_per_expert) without output_size, so ATen read cumsum[-1].item(): a cudaStreamSynchronize per MoE layer per step (192 -> 36 syncs)
import torch
import torch.nn.functional as F
from torch import nn


class TopKRouter(nn.Module):
    def __init__(self, dim: int, num_experts: int, top_k: int):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.num_experts = num_experts
        self.top_k = top_k

    def forward(self, x):
        scores = torch.sigmoid(self.gate(x).float())
        top_scores, selected = torch.topk(scores, k=self.top_k, dim=-1)
        counts = torch.histc(selected.view(-1).float(), bins=self.num_experts, min=0, max=self.num_experts - 1)
        return top_scores, selected, counts.long()


class Experts(nn.Module):
    def __init__(self, dim: int, hidden: int, num_experts: int, use_for_loop: bool = False):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * 0.02)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.02)
        self.use_for_loop = use_for_loop

    def forward(self, x, expert_of_row, num_tokens_per_expert):
        if self.use_for_loop:
            sizes = num_tokens_per_expert.tolist()  # want: D
            outs = []
            for e, chunk in enumerate(torch.split(x, sizes, dim=0)):
                outs.append(F.silu(chunk @ self.w1[e]) @ self.w2[e])
            return torch.cat(outs, dim=0)
        h = F.silu(torch.bmm(x.unsqueeze(1), self.w1[expert_of_row]))
        return torch.bmm(h, self.w2[expert_of_row]).squeeze(1)


class MoELayer(nn.Module):
    def __init__(self, dim=32, hidden=64, num_experts=8, top_k=2, use_for_loop=False):
        super().__init__()
        self.router = TopKRouter(dim, num_experts, top_k)
        self.experts = Experts(dim, hidden, num_experts, use_for_loop)
        self.top_k = top_k
        self.register_buffer("expert_ids", torch.arange(num_experts), persistent=False)
        # built once: int repeats, on a buffer, at construction
        self.register_buffer("slot_of_expert", torch.repeat_interleave(torch.arange(num_experts), 2), persistent=False)

    def forward(self, x):
        bs, slen, dim = x.shape
        x = x.reshape(-1, dim)
        top_scores, selected, num_tokens_per_expert = self.router(x)
        order = torch.argsort(selected.view(-1), stable=True)
        token_idx = order // self.top_k
        routed = x[token_idx]  # integer gather: no sync
        expert_of_row = torch.repeat_interleave(self.expert_ids, num_tokens_per_expert)  # want: D
        out = self.experts(routed, expert_of_row, num_tokens_per_expert)
        out = out * top_scores.view(-1)[order].unsqueeze(-1).to(out.dtype)
        y = torch.zeros_like(x).index_add_(0, token_idx, out)
        return y.view(bs, slen, dim)


class MoELayerNoSync(MoELayer):
    def forward(self, x):
        bs, slen, dim = x.shape
        x = x.reshape(-1, dim)
        top_scores, selected, num_tokens_per_expert = self.router(x)
        order = torch.argsort(selected.view(-1), stable=True)
        token_idx = order // self.top_k
        total = x.shape[0] * self.top_k  # known on the host
        expert_of_row = torch.repeat_interleave(self.expert_ids, num_tokens_per_expert, output_size=total)
        dup = torch.repeat_interleave(x, self.top_k, dim=0)  # python-int repeats: no sync
        routed = dup[order]
        out = self.experts(routed, expert_of_row, num_tokens_per_expert)
        out = out * top_scores.view(-1)[order].unsqueeze(-1).to(out.dtype)
        return torch.zeros_like(x).index_add_(0, token_idx, out).view(bs, slen, dim)


def train_step(model, batch, opt):
    out = model(batch)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls, loop in ((MoELayer, False), (MoELayer, True), (MoELayerNoSync, False)):
        m = cls(use_for_loop=loop)
        print(cls.__name__, train_step(m, torch.randn(2, 5, 32), torch.optim.SGD(m.parameters(), lr=0.1)))
