# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/48049 — autocast's per-region cast cache keyed its fp16 copies by the tensor it was handed; `nn.Linear` hands it the fresh view `weight.t()` on every call, so under `no_grad` the cache accumulated one cast (plus the view) per forward and GPU memory grew ~10x; the fix (PR #48696) stops caching casts of views.
import torch
from torch import nn


class AutocastState:
    """Python model of the autocast cast cache (cleared when the autocast region exits)."""

    def __init__(self):
        self.cached_casts = {}

    def cached_cast(self, t, dtype):
        can_try_cache = t.dtype == torch.float32 and t.requires_grad and t.is_leaf
        if can_try_cache:
            key = id(t)
            if key in self.cached_casts:
                return self.cached_casts[key][1]
            casted = t.to(dtype)
            self.cached_casts[key] = (t, casted)  # maybe: A (view key + its cast pinned for the whole region)
            return casted
        return t.to(dtype)


class AutocastStateFixed(AutocastState):
    def cached_cast(self, t, dtype):
        can_try_cache = (t.dtype == torch.float32 and t.requires_grad and t.is_leaf
                         and t._base is None)
        if can_try_cache:
            key = id(t)
            if key in self.cached_casts:
                return self.cached_casts[key][1]
            casted = t.to(dtype)
            self.cached_casts[key] = (t, casted)
            return casted
        return t.to(dtype)


class AutocastLinear(nn.Linear):
    def forward(self, x, state):
        w_t = self.weight.t()  # maybe: A (transient view handed to the cache)
        w16 = state.cached_cast(w_t, torch.bfloat16)
        out = x.to(torch.bfloat16) @ w16
        if self.bias is not None:
            out = out + state.cached_cast(self.bias, torch.bfloat16)
        return out


def cache_bytes(state):
    return sum(c.numel() * c.element_size() for _, c in state.cached_casts.values())


if __name__ == "__main__":
    layer = AutocastLinear(512, 512)
    x = torch.randn(8, 512)
    for cls in (AutocastState, AutocastStateFixed):
        state = cls()
        with torch.no_grad():
            for _ in range(20):
                layer(x, state)
        print(f"{cls.__name__:19s} cache entries={len(state.cached_casts):3d}  cached bytes={cache_bytes(state):9d}")
