# source: ModelTC/LightX2V https://github.com/ModelTC/LightX2V/pull/1353 — MiniMax-H3 tensor-parallel loading opened each safetensors file directly on the accelerator and stored `_select_tensor_parallel_shard(key, source.get_tensor(key))` in the weight dict. For column-parallel weights the shard is `torch.chunk(tensor, tp, dim=0)[rank].contiguous()`, which is already contiguous and therefore still a view, so every TP rank kept the full checkpoint tensor alive in accelerator memory and OOMed. The fix opens the file on CPU, shards there, and copies only the local shard to the accelerator (`_load_local_tensor`).
from contextlib import contextmanager

import torch


@contextmanager
def safe_open(checkpoint, framework="pt", device="cpu"):
    """Stand-in for safetensors.safe_open over an in-memory checkpoint."""

    class _Source:
        def keys(self):
            return list(checkpoint)

        def get_tensor(self, key):
            return checkpoint[key].clone().to(device)

    yield _Source()


class MiniMaxH3Model:
    def __init__(self, config, tp_rank, tp_size, load_device):
        self.config, self.tp_rank, self.tp_size = config, tp_rank, tp_size
        self.load_device = load_device
        self.remove_keys = []

    @staticmethod
    def _tp_split_type(key):
        if ".attn.to_q." in key or ".attn.to_k." in key or ".attn.to_v." in key:
            return "col"
        if ".attn.to_out.0." in key:
            return "row"
        return None

    def _select_tensor_parallel_shard(self, key, tensor):
        """Select this rank's checkpoint shard without materializing peers."""
        if not self.config.get("tensor_parallel", False):
            return tensor
        split_type = self._tp_split_type(key)
        if split_type is None:
            return tensor
        if split_type == "row":
            if key.endswith(".weight_scale") or tensor.ndim < 2:
                return tensor
            return torch.chunk(tensor, self.tp_size, dim=1)[self.tp_rank].contiguous()
        return torch.chunk(tensor, self.tp_size, dim=0)[self.tp_rank].contiguous()

    def _load_quant_ckpt(self, files):
        weight_dict = {}
        load_device = self.load_device
        for file_path in files:
            with safe_open(file_path, framework="pt", device=load_device) as source:
                for key in source.keys():
                    if any(remove_key in key for remove_key in self.remove_keys):
                        continue
                    weight_dict[key] = self._select_tensor_parallel_shard(key, source.get_tensor(key))  # want: A
        return weight_dict

    def _load_safetensor_to_dict(self, file_path):
        load_device = self.load_device
        with safe_open(file_path, framework="pt", device=load_device) as source:
            weight_dict = {
                key: self._select_tensor_parallel_shard(key, source.get_tensor(key))  # want: A
                for key in source.keys()
                if not any(remove_key in key for remove_key in self.remove_keys)
            }
        return weight_dict


class MiniMaxH3ModelFixed(MiniMaxH3Model):
    def _load_local_tensor(self, source, key, load_device):
        """Shard on CPU before copying only this TP rank's tensor to the accelerator."""
        tensor = self._select_tensor_parallel_shard(key, source.get_tensor(key))
        if torch.device(load_device).type != "cpu":
            tensor = tensor.to(load_device)
        return tensor

    def _load_quant_ckpt(self, files):
        weight_dict = {}
        load_device = self.load_device
        for file_path in files:
            with safe_open(file_path, framework="pt", device="cpu") as source:
                for key in source.keys():
                    if any(remove_key in key for remove_key in self.remove_keys):
                        continue
                    weight_dict[key] = self._load_local_tensor(source, key, load_device)
        return weight_dict

    def _load_safetensor_to_dict(self, file_path):
        load_device = self.load_device
        # Reading a full tensor directly on the accelerator and then slicing it
        # can retain the full safetensors storage behind a small TP view.  Shard
        # on CPU first so accelerator memory contains only this rank's weights.
        with safe_open(file_path, framework="pt", device="cpu") as source:
            weight_dict = {
                key: self._load_local_tensor(source, key, load_device)
                for key in source.keys()
                if not any(remove_key in key for remove_key in self.remove_keys)
            }
        return weight_dict


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "meta"  # meta stands in for the accelerator
    ckpt = {f"blocks.{i}.attn.{p}.weight": torch.randn(256, 64) for i in range(2) for p in ("to_q", "to_k", "to_v")}
    ckpt["blocks.0.attn.to_out.0.weight"] = torch.randn(64, 256)
    cfg = {"tensor_parallel": True}
    for cls, full in ((MiniMaxH3Model, True), (MiniMaxH3ModelFixed, False)):
        model = cls(cfg, tp_rank=1, tp_size=4, load_device=device)
        for wd in (model._load_quant_ckpt([ckpt]), model._load_safetensor_to_dict(ckpt)):
            q = wd["blocks.1.attn.to_q.weight"]
            assert q.shape == (64, 64) and q.device.type == torch.device(device).type
            view_bytes = q.numel() * q.element_size()
            if full:
                assert q.untyped_storage().nbytes() == 4 * view_bytes
            else:
                assert all(t.untyped_storage().nbytes() == t.numel() * t.element_size() for t in wd.values())
    print("ok")
