# VL401: an elementwise op of an unknown-device tensor with a host (non-0-dim) tensor must be on the host
# (torch refuses to mix a CUDA tensor with a non-scalar CPU tensor), so `.item()` of it is no sync.
# Real: vllm v1/attention/backends/mamba_attn.py:439 (`is_prefilling & (seq_lens_cpu > query_lens_cpu)`),
# rocm_aiter_fa.py:764 (`seq_lens[s] - query_lens_cpu[s]`, unsampled), :801 (min with a CPU `arange`, unsampled).
import torch
from torch import nn


class Builder(nn.Module):
    def forward(self, meta) -> torch.Tensor:
        is_prefilling = meta.is_prefilling
        seq_lens_cpu = meta.seq_lens_cpu
        query_lens_cpu = torch.diff(meta.query_start_loc_cpu)
        rows = is_prefilling & (seq_lens_cpu > query_lens_cpu)
        if torch.any(rows).item():
            return meta.x * 2
        return meta.x
