# source: guandeh17/Self-Forcing https://github.com/guandeh17/Self-Forcing/pull/78 — "[fix bug] storing crossattn_cache": the causal Wan cross-attention cached its K/V by rebinding dict entries (`crossattn_cache["k"] = k`, `crossattn_cache["is_init"] = True`) while the self-attention KV cache was written in place into preallocated tensors. When the cache dict reaching the block is a shallow copy (kwargs propagation / wrappers), the rebinds land in the copy and are silently lost, so cross-attention K/V are recomputed every call. The PR switches the cross-attention cache to in-place tensor writes like the KV cache.
import torch
import torch.nn as nn


class WanT2VCrossAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.k_calls = 0

    def project_kv(self, context):
        self.k_calls += 1
        return self.k(context), self.v(context)

    def forward(self, x, context, crossattn_cache=None):
        q = self.q(x)
        if crossattn_cache is not None:
            if not crossattn_cache["is_init"]:
                k, v = self.project_kv(context)
                crossattn_cache["k"] = k  # want: B
                crossattn_cache["v"] = v  # maybe: B (same rebind of the copied dict entry)
                crossattn_cache["is_init"] = True
            else:
                k, v = crossattn_cache["k"], crossattn_cache["v"]
        else:
            k, v = self.project_kv(context)
        attn = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.o(attn @ v)


class WanT2VCrossAttentionFixed(WanT2VCrossAttention):
    def forward(self, x, context, crossattn_cache=None):
        q = self.q(x)
        if crossattn_cache is not None:
            if not bool(crossattn_cache["is_init"]):
                k, v = self.project_kv(context)
                crossattn_cache["k"].copy_(k)
                crossattn_cache["v"].copy_(v)
                crossattn_cache["is_init"].fill_(True)
            k, v = crossattn_cache["k"], crossattn_cache["v"]
        else:
            k, v = self.project_kv(context)
        attn = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.o(attn @ v)


class CausalWanAttentionBlock(nn.Module):
    def __init__(self, dim, cross_cls):
        super().__init__()
        self.norm3 = nn.LayerNorm(dim)
        self.cross_attn = cross_cls(dim)

    def forward(self, x, context, **kwargs):
        return x + self.cross_attn(self.norm3(x), context, crossattn_cache=kwargs.get("crossattn_cache"))


def _forward_inference(blocks, x, context, crossattn_cache):
    for block_index, block in enumerate(blocks):
        kwargs = {"crossattn_cache": dict(crossattn_cache[block_index])}
        x = block(x, context, **kwargs)
    return x


def _initialize_crossattn_cache(num_blocks, batch, ctx_len, dim):
    return [
        {"k": torch.zeros(batch, ctx_len, dim), "v": torch.zeros(batch, ctx_len, dim), "is_init": False}
        for _ in range(num_blocks)
    ]


def _initialize_crossattn_cache_fixed(num_blocks, batch, ctx_len, dim):
    return [
        {"k": torch.zeros(batch, ctx_len, dim), "v": torch.zeros(batch, ctx_len, dim),
         "is_init": torch.zeros((), dtype=torch.bool)}
        for _ in range(num_blocks)
    ]


if __name__ == "__main__":
    dim, results = 8, {}
    for cls, init in ((WanT2VCrossAttention, _initialize_crossattn_cache),
                      (WanT2VCrossAttentionFixed, _initialize_crossattn_cache_fixed)):
        torch.manual_seed(0)
        blocks = nn.ModuleList(CausalWanAttentionBlock(dim, cls) for _ in range(2))
        context = torch.randn(1, 5, dim)
        cache = init(2, 1, 5, dim)
        with torch.no_grad():
            outs = [_forward_inference(blocks, torch.randn(1, 3, dim), context, cache) for _ in range(3)]
        results[cls] = (cache[0]["k"].abs().sum().item(), blocks[0].cross_attn.k_calls)
    assert results[WanT2VCrossAttention] == (0.0, 3)
    assert results[WanT2VCrossAttentionFixed][0] > 0 and results[WanT2VCrossAttentionFixed][1] == 1
    print("ok")
