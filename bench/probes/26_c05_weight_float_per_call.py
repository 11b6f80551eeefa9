# source: ericcurtin/vllm-vulkan https://github.com/ericcurtin/vllm-vulkan/pull/42 — vulkan_ops.linear()'s CPU (prefill) branch ran `torch.nn.functional.linear(x_2d, weight.float())`, re-converting the same bf16 weight matrix to float32 on every call for every wrapped Linear; the fix converts once and caches it (_get_or_convert_to_float32_cpu).
import weakref

import numpy as np
import torch
from torch import nn


class _WeightCache:
    """Cache keyed on id(weight.untyped_storage()), entry dropped when storage dies."""

    def __init__(self) -> None:
        self._data: dict = {}

    def get(self, w: torch.Tensor):
        entry = self._data.get(id(w.untyped_storage()))
        return entry[1] if entry is not None else None

    def put(self, w: torch.Tensor, value) -> None:
        storage = w.untyped_storage()
        key = id(storage)
        self_ref = weakref.ref(self)

        def _cleanup(_storage_ref) -> None:
            cache = self_ref()
            if cache is not None:
                cache._data.pop(key, None)

        self._data[key] = (weakref.ref(storage, _cleanup), value)


_weight_cache = _WeightCache()


class FakeVulkanContext:
    """Stands in for the Rust VulkanContext: 'uploads' are kept as float32 arrays."""

    def available_shaders(self):
        return {"mul_mat_vec_f32_f32_f32"}

    def upload_tensor(self, data: bytes):
        return np.frombuffer(data, dtype=np.float32)

    def execute_batch(self, ops):
        (name, (w, x), (out_size,), pc, grid, _flag), = ops
        N, T, _ = grid
        W = w if isinstance(w, np.ndarray) else np.frombuffer(w, dtype=np.float32)
        X = np.frombuffer(x, dtype=np.float32).reshape(T, -1)
        return [[(X @ W.reshape(N, -1).T).astype(np.float32).tobytes()]]


_CTX = FakeVulkanContext()


def get_context():
    return _CTX


def _to_bytes(t: torch.Tensor) -> bytes:
    t = t.contiguous()
    return t.numpy().tobytes()


def _from_bytes(data: bytes, shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    arr = np.frombuffer(data, dtype=np.float32).reshape(shape)
    return torch.from_numpy(arr.copy())


def _get_or_upload_weight(ctx, weight: torch.Tensor):
    """Return a persistent GpuTensor for weight, uploading once on first use."""
    cached = _weight_cache.get(weight)
    if cached is not None:
        return cached
    w_f32 = weight.float() if weight.dtype != torch.float32 else weight  # look-alike: only on cache miss
    gpu = ctx.upload_tensor(_to_bytes(w_f32))
    _weight_cache.put(weight, gpu)
    return gpu


_MATVEC_THRESHOLD = 4  # T < this -> matvec shader; T >= this -> CPU


def linear(x: torch.Tensor, weight: torch.Tensor, bias=None) -> torch.Tensor:
    """Linear layer: decode path uses Vulkan matvec, prefill uses CPU."""
    ctx = get_context()

    orig_shape = x.shape
    in_feat = weight.shape[1]
    out_feat = weight.shape[0]
    x_2d = x.float().reshape(-1, in_feat)
    T = x_2d.shape[0]

    if T < _MATVEC_THRESHOLD and "mul_mat_vec_f32_f32_f32" in ctx.available_shaders():
        result = _vulkan_matvec(ctx, x_2d, weight)
    else:
        result = torch.nn.functional.linear(x_2d, weight.float())  # want: C

    if bias is not None:
        result = result + bias.float()  # maybe: C (same per-call parameter cast; a bot review on PR #69 flagged it, fix not verified)

    return result.reshape(*orig_shape[:-1], out_feat)


def _vulkan_matvec(ctx, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    w_gpu = _get_or_upload_weight(ctx, weight)
    T, K = x.shape
    N = weight.shape[0]
    results = ctx.execute_batch([("mul_mat_vec_f32_f32_f32", [w_gpu, _to_bytes(x)], [T * N * 4], b"", (N, T, 1), False)])
    return _from_bytes(results[0][0], (T, N), torch.float32)


def _wrap_linear(module: nn.Linear):
    """model_runner hook: route every Linear forward through vulkan_ops.linear."""
    orig = module.forward

    def forward(x):
        weight = module.weight
        if weight.numel() == 0:
            return orig(x)
        return linear(x, weight, module.bias).to(x.dtype)

    module.forward = forward
    return module


if __name__ == "__main__":
    torch.manual_seed(0)
    layers = [_wrap_linear(nn.Linear(256, 512).to(torch.bfloat16)) for _ in range(4)]
    with torch.no_grad():
        for step in range(6):
            T = 64 if step % 3 == 0 else 1  # prefill chunks interleaved with decode steps
            h = torch.randn(T, 256, dtype=torch.bfloat16)
            for layer in layers:
                out = layer(h)
    print("ok", tuple(out.shape), out.dtype)
