# audit 2 false finding: vllm model_executor/layers/quantization/modelopt_block_quant.py:427 (VL301)
# `apply(self, layer, x)` is a framework entry point (LinearMethod.apply, called by vLLM's linear layers
# with any activation, e.g. a column slice of a fused qkv output); the only in-file call is a warm-up
# with `torch.zeros(...)`. viewlint takes x's layout from that single call site, calls the
# `.contiguous()` a no-op, and offers a fix (safe [*]) that breaks non-contiguous callers.
# Without the warm-up method the same `apply` is not flagged.
import torch


class BlockMethod:
    def warmup(self, layer):
        source = torch.zeros((4, 8))
        self.apply(layer, source)

    def apply(self, layer, x, bias=None):
        return layer.mm(x.reshape(-1, x.shape[-1]).contiguous())
