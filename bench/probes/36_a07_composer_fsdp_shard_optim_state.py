# source: mosaicml/composer https://github.com/mosaicml/composer/pull/3184 — "Fix the FSDP.optim_state_dict_to_load OOM": torch's `_shard_orig_param_state` all-gathers each unflattened optimizer state (exp_avg, exp_avg_sq) and keeps `value.flatten()[intra_param_start_idx : intra_param_end_idx + 1]` as this rank's shard; the slice is a view, so the loaded optimizer state keeps every rank holding the full gathered state (pytorch/pytorch#116553). Composer monkey-patches the function with `... + 1].clone()` ("This clone() is the patch to fix the OOM", upstream pytorch/pytorch#117261).
from dataclasses import dataclass
from typing import Any, Dict

import torch


@dataclass
class ShardParamInfo:
    in_shard: bool
    intra_param_start_idx: int
    intra_param_end_idx: int


@dataclass
class FSDPParamInfo:
    param_indices: Dict[str, int]
    shard_param_infos: list
    no_shard: bool = False


def _gather_state_dict(optim_state, world_size=8):
    # all-gather of the saved (sharded) state: every rank materialises the full unflattened tensor
    return {k: (torch.cat([v] * world_size) if torch.is_tensor(v) and v.dim() > 0 else v) for k, v in optim_state.items()}


def _shard_orig_param_state(fsdp_param_info: FSDPParamInfo, fqn: str, optim_state: Dict[str, Any]) -> Dict[str, Any]:
    if not optim_state:
        return {}
    shard_param_info = fsdp_param_info.shard_param_infos[fsdp_param_info.param_indices[fqn]]
    optim_state = _gather_state_dict(optim_state)
    if not shard_param_info.in_shard:
        return {}
    new_optim_state: Dict[str, Any] = {}
    intra_param_start_idx = shard_param_info.intra_param_start_idx
    intra_param_end_idx = shard_param_info.intra_param_end_idx
    for state_name, value in optim_state.items():
        if torch.is_tensor(value) and value.dim() > 0 and not fsdp_param_info.no_shard:
            value = value.flatten()[intra_param_start_idx : intra_param_end_idx + 1]  # want: A
        new_optim_state[state_name] = value  # maybe: A (store of the slice made on the line above)
    return new_optim_state


def _shard_orig_param_state_patched(fsdp_param_info, fqn, optim_state):
    if not optim_state:
        return {}
    shard_param_info = fsdp_param_info.shard_param_infos[fsdp_param_info.param_indices[fqn]]
    optim_state = _gather_state_dict(optim_state)
    if not shard_param_info.in_shard:
        return {}
    new_optim_state = {}
    start, end = shard_param_info.intra_param_start_idx, shard_param_info.intra_param_end_idx
    for state_name, value in optim_state.items():
        if torch.is_tensor(value) and value.dim() > 0 and not fsdp_param_info.no_shard:
            # This clone() is the patch to fix the OOM
            value = value.flatten()[start : end + 1].clone()
        new_optim_state[state_name] = value
    return new_optim_state


def optim_state_dict_to_load(full_osd, fsdp_param_info, shard_fn):
    loaded = {"state": {}}
    for fqn, state in full_osd["state"].items():
        loaded["state"][fqn] = shard_fn(fsdp_param_info, fqn, state)
    return loaded


if __name__ == "__main__":
    numel = 4096 * 8
    info = FSDPParamInfo({"w": 0}, [ShardParamInfo(True, 3 * 4096, 4 * 4096 - 1)])
    saved = {"state": {"w": {"step": torch.tensor(10.0), "exp_avg": torch.randn(4096), "exp_avg_sq": torch.rand(4096)}}}
    buggy = optim_state_dict_to_load(saved, info, _shard_orig_param_state)["state"]["w"]
    fixed = optim_state_dict_to_load(saved, info, _shard_orig_param_state_patched)["state"]["w"]
    for k in ("exp_avg", "exp_avg_sq"):
        assert torch.equal(buggy[k], fixed[k])
        print(k, "buggy storage:", buggy[k].untyped_storage().nbytes(), "fixed:", fixed[k].untyped_storage().nbytes())
        assert buggy[k].untyped_storage().nbytes() == numel * 4 and fixed[k].untyped_storage().nbytes() == 4096 * 4
