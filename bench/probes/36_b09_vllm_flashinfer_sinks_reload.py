# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/48251 — FlashInferImpl keeps attention sinks in float32 and its `process_weights_after_loading` did `self.sinks = self.sinks.to(torch.float32)`, replacing the reference to the model's bf16 sinks parameter with a private fp32 copy; when RL weight sync later wrote new sinks into the parameter in place and re-ran the hook, the copy was never refreshed and attention used stale sinks. The fix keeps `_sinks_source` and refreshes the runtime tensor with `self.sinks.copy_(source_sinks)`.
import torch
from torch import nn


class FlashInferImpl:
    def __init__(self, num_heads: int, sinks: torch.Tensor | None = None):
        self.num_heads = num_heads
        self.sinks: torch.Tensor | None = None
        if sinks is not None:
            if sinks.shape[0] != num_heads:
                raise ValueError("Sinks must have the same number of heads as the number of heads in the layer")
            self.sinks = sinks

    # FlashInfer requires attention sinks to be float32
    def process_weights_after_loading(self, act_dtype: torch.dtype):
        if self.sinks is not None and self.sinks.dtype != torch.float32:
            self.sinks = self.sinks.to(torch.float32)  # want: B


class FlashInferImplFixed(FlashInferImpl):
    def __init__(self, num_heads: int, sinks: torch.Tensor | None = None):
        super().__init__(num_heads, sinks)
        # Keep the source so RL weight updates can refresh the runtime tensor.
        self._sinks_source = sinks

    def process_weights_after_loading(self, act_dtype: torch.dtype):
        source_sinks = self._sinks_source
        if source_sinks is None:
            return
        if source_sinks.dtype == torch.float32:
            self.sinks = source_sinks
        elif self.sinks is None or self.sinks.dtype != torch.float32:
            self.sinks = source_sinks.to(torch.float32)
        else:
            self.sinks.copy_(source_sinks)


class Attention(nn.Module):
    def __init__(self, impl_cls, num_heads=4):
        super().__init__()
        self.sinks = nn.Parameter(torch.zeros(num_heads, dtype=torch.bfloat16), requires_grad=False)
        self.impl = impl_cls(num_heads, self.sinks)

    def process_weights_after_loading(self, act_dtype):
        self.impl.process_weights_after_loading(act_dtype)

    def load_weights(self, new_sinks: torch.Tensor):
        self.sinks.data.copy_(new_sinks)  # weight_loader writes into the existing parameter
        self.process_weights_after_loading(torch.bfloat16)


if __name__ == "__main__":
    for impl_cls in (FlashInferImpl, FlashInferImplFixed):
        attn = Attention(impl_cls)
        attn.process_weights_after_loading(torch.bfloat16)
        attn.load_weights(torch.tensor([1.0, 2.0, 3.0, 4.0]))  # RL weight sync
        runtime = attn.impl.sinks
        print(impl_cls.__name__, "runtime sinks after reload:", runtime.tolist(), runtime.dtype)
        fresh = torch.equal(runtime, attn.sinks.float())
        assert fresh == (impl_cls is FlashInferImplFixed), "buggy impl keeps the stale fp32 copy"
