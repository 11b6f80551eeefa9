# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/52657 — When planning FlashInfer's ragged prefill for MLA on every step, vLLM passed the device `query_start_loc` as `qo_indptr`; FlashInfer's planner needs the offsets on the host and calls `.to("cpu")` on it, a device-to-host copy and sync in per-step attention metadata preparation. The PR threads the already available host-side prefill query offsets through `MLACommonPrefillMetadata` (`query_start_loc_cpu`) and passes those as `qo_indptr`, so planning reads no device memory.
from dataclasses import dataclass
from typing import Optional

import torch


class BatchPrefillWithRaggedKVCacheWrapper:
    """Stand-in for flashinfer.prefill.BatchPrefillWithRaggedKVCacheWrapper."""

    def __init__(self, workspace_buffer: torch.Tensor):
        self._workspace = workspace_buffer
        self._plan_info = None

    def plan(self, qo_indptr, kv_indptr, num_qo_heads, num_kv_heads, head_dim_qk, causal=True):
        qo_indptr_host = qo_indptr.to("cpu")  # want: D
        kv_indptr_host = kv_indptr.to("cpu")  # maybe: D (same host read for kv_indptr)
        qo_lens = (qo_indptr_host[1:] - qo_indptr_host[:-1]).tolist()
        kv_lens = (kv_indptr_host[1:] - kv_indptr_host[:-1]).tolist()
        self._plan_info = (qo_lens, kv_lens, num_qo_heads, num_kv_heads, head_dim_qk, causal)
        return self._plan_info


@dataclass
class MLACommonPrefillMetadata:
    block_table: torch.Tensor
    query_start_loc: torch.Tensor
    max_query_len: int
    query_start_loc_cpu: Optional[torch.Tensor] = None


class FlashInferMLAPrefillBuilder:
    def __init__(self, num_heads: int, qk_head_dim: int):
        self.num_heads = num_heads
        self.qk_head_dim = qk_head_dim
        self._fi_prefill_main = BatchPrefillWithRaggedKVCacheWrapper(torch.empty(1024, dtype=torch.uint8))

    def build_prefill(self, query_start_loc: torch.Tensor, query_start_loc_cpu: torch.Tensor, block_table: torch.Tensor):
        prefill = MLACommonPrefillMetadata(
            block_table=block_table,
            query_start_loc=query_start_loc,
            max_query_len=int((query_start_loc_cpu[1:] - query_start_loc_cpu[:-1]).max()),
        )
        self._plan(prefill)
        return prefill

    def _plan(self, prefill: MLACommonPrefillMetadata):
        qo_indptr = prefill.query_start_loc
        return self._fi_prefill_main.plan(
            qo_indptr=qo_indptr,
            kv_indptr=qo_indptr,
            num_qo_heads=self.num_heads,
            num_kv_heads=self.num_heads,
            head_dim_qk=self.qk_head_dim,
            causal=True,
        )


class FlashInferMLAPrefillBuilderFixed(FlashInferMLAPrefillBuilder):
    def build_prefill(self, query_start_loc: torch.Tensor, query_start_loc_cpu: torch.Tensor, block_table: torch.Tensor):
        prefill = MLACommonPrefillMetadata(
            block_table=block_table,
            query_start_loc=query_start_loc,
            max_query_len=int((query_start_loc_cpu[1:] - query_start_loc_cpu[:-1]).max()),
            query_start_loc_cpu=query_start_loc_cpu,
        )
        self._plan(prefill)
        return prefill

    def _plan(self, prefill: MLACommonPrefillMetadata):
        qo_indptr = prefill.query_start_loc_cpu
        return self._fi_prefill_main.plan(
            qo_indptr=qo_indptr,
            kv_indptr=qo_indptr,
            num_qo_heads=self.num_heads,
            num_kv_heads=self.num_heads,
            head_dim_qk=self.qk_head_dim,
            causal=True,
        )


if __name__ == "__main__":
    qsl_cpu = torch.tensor([0, 5, 12, 20], dtype=torch.int32)
    qsl = qsl_cpu.clone()  # the device copy in the real engine
    block_table = torch.arange(12).view(3, 4)
    a = FlashInferMLAPrefillBuilder(16, 192)
    b = FlashInferMLAPrefillBuilderFixed(16, 192)
    pa = a.build_prefill(qsl, qsl_cpu, block_table)
    pb = b.build_prefill(qsl, qsl_cpu, block_table)
    assert a._fi_prefill_main._plan_info == b._fi_prefill_main._plan_info
    assert pa.max_query_len == pb.max_query_len == 8
    print("ok", a._fi_prefill_main._plan_info[0])
