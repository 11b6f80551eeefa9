# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/36414 — The unified radix cache unit-test helpers wrote a per-slot marker into the KV pool with `k_buf[indices].fill_(marker)` and into the mamba pool with `mamba_cache.temporal[:, mamba_indices].fill_(marker)`. Indexing with a tensor is advanced indexing, so `fill_` mutated a fresh temporary and the pools kept their zeros, making every load-back assertion compare zeros to zeros. The fix assigns through `__setitem__` (`k_buf[indices] = marker`), which is an in-place `index_put_`.
import torch


class MHATokenToKVPool:
    def __init__(self, size, head_num, head_dim, layer_num, dtype=torch.float32):
        self.size = size
        self.layer_num = layer_num
        self.k_buffer = [torch.zeros(size + 1, head_num, head_dim, dtype=dtype) for _ in range(layer_num)]
        self.v_buffer = [torch.zeros(size + 1, head_num, head_dim, dtype=dtype) for _ in range(layer_num)]

    def get_key_buffer(self, layer_id):
        return self.k_buffer[layer_id]


class MambaPool:
    class State:
        def __init__(self, conv, temporal):
            self.conv = conv
            self.temporal = temporal

    def __init__(self, size, num_layers, state_dim):
        self.mamba_cache = MambaPool.State(
            conv=torch.zeros(num_layers, size + 1, 4, state_dim),
            temporal=torch.zeros(num_layers, size + 1, state_dim, state_dim),
        )


def _stamp_kv(token_to_kv_pool, indices, marker):
    for layer_id in range(token_to_kv_pool.layer_num):
        k_buf = token_to_kv_pool.get_key_buffer(layer_id)
        k_buf[indices].fill_(marker)  # want: B


def _stamp_mamba(mamba_pool, mamba_indices, marker):
    mamba_cache = mamba_pool.mamba_cache
    mamba_cache.temporal[:, mamba_indices].fill_(marker)  # want: B


def _stamp_kv_fixed(token_to_kv_pool, indices, marker):
    for layer_id in range(token_to_kv_pool.layer_num):
        k_buf = token_to_kv_pool.get_key_buffer(layer_id)
        k_buf[indices] = marker


def _stamp_mamba_fixed(mamba_pool, mamba_indices, marker):
    mamba_cache = mamba_pool.mamba_cache
    mamba_cache.temporal[:, mamba_indices] = marker


def run(stamp_kv, stamp_mamba):
    kv_pool = MHATokenToKVPool(size=16, head_num=2, head_dim=4, layer_num=2)
    mamba_pool = MambaPool(size=4, num_layers=2, state_dim=3)
    indices = torch.tensor([3, 5, 7])
    mamba_indices = torch.tensor([1, 2])
    stamp_kv(kv_pool, indices, 7.0)
    stamp_mamba(mamba_pool, mamba_indices, 5.0)
    return kv_pool, mamba_pool


if __name__ == "__main__":
    kv, mb = run(_stamp_kv, _stamp_mamba)
    assert kv.k_buffer[0].abs().sum().item() == 0.0
    assert mb.mamba_cache.temporal.abs().sum().item() == 0.0

    kv_f, mb_f = run(_stamp_kv_fixed, _stamp_mamba_fixed)
    assert torch.all(kv_f.k_buffer[1][torch.tensor([3, 5, 7])] == 7.0)
    assert torch.all(mb_f.mamba_cache.temporal[:, torch.tensor([1, 2])] == 5.0)
    print("ok")
