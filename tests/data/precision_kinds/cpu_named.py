# VL401/VL403: tensors sliced from a `*_cpu` field are host tensors (vllm mamba_attn.py:439, minimax indexer:256)
import torch
from torch import nn


class Builder(nn.Module):
    def forward(self, meta, x: torch.Tensor) -> torch.Tensor:
        qsl_cpu = meta.query_start_loc_cpu
        query_lens_cpu = qsl_cpu[1:] - qsl_cpu[:-1]
        decode_len = int(query_lens_cpu[0].item())
        assert torch.all((query_lens_cpu == decode_len) | (query_lens_cpu == 0))
        to_decode = query_lens_cpu == 1
        if torch.any(to_decode).item():
            x = x + 1
        return x
