import torch


def write_kv(k_cache: torch.Tensor, v_cache: torch.Tensor, slot_mapping: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    k_cache.view(-1, k.shape[-1])[slot_mapping] = k
    v_cache.flatten(0, 1)[slot_mapping] = v  # maybe: B (flatten is a view when the cache is contiguous)
    k_cache[slot_mapping // 16][:, slot_mapping % 16] = k  # want: B
