# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/38908 — GptOssForCausalLM._load_weights_mxfp4 partitioned the whole weight stream into `mxfp4_weights` / `normal_weights` lists before loading either, so every RunAI-streamed view was retained after the staging buffer had been reused; the fix streams expert weights through a generator and clones retained non-expert weights that carry the RunAI marker.
import torch
from torch import nn

RUNAI_STREAMER_TENSOR_ATTR = "_runai_streamed"


def runai_weights(checkpoint, staging):
    for name, src in checkpoint:
        n = src.numel()
        staging[:n].copy_(src.reshape(-1))
        t = staging[:n].view(src.shape)
        setattr(t, RUNAI_STREAMER_TENSOR_ATTR, True)
        yield name, t  # maybe: A (zero-copy staging view by streamer contract)


def _clone_if_runai_streamed_tensor(weight):
    if getattr(weight, RUNAI_STREAMER_TENSOR_ATTR, False):
        return weight.clone()
    return weight


class QuantConfig:
    def get_name(self):
        return "mxfp4"


class GptOssForCausalLM(nn.Module):
    def __init__(self, n_experts=2, hidden=8):
        super().__init__()
        self.quant_config = QuantConfig()
        self.experts_w13 = nn.Parameter(torch.zeros(n_experts, hidden, hidden), requires_grad=False)
        self.embed_tokens = nn.Parameter(torch.zeros(32, hidden), requires_grad=False)
        self.norm = nn.Parameter(torch.zeros(hidden), requires_grad=False)

    @torch.no_grad()
    def _load_mxfp4_experts_weights(self, weights):
        loaded = set()
        for name, weight in weights:
            e = int(name.split(".experts.")[1].split(".")[0])
            self.experts_w13[e].copy_(weight)
            loaded.add(name)
        return loaded

    @torch.no_grad()
    def _load_normal_weights(self, weights, other_loaded_param_names=()):
        for name, weight in weights:
            getattr(self, name.split(".")[-2]).copy_(weight)

    def load_weights(self, weights):
        return self._load_weights_mxfp4(weights)

    def _load_weights_mxfp4(self, weights):
        mxfp4_weights = []
        normal_weights = []
        for name, weight in weights:
            if ".experts" in name and self.quant_config is not None and self.quant_config.get_name() == "mxfp4":
                mxfp4_weights.append((name, weight))  # want: A
            else:
                normal_weights.append((name, weight))  # want: A
        mxfp4_loaded_params = self._load_mxfp4_experts_weights(mxfp4_weights)
        self._load_normal_weights(normal_weights, other_loaded_param_names=mxfp4_loaded_params)
        return mxfp4_loaded_params


class GptOssForCausalLMFixed(GptOssForCausalLM):
    def _load_weights_mxfp4(self, weights):
        normal_weights = []

        def mxfp4_weight_stream():
            # Expert weights are copied into their parameter as they arrive; the rest are
            # held until afterwards and need their own memory.
            for name, weight in weights:
                if ".experts" in name and self.quant_config is not None and self.quant_config.get_name() == "mxfp4":
                    yield name, weight
                else:
                    normal_weights.append((name, _clone_if_runai_streamed_tensor(weight)))

        mxfp4_loaded_params = self._load_mxfp4_experts_weights(mxfp4_weight_stream())
        self._load_normal_weights(normal_weights, other_loaded_param_names=mxfp4_loaded_params)
        return mxfp4_loaded_params


if __name__ == "__main__":
    torch.manual_seed(0)
    ckpt = [
        ("model.embed_tokens.weight", torch.randn(32, 8)),
        ("model.layers.0.mlp.experts.0.w13", torch.randn(8, 8)),
        ("model.norm.weight", torch.randn(8)),
        ("model.layers.0.mlp.experts.1.w13", torch.randn(8, 8)),
    ]
    staging = torch.empty(32 * 8)
    bad, good = GptOssForCausalLM(), GptOssForCausalLMFixed()
    bad.load_weights(runai_weights(ckpt, staging))
    good.load_weights(runai_weights(ckpt, staging))

    def intact(m):
        return (torch.equal(m.embed_tokens, ckpt[0][1]) and torch.equal(m.norm, ckpt[2][1])
                and torch.equal(m.experts_w13[0], ckpt[1][1]) and torch.equal(m.experts_w13[1], ckpt[3][1]))

    print("partition lists of streamed views -> weights intact:", intact(bad))
    print("generator + owned copies          -> weights intact:", intact(good))
    assert not intact(bad) and intact(good)
