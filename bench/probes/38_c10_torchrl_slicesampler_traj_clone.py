# source: pytorch/rl https://github.com/pytorch/rl/pull/2671 — SliceSampler._get_stop_and_length read the whole trajectory-id column of the replay storage and passed trajectory.clone() to _find_start_stop_traj on every sample() call (unless cache_values), although that classmethod only compares and concatenates the ids and never writes to them. The clone was a full-buffer copy per sampling step; the PR ("[Performance] Avoid cloning trajs in SliceSampler") passes the storage column directly.
import torch
from torch.utils._python_dispatch import TorchDispatchMode


class TensorStorage:
    def __init__(self, data, max_size):
        self._storage = data
        self.max_size = max_size
        self._len = len(next(iter(data.values())))
        self._last_cursor = self._len - 1

    @property
    def _is_full(self):
        return self._len >= self.max_size

    def __len__(self):
        return self._len
    def __getitem__(self, index):
        return {k: v[: self._len][index] for k, v in self._storage.items()}


class SliceSampler:
    def __init__(self, *, num_slices=None, traj_key="episode", cache_values=False):
        self.num_slices = num_slices
        self.traj_key = traj_key
        self._used_traj_key = traj_key
        self.cache_values = cache_values
        self._cache = {}

    @classmethod
    def _find_start_stop_traj(cls, *, trajectory, at_capacity: bool, cursor=None):
        end = trajectory[:-1] != trajectory[1:]
        if not at_capacity:
            end = torch.cat([end, torch.ones_like(end[:1])], 0)
        else:
            end = torch.cat([end, trajectory[-1:] != trajectory[:1]], 0)
        length = trajectory.shape[0]
        return cls._end_to_start_stop(length=length, end=end)

    @staticmethod
    def _end_to_start_stop(end, length):
        stop_idx = end.transpose(0, -1).nonzero()
        stop_idx[:, [0, -1]] = stop_idx[:, [-1, 0]].clone()
        start_idx = stop_idx.clone()
        start_idx[:, 0] += 1
        start_idx[:, 0] %= end.shape[0]
        if start_idx.shape[0] > 1:
            start_idx_mask = (start_idx[1:, 1:] == start_idx[:-1, 1:]).all(-1)
            m1 = torch.cat([torch.zeros_like(start_idx_mask[:1]), start_idx_mask])
            m2 = torch.cat([start_idx_mask, torch.zeros_like(start_idx_mask[:1])])
            start_idx_replace = torch.empty_like(start_idx)
            start_idx_replace[m1] = start_idx[m2]
            start_idx_replace[~m1] = start_idx[~m2]
            start_idx = start_idx_replace
        lengths = stop_idx[:, 0] - start_idx[:, 0] + 1
        lengths[lengths <= 0] = lengths[lengths <= 0] + length
        return start_idx, stop_idx, lengths

    def _get_stop_and_length(self, storage):
        if self.cache_values and "stop-and-length" in self._cache:
            return self._cache.get("stop-and-length")
        trajectory = storage[:][self._used_traj_key]
        vals = self._find_start_stop_traj(
            trajectory=trajectory.clone(),  # want: C
            at_capacity=storage._is_full,
            cursor=getattr(storage, "_last_cursor", None),
        )
        if self.cache_values:
            self._cache["stop-and-length"] = vals
        return vals


class SliceSamplerFixed(SliceSampler):
    def _get_stop_and_length(self, storage):
        if self.cache_values and "stop-and-length" in self._cache:
            return self._cache.get("stop-and-length")
        trajectory = storage[:][self._used_traj_key]
        vals = self._find_start_stop_traj(
            trajectory=trajectory,
            at_capacity=storage._is_full,
            cursor=getattr(storage, "_last_cursor", None),
        )
        if self.cache_values:
            self._cache["stop-and-length"] = vals
        return vals


class CountClones(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.cloned = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.clone.default:
            self.cloned += out.numel()
        return out


if __name__ == "__main__":
    episode = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3])
    storage = TensorStorage({"episode": episode, "obs": torch.randn(12, 4)}, max_size=32)
    with CountClones() as cb:
        start_b, stop_b, len_b = SliceSampler(num_slices=2)._get_stop_and_length(storage)
    with CountClones() as cf:
        start_f, stop_f, len_f = SliceSamplerFixed(num_slices=2)._get_stop_and_length(storage)
    assert torch.equal(start_b, start_f) and torch.equal(stop_b, stop_f) and torch.equal(len_b, len_f)
    assert len_f.tolist() == [3, 2, 4, 3]
    assert torch.equal(storage[:]["episode"], episode)
    assert cb.cloned == cf.cloned + episode.numel()
    print("ok", cb.cloned, cf.cloned)
