# source: ModelTC/LightX2V https://github.com/ModelTC/LightX2V/pull/1390 — the MiniMax-H3 TP loader kept `torch.chunk(tensor, tp_size, dim=0)[tp_rank].contiguous()` as the rank-local weight; a dim-0 chunk is already contiguous, so `.contiguous()` returned the view and every rank kept the complete checkpoint tensor's storage alive; the fix materialises the shard with `.clone(memory_format=torch.contiguous_format)`.
import gc

import torch


class MiniMaxH3TransformerWeights:
    column_parallel_keys = ("attn.qkv", "ffn.fc1", "adaln.linear")  # split along dim 0
    row_parallel_keys = ("attn.proj", "ffn.fc2")  # split along dim 1

    def __init__(self, tp_size=1, tp_rank=0):
        self.tp_size = tp_size
        self.tp_rank = tp_rank
        self.weights = {}

    def _select_tensor_parallel_shard(self, name, tensor):
        if self.tp_size == 1:
            return tensor
        if any(k in name for k in self.column_parallel_keys):
            return torch.chunk(tensor, self.tp_size, dim=0)[self.tp_rank].contiguous()  # want: A
        if any(k in name for k in self.row_parallel_keys):
            return torch.chunk(tensor, self.tp_size, dim=1)[self.tp_rank].contiguous()
        return tensor

    def load(self, weight_dict):
        for name, tensor in weight_dict.items():
            self.weights[name] = self._select_tensor_parallel_shard(name, tensor)

    def resident_bytes(self):
        storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in self.weights.values()}
        return sum(storages.values())

    def payload_bytes(self):
        return sum(t.numel() * t.element_size() for t in self.weights.values())


class MiniMaxH3TransformerWeightsFixed(MiniMaxH3TransformerWeights):
    def _select_tensor_parallel_shard(self, name, tensor):
        if self.tp_size == 1:
            return tensor
        if any(k in name for k in self.column_parallel_keys):
            # a dim-0 chunk is a contiguous view: only a clone gives the shard its own storage
            return torch.chunk(tensor, self.tp_size, dim=0)[self.tp_rank].clone(memory_format=torch.contiguous_format)
        if any(k in name for k in self.row_parallel_keys):
            return torch.chunk(tensor, self.tp_size, dim=1)[self.tp_rank].contiguous()
        return tensor


def load_checkpoint(hidden=128, blocks=2):
    sd = {}
    for b in range(blocks):
        sd[f"blocks.{b}.attn.qkv.weight"] = torch.randn(3 * hidden, hidden)
        sd[f"blocks.{b}.attn.proj.weight"] = torch.randn(hidden, hidden)
        sd[f"blocks.{b}.ffn.fc1.weight"] = torch.randn(4 * hidden, hidden)
        sd[f"blocks.{b}.ffn.fc2.weight"] = torch.randn(hidden, 4 * hidden)
        sd[f"blocks.{b}.norm.weight"] = torch.randn(hidden)
    return sd


if __name__ == "__main__":
    for cls in (MiniMaxH3TransformerWeights, MiniMaxH3TransformerWeightsFixed):
        w = cls(tp_size=4, tp_rank=1)
        ckpt = load_checkpoint()
        w.load(ckpt)
        del ckpt
        gc.collect()
        print(f"{cls.__name__}: rank-local payload {w.payload_bytes()} B, resident storage {w.resident_bytes()} B")
    bad, good = MiniMaxH3TransformerWeights(4, 1), MiniMaxH3TransformerWeightsFixed(4, 1)
    bad.load(load_checkpoint())
    good.load(load_checkpoint())
    assert bad.resident_bytes() > 2 * bad.payload_bytes()
    assert good.resident_bytes() == good.payload_bytes()
