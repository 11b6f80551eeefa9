# VL401: a buffer made with `device=t.device` where `t` is a host tensor (`meta.seq_lens.cpu()` sliced)
# is on the host; `.item()` of it is no sync (vllm rocm_aiter_fa.py:750)
import torch
from torch import nn


class Builder(nn.Module):
    def forward(self, meta, n: int) -> torch.Tensor:
        seq_lens = meta.seq_lens.cpu()
        ext = seq_lens[1:]
        cu = torch.zeros(n + 1, dtype=torch.int32, device=ext.device)
        torch.cumsum(ext, dim=0, out=cu[1:])
        total = cu[-1].item()
        return meta.x[:total]
