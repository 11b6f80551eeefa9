# source: ericcurtin/vllm-vulkan https://github.com/ericcurtin/vllm-vulkan/pull/40 — The vLLM Linear dispatch hook _wrap_linear called vulkan_ops.linear(x.float(), weight.float(), matmul_bias), so for bf16/fp16 checkpoints every token of every wrapped Linear allocated a fresh fp32 copy of the weight; that new storage also defeated _WeightCache (keyed on the weight's storage identity), so the weight was re-uploaded each call, and _vulkan_matvec recomputed weight.float() yet again after the cache lookup. The fix passes the persistent weight Parameter through unchanged and drops the extra .float() in _vulkan_matvec, so the cast happens once at upload time.
import weakref

import torch
import torch.nn as nn

_stats = {"uploads": 0}


class _WeightCache:
    def __init__(self):
        self._entries = {}

    def get(self, weight):
        storage = weight.untyped_storage()
        entry = self._entries.get(id(storage))
        if entry is not None and entry[0]() is storage:
            return entry[1]
        return None

    def put(self, weight, value):
        storage = weight.untyped_storage()
        self._entries[id(storage)] = (weakref.ref(storage), value)


_gpu_weight_cache = _WeightCache()


def _upload(weight):
    _stats["uploads"] += 1
    return weight.detach().to(torch.float32).contiguous().clone()


def _get_or_upload_weight(weight):
    buf = _gpu_weight_cache.get(weight)
    if buf is None:
        buf = _upload(weight)
        _gpu_weight_cache.put(weight, buf)
    return buf


def _vulkan_matvec(x, weight, bias):
    w_buf = _get_or_upload_weight(weight)
    w = weight.float()  # want: C
    n = w.shape[0]
    out = x.float() @ w_buf.t()
    if bias is not None:
        out = out + bias.float()
    return out.reshape(x.shape[0], n)


def linear(x, weight, bias=None):
    orig_shape = x.shape
    x2 = x.reshape(-1, orig_shape[-1])
    return _vulkan_matvec(x2, weight, bias).reshape(*orig_shape[:-1], -1)


def _wrap_linear(module):
    orig = module.forward

    def forward(x):
        weight = module.weight
        if weight.numel() == 0:
            return orig(x)
        matmul_bias = module.bias
        try:
            out = linear(x.float(), weight.float(), matmul_bias)  # want: C
            return out.to(x.dtype)
        except Exception:
            return orig(x)

    module.forward = forward
    return module


def _vulkan_matvec_fixed(x, weight, bias):
    w_buf = _get_or_upload_weight(weight)
    n = weight.shape[0]
    out = x.float() @ w_buf.t()
    if bias is not None:
        out = out + bias.float()
    return out.reshape(x.shape[0], n)


def linear_fixed(x, weight, bias=None):
    orig_shape = x.shape
    x2 = x.reshape(-1, orig_shape[-1])
    return _vulkan_matvec_fixed(x2, weight, bias).reshape(*orig_shape[:-1], -1)


def _wrap_linear_fixed(module):
    orig = module.forward

    def forward(x):
        weight = module.weight
        if weight.numel() == 0:
            return orig(x)
        matmul_bias = module.bias
        try:
            out = linear_fixed(x.float(), weight, matmul_bias)
            return out.to(x.dtype)
        except Exception:
            return orig(x)

    module.forward = forward
    return module


if __name__ == "__main__":
    torch.manual_seed(0)
    base = nn.Linear(32, 48).to(torch.bfloat16)
    xs = [torch.randn(1, 32, dtype=torch.bfloat16) for _ in range(6)]
    results = {}
    for wrap in (_wrap_linear, _wrap_linear_fixed):
        mod = nn.Linear(32, 48).to(torch.bfloat16)
        mod.load_state_dict(base.state_dict())
        wrap(mod)
        _stats["uploads"] = 0
        with torch.no_grad():
            outs = [mod(x) for x in xs]
        results[wrap] = (outs, _stats["uploads"])
    for a, b in zip(results[_wrap_linear][0], results[_wrap_linear_fixed][0]):
        assert torch.allclose(a.float(), b.float(), atol=1e-2)
    assert results[_wrap_linear][1] == len(xs) and results[_wrap_linear_fixed][1] == 1
    assert base.weight.float().data_ptr() != base.weight.data_ptr()
    print("ok", results[_wrap_linear][1], results[_wrap_linear_fixed][1])
