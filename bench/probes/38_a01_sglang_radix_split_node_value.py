# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/17191 — RadixCache._split_node stored `child.value[:split_len]` and `child.value[split_len:]` (slices of the KV-slot index tensor) on the new parent node and on the child, so both long-lived tree nodes kept viewing the original value tensor. When the child was later evicted its slots went back to the allocator, but its value storage could not be released until every node on the path holding a view was evicted (torch allocated memory reached 400x the tree size under long shared prefixes). The fix clones both halves in _split_node so each node owns its own index storage.
import time
from collections import defaultdict
from typing import List, Optional

import torch


class TreeNode:
    def __init__(self):
        self.children = defaultdict(TreeNode)
        self.parent: Optional["TreeNode"] = None
        self.key: List[int] = None
        self.value: Optional[torch.Tensor] = None
        self.lock_ref = 0
        self.last_access_time = time.monotonic()


def _key_match(key0, key1):
    i = 0
    for k0, k1 in zip(key0, key1):
        if k0 != k1:
            break
        i += 1
    return i


class RadixCache:
    def __init__(self):
        self.root_node = TreeNode()
        self.root_node.key = []
        self.root_node.value = []
        self.root_node.lock_ref = 1
        self.evictable_size_ = 0

    def insert(self, key: List, value: torch.Tensor):
        return self._insert_helper(self.root_node, key, value)

    def _split_node(self, key, child: TreeNode, split_len: int):
        # new_node -> child
        new_node = TreeNode()
        new_node.children = {key[split_len]: child}
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len]  # want: A
        child.parent = new_node
        child.key = child.key[split_len:]
        child.value = child.value[split_len:]  # want: A
        new_node.parent.children[key[0]] = new_node
        return new_node

    def _insert_helper(self, node: TreeNode, key: List, value):
        node.last_access_time = time.monotonic()
        if len(key) == 0:
            return 0

        if key[0] in node.children.keys():
            child = node.children[key[0]]
            prefix_len = _key_match(child.key, key)

            if prefix_len == len(child.key):
                if prefix_len == len(key):
                    return prefix_len
                key = key[prefix_len:]
                value = value[prefix_len:]
                return prefix_len + self._insert_helper(child, key, value)

            new_node = self._split_node(child.key, child, prefix_len)
            return prefix_len + self._insert_helper(new_node, key[prefix_len:], value[prefix_len:])

        new_node = TreeNode()
        new_node.parent = node
        new_node.key = key
        new_node.value = value
        node.children[key[0]] = new_node
        self.evictable_size_ += len(value)
        return 0


class RadixCacheFixed(RadixCache):
    def _split_node(self, key, child: TreeNode, split_len: int):
        # new_node -> child
        new_node = TreeNode()
        new_node.children = {key[split_len]: child}
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len].clone()
        child.parent = new_node
        child.key = child.key[split_len:]
        child.value = child.value[split_len:].clone()
        new_node.parent.children[key[0]] = new_node
        return new_node


def _run(cache_cls):
    cache = cache_cls()
    # request 1: 64 tokens cached with their KV slot indices
    slots_a = torch.arange(100, 164, dtype=torch.int64)
    cache.insert(list(range(64)), slots_a.clone())
    # request 2 shares only the first 8 tokens -> the 64-token node is split at 8
    slots_b = torch.arange(500, 564, dtype=torch.int64)
    cache.insert(list(range(8)) + list(range(1000, 1056)), slots_b.clone())
    prefix = cache.root_node.children[0]
    suffix = prefix.children[8]
    return prefix, suffix


if __name__ == "__main__":
    prefix, suffix = _run(RadixCache)
    assert prefix.value.numel() == 8 and suffix.value.numel() == 56
    # both nodes still view the original 64-entry index tensor
    assert prefix.value.untyped_storage().nbytes() == 64 * 8
    assert prefix.value.untyped_storage().nbytes() > prefix.value.numel() * prefix.value.element_size()
    assert prefix.value.untyped_storage().data_ptr() == suffix.value.untyped_storage().data_ptr()

    fprefix, fsuffix = _run(RadixCacheFixed)
    assert torch.equal(fprefix.value, prefix.value) and torch.equal(fsuffix.value, suffix.value)
    assert fprefix.value.untyped_storage().nbytes() == fprefix.value.numel() * fprefix.value.element_size()
    assert fsuffix.value.untyped_storage().nbytes() == fsuffix.value.numel() * fsuffix.value.element_size()
    print("ok")
