# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/7473 — AscendMLAImpl.process_weights_after_loading rebuilt the absorbed MLA weights as `self.W_UV = W_UV.transpose(0, 1).contiguous()` / `self.W_UK_T = W_UK.permute(1, 2, 0).contiguous()`; `.contiguous()` allocates fresh storage on every call, so after an RL weight update the re-processed weights landed in new tensors while the captured ACL graph kept reading the old addresses (stale weights). The fix creates them once and afterwards does `self.W_UV.copy_(...)` / `self.W_UK_T.copy_(...)`.
import torch
from torch import nn


class AscendMLAImpl:
    def __init__(self, kv_b_proj: nn.Linear, kv_lora_rank=4, num_heads=2, qk_nope_head_dim=3, v_head_dim=2):
        self.kv_b_proj = kv_b_proj
        self.kv_lora_rank, self.num_heads = kv_lora_rank, num_heads
        self.qk_nope_head_dim, self.v_head_dim = qk_nope_head_dim, v_head_dim

    def _split_kv_b_proj(self):
        kv_b_proj_weight = self.kv_b_proj.weight.data.T  # npu_format_cast(..., ND).T on NPU
        kv_b_proj_weight = kv_b_proj_weight.view(
            self.kv_lora_rank, self.num_heads, self.qk_nope_head_dim + self.v_head_dim)
        return kv_b_proj_weight.split([self.qk_nope_head_dim, self.v_head_dim], dim=-1)

    def process_weights_after_loading(self, act_dtype: torch.dtype):
        W_UK, W_UV = self._split_kv_b_proj()
        # Convert from (L, N, V) to (N, L, V)
        self.W_UV = W_UV.transpose(0, 1).contiguous()  # want: B
        # Convert from (L, N, P) to (N, P, L)
        self.W_UK_T = W_UK.permute(1, 2, 0).contiguous()  # want: B


class AscendMLAImplFixed(AscendMLAImpl):
    def process_weights_after_loading(self, act_dtype: torch.dtype):
        W_UK, W_UV = self._split_kv_b_proj()
        # NOTE: making a non-contiguous weight contiguous allocates a new address; in graph + RL
        # the graph is captured once, so copy into the original address after the first time.
        if not hasattr(self, "W_UV"):
            self.W_UV = W_UV.transpose(0, 1).contiguous()
            self.W_UK_T = W_UK.permute(1, 2, 0).contiguous()
        else:
            self.W_UV.copy_(W_UV.transpose(0, 1).contiguous())
            self.W_UK_T.copy_(W_UK.permute(1, 2, 0).contiguous())


def capture_graph(impl):
    # an ACL/CUDA graph records the tensor addresses it reads at capture time
    return {"W_UV": impl.W_UV, "W_UK_T": impl.W_UK_T}


if __name__ == "__main__":
    for cls in (AscendMLAImpl, AscendMLAImplFixed):
        torch.manual_seed(0)
        kv_b_proj = nn.Linear(4, 2 * (3 + 2), bias=False)
        impl = cls(kv_b_proj)
        impl.process_weights_after_loading(torch.float32)
        graph = capture_graph(impl)
        with torch.no_grad():
            kv_b_proj.weight.add_(100.0)  # RL update_weights writes the new checkpoint in place
        impl.process_weights_after_loading(torch.float32)
        fresh = torch.equal(graph["W_UV"], impl.W_UV) and torch.equal(graph["W_UK_T"], impl.W_UK_T)
        print(cls.__name__, "graph sees updated weights:", fresh,
              "| same address:", graph["W_UV"].data_ptr() == impl.W_UV.data_ptr())
        assert fresh == (cls is AscendMLAImplFixed)
