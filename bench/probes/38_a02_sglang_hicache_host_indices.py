# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/21624 — HostKVCache.alloc() hands out `self.free_slots[:need_size]`, a view of the host pool's free-slot tensor, and HiRadixCache.write_backup stored that view as `node.host_value` on long-lived radix-tree nodes. Because free() rebuilds free_slots with torch.cat, every old free-slot tensor stayed pinned by some node's host_value, so scheduler RSS grew persistently under hierarchical-cache workloads (issue #19332). The fix stores a clone of the host indices on the node.
from typing import Optional

import torch


class HostKVCache:
    def __init__(self, size: int, page_size: int):
        self.size = size
        self.page_size = page_size
        self.free_slots = torch.arange(self.size, dtype=torch.int64)

    def available_size(self):
        return len(self.free_slots)

    def alloc(self, need_size: int) -> Optional[torch.Tensor]:
        assert need_size % self.page_size == 0, "The requested size should be a multiple of the page size."
        if need_size > self.available_size():
            return None
        select_index = self.free_slots[:need_size]  # maybe: A (the view of free_slots is created here and returned to the radix tree)
        self.free_slots = self.free_slots[need_size:]
        return select_index

    def free(self, indices: torch.Tensor) -> int:
        self.free_slots = torch.cat([self.free_slots, indices.cpu()])
        return len(indices)


class HiCacheController:
    def __init__(self, mem_pool_host: HostKVCache):
        self.mem_pool_host = mem_pool_host
        self.write_queue = []

    def write(self, device_indices: torch.Tensor, node_id: int = -1) -> Optional[torch.Tensor]:
        host_indices = self.mem_pool_host.alloc(len(device_indices))
        if host_indices is None:
            return None
        self.write_queue.append((host_indices, device_indices, node_id))
        return host_indices


class TreeNode:
    _next_id = 0

    def __init__(self, value: torch.Tensor):
        self.value = value
        self.host_value: Optional[torch.Tensor] = None
        self.lock_ref = 0
        self.id = TreeNode._next_id
        TreeNode._next_id += 1


class HiRadixCache:
    def __init__(self, cache_controller: HiCacheController):
        self.cache_controller = cache_controller
        self.ongoing_write_through = {}

    def evict_host(self, num_tokens: int):
        pass

    def inc_lock_ref(self, node: TreeNode):
        node.lock_ref += 1

    def write_backup(self, node: TreeNode, write_back=False):
        host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)
        if host_indices is None:
            self.evict_host(len(node.value))
            host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)
        if host_indices is not None:
            node.host_value = host_indices  # want: A
            assert len(node.host_value) > 0
            self.ongoing_write_through[node.id] = node
            if not write_back:
                self.inc_lock_ref(node)
        else:
            return 0
        return len(host_indices)


class HiRadixCacheFixed(HiRadixCache):
    def write_backup(self, node: TreeNode, write_back=False):
        host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)
        if host_indices is None:
            self.evict_host(len(node.value))
            host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)
        if host_indices is not None:
            node.host_value = host_indices.clone()
            assert len(node.host_value) > 0
            self.ongoing_write_through[node.id] = node
            if not write_back:
                self.inc_lock_ref(node)
        else:
            return 0
        return len(host_indices)


def _run(cache_cls, rounds=6, page=16):
    host_pool = HostKVCache(size=1024, page_size=page)
    tree = cache_cls(HiCacheController(host_pool))
    nodes = []
    for r in range(rounds):
        node = TreeNode(torch.arange(page, dtype=torch.int64) + r * page)
        tree.write_backup(node)
        nodes.append(node)
        # a transient backup is freed again, which rebuilds free_slots with torch.cat
        tmp = tree.cache_controller.write(torch.zeros(page, dtype=torch.int64))
        host_pool.free(tmp)
    return nodes


if __name__ == "__main__":
    nodes = _run(HiRadixCache)
    own = nodes[0].host_value.numel() * nodes[0].host_value.element_size()
    # each node pins a whole (old) free_slots tensor, not just its 16 indices
    assert nodes[0].host_value.untyped_storage().nbytes() == 1024 * 8
    assert all(n.host_value.untyped_storage().nbytes() > own for n in nodes)

    fixed = _run(HiRadixCacheFixed)
    assert all(torch.equal(a.host_value, b.host_value) for a, b in zip(nodes, fixed))
    assert all(n.host_value.untyped_storage().nbytes() == own for n in fixed)
    print("ok")
