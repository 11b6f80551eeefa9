# source: NVIDIA/TransformerEngine https://github.com/NVIDIA/TransformerEngine/commit/f3d8a560cd1eb16816bf3f0dc98db358d6e997d2 — The DumpTensors debug feature put `tensor.detach()` / `quantized_tensor.detach()` into the dump dict that TensorLogger.save_tensor hands to torch.save. detach() only makes another view sharing the inspected tensor's storage, so the dump aliases (and serializes) whatever backing buffer the activation lives in, and later in-place changes to that buffer could corrupt what was captured. The fix (commit "use detach().clone() to avoid shared storage in DumpTensors") dumps `.detach().clone()` so the saved tensors own an independent copy.
import os
import tempfile
from typing import Dict, Optional

import torch


class TensorLogger:
    """Logger for saving tensors to files. Each rank saves to its own directory."""

    _instance = None
    _initialized = False

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __init__(self):
        if TensorLogger._initialized:
            return
        self.root_dir = None
        TensorLogger._initialized = True

    def initialize(self, root_log_dir: str):
        self.root_dir = os.path.join(root_log_dir, "tensor_dumps", "rank_0")
        os.makedirs(self.root_dir, exist_ok=True)

    def save_tensor(self, tensor, layer_name: str, tensor_name: str, iteration: int):
        iter_dir = os.path.join(self.root_dir, f"iter_{iteration:06d}")
        os.makedirs(iter_dir, exist_ok=True)
        filepath = os.path.join(iter_dir, f"{layer_name}_{tensor_name}.pt")
        torch.save(tensor, filepath)
        return filepath


def _get_tensor_logger() -> TensorLogger:
    return TensorLogger()


class DumpTensors:
    def inspect_tensor(self, config: Dict, layer_name: str, tensor_name: str, iteration: int,
                       tensor: Optional[torch.Tensor], quantized_tensor: Optional[torch.Tensor] = None):
        dump_hp = config.get("high_precision_tensor", False)
        dump_quant = config.get("quantized_tensor", False)
        tensor_logger = _get_tensor_logger()

        # Build dictionary with all tensors to dump
        dump_dict: Dict[str, torch.Tensor] = {}
        if dump_hp and tensor is not None:
            dump_dict["high_precision"] = tensor.detach()  # want: A
        if dump_quant and quantized_tensor is not None:
            dump_dict["quantized"] = quantized_tensor.detach()  # want: A

        if dump_dict:
            return tensor_logger.save_tensor(
                tensor=dump_dict, layer_name=layer_name, tensor_name=tensor_name, iteration=iteration
            )
        return None


class DumpTensorsFixed(DumpTensors):
    def inspect_tensor(self, config: Dict, layer_name: str, tensor_name: str, iteration: int,
                       tensor: Optional[torch.Tensor], quantized_tensor: Optional[torch.Tensor] = None):
        dump_hp = config.get("high_precision_tensor", False)
        dump_quant = config.get("quantized_tensor", False)
        tensor_logger = _get_tensor_logger()

        dump_dict: Dict[str, torch.Tensor] = {}
        if dump_hp and tensor is not None:
            dump_dict["high_precision"] = tensor.detach().clone()
        if dump_quant and quantized_tensor is not None:
            dump_dict["quantized"] = quantized_tensor.detach().clone()

        if dump_dict:
            return tensor_logger.save_tensor(
                tensor=dump_dict, layer_name=layer_name, tensor_name=tensor_name, iteration=iteration
            )
        return None


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = {"high_precision_tensor": True, "quantized_tensor": True}
    # the inspected activation is one micro-batch slice of a larger workspace buffer
    workspace = torch.randn(16, 64, 128)
    activation = workspace[2]
    q_workspace = torch.randint(-128, 127, (16, 64, 128), dtype=torch.int8)
    quantized = q_workspace[2]

    with tempfile.TemporaryDirectory() as d:
        _get_tensor_logger().initialize(d)
        bad = DumpTensors().inspect_tensor(cfg, "fc1", "activation", 0, activation, quantized)
        good = DumpTensorsFixed().inspect_tensor(cfg, "fc1", "activation", 1, activation, quantized)
        bad_size, good_size = os.path.getsize(bad), os.path.getsize(good)
        loaded = torch.load(good)
        assert torch.equal(loaded["high_precision"], activation)
        assert torch.equal(loaded["quantized"], quantized)
        own = activation.numel() * activation.element_size()
        assert torch.load(bad)["high_precision"].untyped_storage().nbytes() == workspace.numel() * 4
        assert good_size < own * 2 and bad_size > own * 10, (bad_size, good_size)

    # the view kept in the dump shares storage with the live activation buffer
    assert activation.detach().untyped_storage().nbytes() > own
    print("ok")
