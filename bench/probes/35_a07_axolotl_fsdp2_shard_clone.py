# source: axolotl-ai-cloud/axolotl https://github.com/axolotl-ai-cloud/axolotl/pull/3597 — when loading a full state dict into an FSDP2 model, each rank's local shard was taken as a dim-0 chunk of the broadcast full parameter (a view; `.contiguous()` is a no-op on it) and kept as the sharded parameter, so the full-size tensor could never be garbage-collected; the fix clones the local shard.
import torch
from torch import nn


class FakeMesh:
    def __init__(self, rank, world_size):
        self.rank = rank
        self.world_size = world_size


def _infer_parameter_dtype(model, param_name, empty_param):
    old_param = model.get_parameter(param_name)
    return old_param.is_contiguous(), old_param.dtype


def _cast_and_contiguous(tensor, to_contiguous, dtype):
    if dtype is not None:
        tensor = tensor.to(dtype=dtype)
    if to_contiguous:
        tensor = tensor.contiguous()
    return tensor


def distribute_local_shard(full_param, mesh):
    return torch.chunk(full_param, mesh.world_size, dim=0)[mesh.rank]  # want: A


def fsdp2_load_full_state_dict(model, full_sd, mesh):
    sharded_sd = {}
    for param_name, full_param in full_sd.items():
        full_param = full_param.detach()
        sharded_tensor = distribute_local_shard(full_param, mesh)
        to_contiguous, casting_dtype = _infer_parameter_dtype(model, param_name, full_param)
        sharded_tensor = _cast_and_contiguous(sharded_tensor, to_contiguous, casting_dtype)
        sharded_sd[param_name] = nn.Parameter(sharded_tensor)
    for name, p in sharded_sd.items():
        mod_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(mod_name) if mod_name else model, attr, p)
    return model


def distribute_local_shard_fixed(full_param, mesh):
    return torch.chunk(full_param, mesh.world_size, dim=0)[mesh.rank].clone()


def fsdp2_load_full_state_dict_fixed(model, full_sd, mesh):
    sharded_sd = {}
    for param_name, full_param in full_sd.items():
        full_param = full_param.detach()
        sharded_tensor = distribute_local_shard_fixed(full_param, mesh)
        to_contiguous, casting_dtype = _infer_parameter_dtype(model, param_name, full_param)
        sharded_tensor = _cast_and_contiguous(sharded_tensor, to_contiguous, casting_dtype)
        sharded_sd[param_name] = nn.Parameter(sharded_tensor)
    for name, p in sharded_sd.items():
        mod_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(mod_name) if mod_name else model, attr, p)
    return model


def build_model():
    return nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256))


if __name__ == "__main__":
    full_sd = build_model().state_dict()
    mesh = FakeMesh(rank=1, world_size=4)
    for fn in (fsdp2_load_full_state_dict, fsdp2_load_full_state_dict_fixed):
        m = fn(build_model(), {k: v.clone() for k, v in full_sd.items()}, mesh)
        local = sum(p.numel() * p.element_size() for p in m.parameters())
        pinned = sum(p.untyped_storage().nbytes() for p in m.parameters())
        print(f"{fn.__name__:34s} local shard={local:8d} B  storage pinned={pinned:8d} B")
