# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/22715 — DeepseekV2ForCausalLM.load_weights parked q_a_proj / kv_a_proj_with_mqa tensors in `cached_a_proj` until both halves arrived to torch.cat them into fused_qkv_a_proj_with_mqa; with the RunAI distributed streamer those were views into a staging buffer reused across batches, so the fused MLA weight came out corrupted (model emits "!!!"); the fix clones before caching.
import torch
from torch import nn


def default_weight_loader(param, loaded_weight):
    with torch.no_grad():
        param.data.copy_(loaded_weight)


def distributed_stream(checkpoint, staging):
    for name, src in checkpoint:
        n = src.numel()
        staging[:n].copy_(src.reshape(-1))
        yield name, staging[:n].view(src.shape)  # maybe: A (streamer staging view; consumer must not retain)


class DeepseekV2ForCausalLM(nn.Module):
    def __init__(self, hidden=16, q_lora_rank=8, kv_lora_rank=4):
        super().__init__()
        self.fuse_qkv_a_proj = True
        self.fused_qkv_a_proj_with_mqa = nn.Linear(hidden, q_lora_rank + kv_lora_rank, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def _named(self, name):
        return name.split("self_attn.")[-1]

    def load_weights(self, weights):
        params_dict = {n: p for n, p in self.named_parameters()}
        cached_a_proj = {} if self.fuse_qkv_a_proj else None
        for name, loaded_weight in weights:
            if self.fuse_qkv_a_proj and ("q_a_proj" in name or "kv_a_proj_with_mqa" in name):
                cached_a_proj[name] = loaded_weight  # want: A
                q_a_proj_name = name if "q_a_proj" in name else name.replace("kv_a_proj_with_mqa", "q_a_proj")
                kv_a_proj_name = name if "kv_a_proj_with_mqa" in name else name.replace("q_a_proj", "kv_a_proj_with_mqa")
                # When both q_a_proj and kv_a_proj_with_mqa has been cached, load the fused weight to parameter
                if q_a_proj_name in cached_a_proj and kv_a_proj_name in cached_a_proj:
                    q_a_proj_weight = cached_a_proj[q_a_proj_name]
                    kv_a_proj_weight = cached_a_proj[kv_a_proj_name]
                    fused_weight = torch.cat([q_a_proj_weight, kv_a_proj_weight], dim=0)
                    param = params_dict[self._named(q_a_proj_name).replace("q_a_proj", "fused_qkv_a_proj_with_mqa")]
                    weight_loader = getattr(param, "weight_loader", default_weight_loader)
                    weight_loader(param, fused_weight)
                    cached_a_proj.pop(q_a_proj_name)
                    cached_a_proj.pop(kv_a_proj_name)
            else:
                param = params_dict[self._named(name)]
                weight_loader = getattr(param, "weight_loader", default_weight_loader)
                weight_loader(param, loaded_weight)


class DeepseekV2ForCausalLMFixed(DeepseekV2ForCausalLM):
    def load_weights(self, weights):
        params_dict = {n: p for n, p in self.named_parameters()}
        cached_a_proj = {} if self.fuse_qkv_a_proj else None
        for name, loaded_weight in weights:
            if self.fuse_qkv_a_proj and ("q_a_proj" in name or "kv_a_proj_with_mqa" in name):
                # the streamer may reuse this buffer before the partner shard arrives
                cached_a_proj[name] = loaded_weight.clone()
                q_a_proj_name = name if "q_a_proj" in name else name.replace("kv_a_proj_with_mqa", "q_a_proj")
                kv_a_proj_name = name if "kv_a_proj_with_mqa" in name else name.replace("q_a_proj", "kv_a_proj_with_mqa")
                if q_a_proj_name in cached_a_proj and kv_a_proj_name in cached_a_proj:
                    fused_weight = torch.cat([cached_a_proj.pop(q_a_proj_name), cached_a_proj.pop(kv_a_proj_name)], dim=0)
                    param = params_dict[self._named(q_a_proj_name).replace("q_a_proj", "fused_qkv_a_proj_with_mqa")]
                    weight_loader = getattr(param, "weight_loader", default_weight_loader)
                    weight_loader(param, fused_weight)
            else:
                param = params_dict[self._named(name)]
                weight_loader = getattr(param, "weight_loader", default_weight_loader)
                weight_loader(param, loaded_weight)


if __name__ == "__main__":
    torch.manual_seed(0)
    q_a, kv_a = torch.randn(8, 16), torch.randn(4, 16)
    ckpt = [
        ("model.layers.0.self_attn.q_a_proj.weight", q_a),
        ("model.layers.0.self_attn.o_proj.weight", torch.randn(16, 16)),
        ("model.layers.0.self_attn.kv_a_proj_with_mqa.weight", kv_a),
    ]
    staging = torch.empty(16 * 16)
    bad, good = DeepseekV2ForCausalLM(), DeepseekV2ForCausalLMFixed()
    bad.load_weights(distributed_stream(ckpt, staging))
    good.load_weights(distributed_stream(ckpt, staging))
    want = torch.cat([q_a, kv_a])
    ok_bad = torch.equal(bad.fused_qkv_a_proj_with_mqa.weight, want)
    ok_good = torch.equal(good.fused_qkv_a_proj_with_mqa.weight, want)
    print("cached views  -> fused q/kv_a weight correct:", ok_bad)
    print("cached clones -> fused q/kv_a weight correct:", ok_good)
    assert not ok_bad and ok_good
