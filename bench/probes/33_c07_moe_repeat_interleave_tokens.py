# source: Lightning-AI/litgpt https://github.com/Lightning-AI/litgpt/pull/823 — LLaMAMoE.forward duplicated every token n_expert_per_token times with x.repeat_interleave(...) and allocated a matching (B*T*k, C) output before weighting and summing; the switched implementation keeps x as (B*T, C), gathers each expert's tokens by index and accumulates weighted outputs into a single zeros_like(x).
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Config:
    n_embd: int = 64
    intermediate_size: int = 128
    n_expert: int = 8
    n_expert_per_token: int = 2


class LLaMAMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc_1 = nn.Linear(config.n_embd, config.intermediate_size, bias=False)
        self.fc_2 = nn.Linear(config.n_embd, config.intermediate_size, bias=False)
        self.proj = nn.Linear(config.intermediate_size, config.n_embd, bias=False)

    def forward(self, x):
        return self.proj(nn.functional.silu(self.fc_1(x)) * self.fc_2(x))


class LLaMAMoE(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate = nn.Linear(config.n_embd, config.n_expert, bias=False)
        self.experts = nn.ModuleList(LLaMAMLP(config) for _ in range(config.n_expert))
        self.config = config

    def forward(self, x):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)
        x = x.view(-1, C)  # (B*T, C)
        router = self.gate(x)  # (B*T, n_expert)
        probs, indices = torch.topk(router, self.config.n_expert_per_token, dim=-1)
        probs = probs.softmax(dim=-1)  # (B*T, n_expert_per_token)
        indices = indices.flatten()  # (B*T*n_expert_per_token)
        x = x.repeat_interleave(self.config.n_expert_per_token, dim=0)  # want: C
        y = torch.empty_like(x)  # maybe: C ((B*T*k, C) buffer sized by the duplicated tokens)
        for i, expert in enumerate(self.experts):
            mask = indices == i
            y[mask] = expert(x[mask])  # maybe: D (boolean-mask indexing; unchanged class, not the fixed bug)
        y = (y.view(*probs.shape, -1) * probs.unsqueeze(-1)).sum(dim=1)
        return y.view(B, T, C)


class LLaMAMoEFixed(LLaMAMoE):
    def forward(self, x):
        B, T, C = x.size()
        x = x.view(-1, C)  # (B*T, C)
        router = self.gate(x)  # (B*T, n_expert)
        probs, indices = torch.topk(router, self.config.n_expert_per_token)  # (B*T, n_expert_per_token)
        probs = probs.softmax(dim=1, dtype=torch.float).to(dtype=x.dtype)
        y = torch.zeros_like(x)  # (B*T, C)
        for i, expert in enumerate(self.experts):
            mask = indices == i
            token_idx, expert_idx = torch.where(mask)
            y[token_idx] += probs[token_idx, expert_idx, None] * expert(x[token_idx])
        return y.view(B, T, C)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = Config()
    buggy = LLaMAMoE(cfg)
    fixed = LLaMAMoEFixed(cfg)
    fixed.load_state_dict(buggy.state_dict())
    x = torch.randn(4, 64, cfg.n_embd)
    with torch.no_grad():
        y_b = buggy(x)
        y_f = fixed(x)
    assert torch.allclose(y_b, y_f, atol=1e-5)
    flat = x.view(-1, cfg.n_embd)
    dup = flat.repeat_interleave(cfg.n_expert_per_token, dim=0)
    print("token activations:", flat.untyped_storage().nbytes(), "bytes;",
          "buggy duplicates them into", dup.untyped_storage().nbytes(), "bytes (+ same-size y)")
