# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/11267 — `[TRTLLM-9771] Make update_weights compatible with CUDA Graph`: the helper that swaps a transformed weight into a module registered a brand-new nn.Parameter on every update, so a CUDA graph captured after the first load kept reading the previous parameter's storage. The PR keeps the Parameter saved in the metadata dict on the first call and, on subsequent calls, does `saved_param.data.copy_(new_param.data)` instead of registering a new one.
import torch
from torch import nn


def replace_parameter_and_save_metadata(module: nn.Module, param_name: str, new_param, metadata_dict: dict):
    original_meta = getattr(module, param_name).to("meta")
    if isinstance(new_param, torch.nn.Parameter):
        saved_param = new_param
    elif isinstance(new_param, torch.Tensor):
        saved_param = torch.nn.Parameter(new_param, requires_grad=False)
    else:
        raise ValueError(f"Invalid type {type(new_param)} for new_param")
    metadata_dict[param_name] = {"meta": original_meta, "param": saved_param}
    module.register_parameter(param_name, saved_param)  # want: B


def replace_parameter_and_save_metadata_fixed(module: nn.Module, param_name: str, new_param, metadata_dict: dict):
    if param_name not in metadata_dict:
        original_meta = getattr(module, param_name).to("meta")
        if isinstance(new_param, torch.nn.Parameter):
            saved_param = new_param
        elif isinstance(new_param, torch.Tensor):
            saved_param = torch.nn.Parameter(new_param, requires_grad=False)
        else:
            raise ValueError(f"Invalid type {type(new_param)} for new_param")
        metadata_dict[param_name] = {"meta": original_meta, "param": saved_param}
        module.register_parameter(param_name, saved_param)
    else:
        saved_param = metadata_dict[param_name]["param"]
        if isinstance(new_param, torch.nn.Parameter):
            saved_param.data.copy_(new_param.data)
        elif isinstance(new_param, torch.Tensor):
            saved_param.data.copy_(new_param)
        else:
            raise ValueError(f"Invalid type {type(new_param)} for new_param")


class FP8Linear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features), requires_grad=False)
        self.weight_scale = nn.Parameter(torch.ones(1), requires_grad=False)
        self.rebuild_tensor_metadata = {}

    def post_load_weights(self, loaded_weight, replace_fn):
        amax = loaded_weight.abs().amax().clamp(min=1e-12)
        scale = (amax / 448.0).reshape(1)
        replace_fn(self, "weight", loaded_weight / scale, self.rebuild_tensor_metadata)
        replace_fn(self, "weight_scale", scale, self.rebuild_tensor_metadata)


def load_weights(module, weight, replace_fn):
    with torch.no_grad():
        module.post_load_weights(weight, replace_fn)


if __name__ == "__main__":
    for fn, expect_stale in ((replace_parameter_and_save_metadata, True), (replace_parameter_and_save_metadata_fixed, False)):
        torch.manual_seed(0)
        layer = FP8Linear(6, 4)
        load_weights(layer, torch.randn(4, 6), fn)
        graph_weight, graph_scale = layer.weight, layer.weight_scale  # captured by the graph
        snapshot = graph_weight.detach().clone()
        load_weights(layer, torch.randn(4, 6) * 3, fn)
        assert not torch.equal(layer.weight.detach(), snapshot)
        assert torch.equal(graph_weight.detach(), snapshot) == expect_stale
        assert (graph_scale is layer.weight_scale) == (not expect_stale)
    print("ok")
