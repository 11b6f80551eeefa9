# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/issues/3303 (fix PR #3348, HF transformers #22822) — ZeRO stage 1/2 flattens each param group into one buffer and points every param's .data at a slice of it, so model.save_pretrained()/torch.save(state_dict) after deepspeed.initialize wrote the whole flat group for each tensor; fix: deepspeed.checkpoint.utils.clone_tensors_for_torch_save(state_dict)
import io
from collections import OrderedDict

import torch
from torch import nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


class TinyLM(nn.Module):
    def __init__(self, vocab=256, dim=32, layers=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)


class Zero2Engine:
    """The part of DeepSpeed's stage-1/2 optimizer that matters here: one flat bit16 buffer per group."""

    def __init__(self, module: nn.Module):
        self.module = module
        self.params = [p for p in module.parameters() if p.requires_grad]
        self.bit16_groups_flat = _flatten_dense_tensors([p.data for p in self.params])
        self._update_model_bit16_weights()

    def _update_model_bit16_weights(self):
        updated = _unflatten_dense_tensors(self.bit16_groups_flat, self.params)
        for p, q in zip(self.params, updated):
            p.data = q


def clone_tensors_for_torch_save(item):
    if torch.is_tensor(item):
        return item.detach().clone()
    if isinstance(item, dict):
        return type(item)({k: clone_tensors_for_torch_save(v) for k, v in item.items()})
    return item


def shard_checkpoint(state_dict, max_shard_size):
    shards, cur, size = [], OrderedDict(), 0
    for k, v in state_dict.items():
        if cur and size + v.numel() * v.element_size() > max_shard_size:
            shards.append(cur)
            cur, size = OrderedDict(), 0
        cur[k] = v
        size += v.numel() * v.element_size()
    return shards + [cur]


def save_pretrained(engine: Zero2Engine, files: dict, max_shard_size=8192, state_dict=None):
    if state_dict is None:
        state_dict = engine.module.state_dict()
    for i, shard in enumerate(shard_checkpoint(state_dict, max_shard_size)):
        files[f"pytorch_model-{i:05d}.bin"] = buf = io.BytesIO()
        torch.save(shard, buf)  # want: A


def save_pretrained_lean(engine: Zero2Engine, files: dict, max_shard_size=8192):
    lean_state_dict = clone_tensors_for_torch_save(engine.module.state_dict())
    save_pretrained(engine, files, max_shard_size, state_dict=lean_state_dict)


def save_norm_only(engine: Zero2Engine, f):
    torch.save(OrderedDict(weight=engine.module.norm.weight.detach()), f)  # maybe: A (norm.weight is a slice of the flat group too, but only through the engine's p.data rebinding)


if __name__ == "__main__":
    model = TinyLM()
    before = io.BytesIO()
    torch.save(model.state_dict(), before)
    engine = Zero2Engine(model)
    assert all(p.untyped_storage().data_ptr() == engine.bit16_groups_flat.untyped_storage().data_ptr() for p in model.parameters())

    bloated, lean = {}, {}
    save_pretrained(engine, bloated)
    save_pretrained_lean(engine, lean)
    flat_bytes = engine.bit16_groups_flat.numel() * 4
    assert len(bloated) == len(lean) >= 3
    assert all(len(b.getvalue()) > flat_bytes for b in bloated.values())  # every shard file: the whole flat group
    assert sum(len(b.getvalue()) for b in lean.values()) < len(before.getvalue()) + 4096 * len(lean)
    last = torch.load(io.BytesIO(bloated[max(bloated)].getvalue()), weights_only=True)
    assert last["norm.bias"].numel() == 32 and last["norm.bias"].untyped_storage().nbytes() == flat_bytes
    norm_only = io.BytesIO()
    save_norm_only(engine, norm_only)
    assert len(norm_only.getvalue()) > flat_bytes  # 32 floats, whole flat group on disk
    print("ok: every state_dict entry was a view of the ZeRO flat buffer")
