# source: Genesis-Embodied-AI/Genesis https://github.com/Genesis-Embodied-AI/Genesis/commit/0d200a170932e989ceab7a5cb35bbb7119e61320 — While refactoring sensors (PR #1646), SensorManager.reset cleared the per-dtype sensor caches with `self._cache[dtype][envs_idx].zero_()`. `envs_idx` comes back from `_sanitize_envs_idx` as an index tensor, so each indexing produced a copy and the reset environments kept their stale IMU/contact readings. The fix ("minor fixes, pass test") switched to index assignment `self._cache[dtype][envs_idx] = 0.0` before the PR was merged.
import torch


class TensorRingBuffer:
    def __init__(self, N, shape, dtype=torch.float32):
        self.buffer = torch.zeros((N, *shape), dtype=dtype)
        self._idx = 0

    def append(self, tensor):
        self._idx = (self._idx + 1) % len(self.buffer)
        self.buffer[self._idx] = tensor


class Scene:
    def __init__(self, n_envs):
        self.n_envs = n_envs

    def _sanitize_envs_idx(self, envs_idx):
        if envs_idx is None:
            return torch.arange(self.n_envs, dtype=torch.int32)
        return torch.as_tensor(envs_idx, dtype=torch.int32).reshape(-1)


class SensorManager:
    def __init__(self, scene, cache_size_per_dtype, max_buffer_len=3):
        self._scene = scene
        self._ground_truth_cache = {}
        self._cache = {}
        self._buffered_data = {}
        self._cloned_cache = {}
        self._last_cache_cloned_step = {}
        for dtype, size in cache_size_per_dtype.items():
            cache_shape = (scene.n_envs, size)
            self._ground_truth_cache[dtype] = torch.zeros(cache_shape, dtype=dtype)
            self._cache[dtype] = torch.zeros(cache_shape, dtype=dtype)
            self._buffered_data[dtype] = TensorRingBuffer(max_buffer_len, cache_shape, dtype=dtype)
            for is_ground_truth in (False, True):
                self._last_cache_cloned_step[(is_ground_truth, dtype)] = -1
                self._cloned_cache[(is_ground_truth, dtype)] = torch.zeros(0, dtype=dtype)

    def step(self, readings):
        for dtype, values in readings.items():
            self._ground_truth_cache[dtype].copy_(values)
            self._cache[dtype].copy_(values + 0.01)
            self._buffered_data[dtype].append(self._cache[dtype])

    def reset(self, envs_idx=None):
        envs_idx = self._scene._sanitize_envs_idx(envs_idx)
        for dtype in self._buffered_data.keys():
            self._ground_truth_cache[dtype][envs_idx].zero_()  # want: B
            self._cache[dtype][envs_idx].zero_()  # want: B
            self._buffered_data[dtype].buffer[:, envs_idx].zero_()  # want: B
        for key in self._last_cache_cloned_step.keys():
            self._cloned_cache[key].zero_()
            self._last_cache_cloned_step[key] = -1  # do not use cached data


class SensorManagerFixed(SensorManager):
    def reset(self, envs_idx=None):
        envs_idx = self._scene._sanitize_envs_idx(envs_idx)
        for dtype in self._buffered_data.keys():
            self._ground_truth_cache[dtype][envs_idx] = 0.0
            self._cache[dtype][envs_idx] = 0.0
            self._buffered_data[dtype].buffer[:, envs_idx] = 0.0
        for key in self._last_cache_cloned_step.keys():
            self._cloned_cache[key] = 0.0
            self._last_cache_cloned_step[key] = -1  # do not use cached data


def _run(manager_cls):
    torch.manual_seed(0)
    manager = manager_cls(Scene(n_envs=4), {torch.float32: 6})
    for _ in range(3):
        manager.step({torch.float32: torch.rand(4, 6) + 1.0})
    manager.reset(envs_idx=[1, 3])
    return manager._cache[torch.float32], manager._buffered_data[torch.float32].buffer


if __name__ == "__main__":
    cache, buf = _run(SensorManager)
    assert (cache[[1, 3]] != 0).all() and (buf[:, [1, 3]] != 0).all(), "buggy reset leaves the envs' readings"

    cache, buf = _run(SensorManagerFixed)
    assert (cache[[1, 3]] == 0).all() and (buf[:, [1, 3]] == 0).all()
    assert (cache[[0, 2]] != 0).all()
    print("ok")
