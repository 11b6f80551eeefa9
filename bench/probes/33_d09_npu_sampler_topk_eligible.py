# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/39404 — the Ascend sampling path decided per decode step whether the fused top-k/top-p kernel applies with `if torch.all((top_ks <= 1024) & (top_ks >= 1)):` on the device-resident top_ks, an implicit device-to-host sync on every sampled token; the fix computes a host-side npu_top_k_top_p_eligible flag from the request parameters when the batch is built (AND-merged across batches).
from dataclasses import dataclass
from typing import List

import torch
import torch.nn as nn

TOP_K_ALL = 1 << 30


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = TOP_K_ALL


@dataclass
class Req:
    sampling_params: SamplingParams


@dataclass
class SamplingBatchInfo:
    temperatures: torch.Tensor
    top_ps: torch.Tensor
    top_ks: torch.Tensor
    is_all_greedy: bool
    npu_top_k_top_p_eligible: bool = False

    @classmethod
    def from_schedule_batch(cls, reqs: List[Req], device):
        temperatures = torch.tensor([r.sampling_params.temperature for r in reqs], dtype=torch.float32, device=device).view(-1, 1)
        top_ps = torch.tensor([r.sampling_params.top_p for r in reqs], dtype=torch.float32, device=device)
        top_ks = torch.tensor([r.sampling_params.top_k for r in reqs], dtype=torch.int32, device=device)
        return cls(
            temperatures=temperatures,
            top_ps=top_ps,
            top_ks=top_ks,
            is_all_greedy=all(r.sampling_params.top_k <= 1 for r in reqs),
            npu_top_k_top_p_eligible=all(1 <= r.sampling_params.top_k <= 1024 for r in reqs),
        )

    def merge_batch(self, other):
        self.temperatures = torch.cat([self.temperatures, other.temperatures])
        self.top_ps = torch.cat([self.top_ps, other.top_ps])
        self.top_ks = torch.cat([self.top_ks, other.top_ks])
        self.is_all_greedy &= other.is_all_greedy
        self.npu_top_k_top_p_eligible &= other.npu_top_k_top_p_eligible


def npu_top_k_top_p(logits, top_ps, top_ks):
    # stand-in for torch_npu.npu_top_k_top_p: only valid for 1 <= k <= 1024
    vals, idx = logits.topk(1024 if logits.shape[-1] >= 1024 else logits.shape[-1], dim=-1)
    ranks = torch.arange(vals.shape[-1], device=logits.device)
    vals = vals.masked_fill(ranks[None, :] >= top_ks[:, None], float("-inf"))
    probs = vals.softmax(-1)
    drop = (probs.cumsum(-1) - probs) > top_ps[:, None]
    vals = vals.masked_fill(drop, float("-inf"))
    return torch.full_like(logits, float("-inf")).scatter(-1, idx, vals)


def top_k_top_p_filter_torch(logits, top_ps, top_ks):
    sorted_logits, sorted_idx = logits.sort(dim=-1, descending=True)
    ranks = torch.arange(logits.shape[-1], device=logits.device)
    sorted_logits = sorted_logits.masked_fill(ranks[None, :] >= top_ks[:, None], float("-inf"))
    probs = sorted_logits.softmax(-1)
    sorted_logits = sorted_logits.masked_fill((probs.cumsum(-1) - probs) > top_ps[:, None], float("-inf"))
    return torch.empty_like(logits).scatter_(-1, sorted_idx, sorted_logits)


class Sampler(nn.Module):
    def forward(self, logits, sampling_info, generator=None):
        if sampling_info.is_all_greedy:
            return torch.argmax(logits, -1)
        logits = logits / sampling_info.temperatures
        top_ks, top_ps = sampling_info.top_ks, sampling_info.top_ps
        if torch.all((top_ks <= 1024) & (top_ks >= 1)):  # want: D
            logits = npu_top_k_top_p(logits, top_ps, top_ks)
        else:
            logits = top_k_top_p_filter_torch(logits, top_ps, top_ks)
        probs = logits.softmax(-1)
        return torch.multinomial(probs, num_samples=1, generator=generator).view(-1)


class SamplerFixed(Sampler):
    def forward(self, logits, sampling_info, generator=None):
        if sampling_info.is_all_greedy:
            return torch.argmax(logits, -1)
        logits = logits / sampling_info.temperatures
        top_ks, top_ps = sampling_info.top_ks, sampling_info.top_ps
        if sampling_info.npu_top_k_top_p_eligible:
            logits = npu_top_k_top_p(logits, top_ps, top_ks)
        else:
            logits = top_k_top_p_filter_torch(logits, top_ps, top_ks)
        probs = logits.softmax(-1)
        return torch.multinomial(probs, num_samples=1, generator=generator).view(-1)


def decode(sampler, steps=8):
    torch.manual_seed(0)
    reqs = [Req(SamplingParams(0.7, 0.9, 40)), Req(SamplingParams(1.0, 0.8, 200)), Req(SamplingParams(0.9, 0.95, 8))]
    info = SamplingBatchInfo.from_schedule_batch(reqs, device="cpu")
    lm_head = nn.Linear(32, 2048)
    g = torch.Generator().manual_seed(1)
    h = torch.randn(3, 32)
    out = []
    with torch.no_grad():
        for _ in range(steps):
            tok = sampler(lm_head(h), info, generator=g)
            out.append(tok)
            h = torch.tanh(h + 0.01 * tok.unsqueeze(-1).float())
    return torch.stack(out, 1)


if __name__ == "__main__":
    a = decode(Sampler())
    b = decode(SamplerFixed())
    assert torch.equal(a, b)
    print(a.tolist())
