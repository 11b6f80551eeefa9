# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/39650 — ModelForPooling.load_weights kept the weights it probed (to detect the checkpoint prefix) in a list and then rebuilt the stream with `(*seen_weights, *weights)`, so buffer-reusing iterators (runai_streamer) had overwritten the retained views before they were loaded; the fix chains lazily with itertools.chain and clones the probed weights.
import itertools

import torch
from torch import nn


def streamed_weights(checkpoint, staging):
    """Like runai_safetensors_weights_iterator with RUNAI_STREAMER_MEMORY_LIMIT=0:
    every tensor is a view of the same staging buffer."""
    for name, src in checkpoint.items():
        n = src.numel()
        staging[:n].copy_(src.reshape(-1))
        yield name, staging[:n].view(src.shape)  # maybe: A (zero-copy streamer contract: consumers must clone to retain)


class Qwen2Model(nn.Module):
    packed_modules_mapping = {"qkv_proj": ["q_proj", "k_proj", "v_proj"]}

    def __init__(self, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(16, hidden)
        self.qkv_proj = nn.Linear(hidden, 3 * hidden, bias=False)

    @torch.no_grad()
    def load_weights(self, weights):
        loaded = set()
        for name, w in weights:
            for shard_id, shard in enumerate(self.packed_modules_mapping["qkv_proj"]):
                if shard in name:
                    rows = slice(shard_id * w.shape[0], (shard_id + 1) * w.shape[0])
                    self.qkv_proj.weight[rows].copy_(w)
                    loaded.add("qkv_proj.weight")
                    break
            else:
                getattr(self, name.split(".")[0]).weight.copy_(w)
                loaded.add(name)
        return loaded


class ModelForPooling(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Qwen2Model()

    def load_weights(self, weights):
        weights = ((name, data) for name, data in weights if not name.startswith("lm_head."))
        # Probe until we see a decoder weight to learn whether names carry "model."
        seen_weights = []
        has_prefix = False
        for name, data in weights:
            seen_weights.append((name, data))  # want: A
            if "_proj" in name:
                has_prefix = name.startswith("model.")
                break
        weights = (*seen_weights, *weights)  # maybe: A (materialises every remaining streamed view at once)
        if has_prefix:
            weights = ((n[len("model."):], d) for n, d in weights)
        return self.model.load_weights(weights)


class ModelForPoolingFixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Qwen2Model()

    def load_weights(self, weights):
        weights = ((name, data) for name, data in weights if not name.startswith("lm_head."))
        seen_weights = []
        has_prefix = False
        for name, data in weights:
            seen_weights.append((name, data.clone()))
            if "_proj" in name:
                has_prefix = name.startswith("model.")
                break
        weights = itertools.chain(seen_weights, weights)
        if has_prefix:
            weights = ((n[len("model."):], d) for n, d in weights)
        return self.model.load_weights(weights)


if __name__ == "__main__":
    torch.manual_seed(0)
    ref = Qwen2Model()
    ckpt = {"model.embed_tokens.weight": ref.embed_tokens.weight.detach().clone()}
    q, k, v = ref.qkv_proj.weight.detach().clone().chunk(3)
    ckpt.update({"model.q_proj.weight": q, "model.k_proj.weight": k, "model.v_proj.weight": v})
    ckpt["lm_head.weight"] = torch.randn(16, 8)
    staging = torch.empty(16 * 8)

    bad, good = ModelForPooling(), ModelForPoolingFixed()
    bad.load_weights(streamed_weights(ckpt, staging))
    good.load_weights(streamed_weights(ckpt, staging))
    ok_bad = torch.equal(bad.model.embed_tokens.weight, ref.embed_tokens.weight) and torch.equal(
        bad.model.qkv_proj.weight, ref.qkv_proj.weight)
    ok_good = torch.equal(good.model.embed_tokens.weight, ref.embed_tokens.weight) and torch.equal(
        good.model.qkv_proj.weight, ref.qkv_proj.weight)
    print("probed views  -> weights intact:", ok_bad)
    print("probed clones -> weights intact:", ok_good)
    assert not ok_bad and ok_good
