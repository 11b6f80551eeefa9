# source: NVIDIA-NeMo/RL https://github.com/NVIDIA-NeMo/RL/pull/1660 — NeMo-RL patches vLLM's FP8 block-quant `process_weights_after_loading` so that weights can be refit every RL step without creating new Parameters. On every refit after the first it did `layer.weight_scale.data = weight_scale.data`, which re-points the Parameter at another tensor's storage instead of updating the storage that vLLM's captured CUDA graphs / kernels read, so the refreshed scales never reached the engine. The fix writes through `layer.weight_scale.copy_(weight_scale.data)`.
import torch


def process_fp8_weight_block_strategy(weight, weight_scale):
    # non-fnuz platforms return the loaded tensors unchanged
    return weight, weight_scale


class FakeLinearLayer(torch.nn.Module):
    def __init__(self, out_f, in_f, block=2):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(out_f, in_f), requires_grad=False)
        self.weight_scale_inv = torch.nn.Parameter(torch.ones(out_f // block, in_f // block), requires_grad=False)

    def update_param_tp_status(self):
        pass


class CapturedGraph:
    """Stand-in for a captured CUDA graph."""

    def __init__(self, layer):
        self.weight_scale = layer.weight_scale.detach()

    def replay_scale_sum(self):
        return self.weight_scale.sum().item()


def process_weights_after_loading(self, layer) -> None:
    weight_scale = layer.weight_scale_inv
    weight, weight_scale = process_fp8_weight_block_strategy(layer.weight, weight_scale)
    layer.weight.data = weight.data
    if hasattr(layer, "weight_scale"):
        # Not the first time to call this function, just need to update the data
        layer.weight_scale.data = weight_scale.data  # want: B
    else:
        # The first time to call this function, create a new parameter and update the tp status
        layer.weight_scale = torch.nn.Parameter(weight_scale.data.clone(), requires_grad=False)
        layer.update_param_tp_status()


def process_weights_after_loading_fixed(self, layer) -> None:
    weight_scale = layer.weight_scale_inv
    weight, weight_scale = process_fp8_weight_block_strategy(layer.weight, weight_scale)
    layer.weight.data = weight.data
    if hasattr(layer, "weight_scale"):
        # Not the first time to call this function, just need to update the data
        layer.weight_scale.copy_(weight_scale.data)
    else:
        # The first time to call this function, create a new parameter and update the tp status
        layer.weight_scale = torch.nn.Parameter(weight_scale.data.clone(), requires_grad=False)
        layer.update_param_tp_status()


def refit(process_fn):
    layer = FakeLinearLayer(4, 4)
    process_fn(None, layer)
    graph = CapturedGraph(layer)
    with torch.no_grad():
        layer.weight_scale_inv.fill_(3.0)
        process_fn(None, layer)
    return graph


if __name__ == "__main__":
    assert refit(process_weights_after_loading).replay_scale_sum() == 4.0
    assert refit(process_weights_after_loading_fixed).replay_scale_sum() == 12.0
    print("ok")
