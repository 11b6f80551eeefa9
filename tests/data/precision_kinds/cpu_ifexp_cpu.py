# audit 2 false finding: vllm v1/attention/backends/rocm_aiter_fa.py:740 (also :749/:750/:764/:801) (VL401)
# `seq_lens = meta.seq_lens.cpu() if cond else None` is a host tensor (or None); the audit-1 repro with a plain
# `seq_lens = meta.seq_lens.cpu()` is now silent, the conditional-expression form still fires.
import torch
from torch import nn


class Builder(nn.Module):
    def forward(self, meta, n: int) -> torch.Tensor:
        seq_lens = meta.seq_lens.cpu() if n > 0 else None
        assert seq_lens is not None
        ext = seq_lens[1:]
        cu = torch.zeros(n + 1, dtype=torch.int32, device=ext.device)
        torch.cumsum(ext, dim=0, out=cu[1:])
        total = cu[-1].item()
        return meta.x[:total]
