# source: pytorch/rl https://github.com/pytorch/rl/pull/3966 — ListStorage.load_state_dict appended each state_dict["_storage"] tensor to the replay buffer as-is; those are the caller's tensors ("which may e.g. be mmap-backed views over a checkpoint file", or rows sharing one storage restored by torch.load), so every surviving buffer entry kept the whole loaded storage alive; fix: self._storage.append(elt.clone())
import io
from collections import OrderedDict
from typing import Any

import torch


class ListStorage:
    def __init__(self, max_size: int):
        self.max_size = max_size
        self._storage = []

    def set(self, cursor, data: Any):
        if isinstance(cursor, int):
            self._set_item(cursor, data)
            return
        for _cursor, _data in zip(cursor, data):  # iterating a batch tensor yields row views
            self.set(_cursor, _data)

    def _set_item(self, cursor: int, data: Any) -> None:
        if cursor == len(self._storage):
            self._storage.append(data)  # maybe: A (rows of the extend() batch; the PR only changed load_state_dict)
        else:
            self._storage[cursor] = data

    def get(self, index: int):
        return self._storage[index]

    def __len__(self):
        return len(self._storage)

    def state_dict(self):
        return {"_storage": [elt if not hasattr(elt, "state_dict") else elt.state_dict() for elt in self._storage]}

    def load_state_dict(self, state_dict):
        _storage = state_dict["_storage"]
        self._storage = []
        for elt in _storage:
            if isinstance(elt, torch.Tensor):
                self._storage.append(elt)  # want: A
            elif isinstance(elt, (dict, OrderedDict)):
                self._storage.append({k: v for k, v in elt.items()})
            else:
                raise TypeError(f"Objects of type {type(elt)} are not supported by ListStorage.load_state_dict")


class ListStorageFixed(ListStorage):
    def load_state_dict(self, state_dict):
        self._storage = []
        for elt in state_dict["_storage"]:
            # clone to decouple the storage from the caller's tensors
            self._storage.append(elt.clone())


class ReplayBuffer:
    def __init__(self, storage: ListStorage):
        self._storage = storage
        self._cursor = 0

    def extend(self, data: torch.Tensor):
        n = data.shape[0]
        index = [(self._cursor + i) % self._storage.max_size for i in range(n)]
        self._storage.set(index, data)
        self._cursor = (self._cursor + n) % self._storage.max_size

    def sample(self, batch_size: int, generator=None) -> torch.Tensor:
        idx = torch.randint(len(self._storage), (batch_size,), generator=generator).tolist()
        # stacking copies: the sample owns its memory
        return torch.stack([self._storage.get(i) for i in idx])


def checkpoint_roundtrip(storage: ListStorage) -> dict:
    buf = io.BytesIO()
    torch.save(storage.state_dict(), buf)  # rows that shared a storage are saved (and restored) sharing it
    buf.seek(0)
    return torch.load(buf, weights_only=True)


if __name__ == "__main__":
    obs_dim, n = 64, 512
    src = ListStorage(max_size=n)
    ReplayBuffer(src).extend(torch.randn(n, obs_dim))
    sd = checkpoint_roundtrip(src)
    assert sd["_storage"][3].untyped_storage().nbytes() == n * obs_dim * 4

    restored = ListStorage(max_size=n)
    restored.load_state_dict(sd)
    restored_fixed = ListStorageFixed(max_size=n)
    restored_fixed.load_state_dict(sd)
    del sd
    rb, rb_fixed = ReplayBuffer(restored), ReplayBuffer(restored_fixed)
    # new experience overwrites all but the last 8 loaded transitions
    rb.extend(torch.randn(n - 8, obs_dim).clone())
    rb_fixed.extend(torch.randn(n - 8, obs_dim).clone())
    survivor = restored.get(n - 1)
    assert torch.equal(survivor, restored_fixed.get(n - 1))
    assert survivor.untyped_storage().nbytes() == n * obs_dim * 4  # the whole loaded checkpoint storage
    assert survivor.untyped_storage().nbytes() > survivor.numel() * survivor.element_size()
    assert restored_fixed.get(n - 1).untyped_storage().nbytes() == obs_dim * 4
    assert rb.sample(4, torch.Generator().manual_seed(0)).untyped_storage().nbytes() == 4 * obs_dim * 4
    print("ok: surviving replay entries pinned the whole restored checkpoint storage")
