# VL402: a memoised helper (`if key in self._cache: return self._cache[key]`) returns a tuple whose second
# element is made on the host (`torch.tensor(...)` without a device); a list of those, cat'ed and summed, is
# still on the host, so `.cpu()` is a no-op. The memo read returns what the helper's other return gives.
# Real: vllm model_executor/models/qwen2_5_vl.py:1015 (`get_rope_by_thw` -> `cu_seqlens.cpu().numpy()`).
import torch
from torch import nn


class Vision(nn.Module):
    def __init__(self):
        super().__init__()
        self.freqs = nn.Parameter(torch.randn(64, 8))
        self._cache = {}

    def rope_by_thw(self, t: int, h: int, w: int):
        key = (t, h, w)
        if key in self._cache:
            return self._cache[key]
        cos = self.freqs[: h * w].cos()
        cu = torch.repeat_interleave(torch.tensor([h * w], dtype=torch.int32), t)
        self._cache[key] = (cos, cu)
        return cos, cu

    def forward(self, x: torch.Tensor, grid: list) -> torch.Tensor:
        parts: list[torch.Tensor] = []
        for t, h, w in grid:
            cos, cu_thw = self.rope_by_thw(t, h, w)
            parts.append(cu_thw)
        cu_seqlens = torch.cumsum(torch.cat(parts), dim=0, dtype=torch.int32)
        cu_np = cu_seqlens.cpu().numpy()
        return x[: int(cu_np[-1])]
