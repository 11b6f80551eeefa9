# audit 2 false finding: vllm v1/attention/backends/mla/rocm_paged_mxfp4_indexer.py:432 (VL401)
# `query_start_loc = cm.query_start_loc_cpu[...]` is a host tensor; the `*_cpu` excuse only holds while the
# name keeps the suffix (the same code with `query_start_loc_cpu = ...` is silent).
import torch
from torch import nn


class Builder(nn.Module):
    def forward(self, cm, x: torch.Tensor) -> torch.Tensor:
        query_start_loc = cm.query_start_loc_cpu[: cm.num_decodes + 1]
        lens = torch.diff(query_start_loc).tolist()
        return x.new_zeros(sum(lens))
