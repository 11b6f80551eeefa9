# source: sgl-project/mini-sglang https://github.com/sgl-project/mini-sglang/pull/93 — `_shard_state_dict` put `value.chunk(n, dim=1)[r]` and `value[vocab_start_idx:vocab_end_idx, :]` views into the sharded state dict, and `BaseOP.load_state_dict` installs each tensor with `setattr(self, name, item)` (no copy), so every TP rank's model kept the full unsharded o_proj/down_proj/lm_head/embed weights alive -> OOM with tensor parallelism. The fix shards per tensor with `_shard_tensor(...)` returning `.clone()` of the chunk ("Returns a contiguous copy").
from types import SimpleNamespace
from typing import Dict

import torch

SPLIT_DIM_0_LIST = [".q_proj", ".k_proj", ".v_proj", ".gate_proj", ".up_proj"]
SPLIT_DIM_1_LIST = [".o_proj", ".down_proj"]


def div_ceil(a, b):
    return (a + b - 1) // b


def _shard_state_dict(state_dict: Dict[str, torch.Tensor], tp_info) -> Dict[str, torch.Tensor]:
    shard_state_dict: Dict[str, torch.Tensor] = {}
    r, n = tp_info.rank, tp_info.size
    for key, value in state_dict.items():
        if any(key.count(sub) for sub in SPLIT_DIM_0_LIST):
            shard_state_dict[key] = value.chunk(n, dim=0)[r]  # maybe: A (view, but _merge_state_dict later replaces q/k/v and gate/up with a torch.cat copy)
        elif any(key.count(sub) for sub in SPLIT_DIM_1_LIST):
            shard_state_dict[key] = value.chunk(n, dim=1)[r]  # want: A
        elif key.count("lm_head") or key.count("embed_tokens"):
            per_part = div_ceil(value.shape[0], n)
            start, end = r * per_part, min((r + 1) * per_part, value.shape[0])
            shard_state_dict[key] = value[start:end, :]  # want: A
        else:
            shard_state_dict[key] = value
    return shard_state_dict


def _shard_tensor(key: str, value: torch.Tensor, r: int, n: int) -> torch.Tensor:
    """Fixed (#93): extract rank r's shard from a single tensor. Returns a contiguous copy."""
    if any(key.count(sub) for sub in SPLIT_DIM_0_LIST):
        return value.chunk(n, dim=0)[r].clone()
    elif any(key.count(sub) for sub in SPLIT_DIM_1_LIST):
        return value.chunk(n, dim=1)[r].clone()
    elif key.count("lm_head") or key.count("embed_tokens"):
        per_part = div_ceil(value.shape[0], n)
        start, end = r * per_part, min((r + 1) * per_part, value.shape[0])
        return value[start:end, :].clone()
    return value


class BaseOP:
    def load_state_dict(self, state_dict, *, prefix=""):
        for name, param in list(self.__dict__.items()):
            if isinstance(param, torch.Tensor):
                item = state_dict.pop(f"{prefix}.{name}" if prefix else name)
                assert param.shape == item.shape and param.dtype == item.dtype
                setattr(self, name, item)


class AttnOut(BaseOP):
    def __init__(self, hidden, n):
        self.o_proj = torch.empty(hidden, hidden // n)
        self.lm_head = torch.empty(4096 // n, hidden)


def checkpoint(hidden=256):
    torch.manual_seed(0)
    return {"layer.o_proj": torch.randn(hidden, hidden), "layer.lm_head": torch.randn(4096, hidden)}


if __name__ == "__main__":
    tp = SimpleNamespace(rank=1, size=4)
    buggy = AttnOut(256, tp.size)
    buggy.load_state_dict({k: v.to(torch.float32) for k, v in _shard_state_dict(checkpoint(), tp).items()}, prefix="layer")
    fixed = AttnOut(256, tp.size)
    fixed.load_state_dict({k: _shard_tensor(k, v, tp.rank, tp.size) for k, v in checkpoint().items()}, prefix="layer")
    for name in ("o_proj", "lm_head"):
        b, f = getattr(buggy, name), getattr(fixed, name)
        assert torch.equal(b, f)
        print(name, "buggy storage:", b.untyped_storage().nbytes(), "fixed:", f.untyped_storage().nbytes())
        assert b.untyped_storage().nbytes() == tp.size * f.untyped_storage().nbytes()
