# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/6265 — DeepseekV2ForCausalLM.post_load_weights rebuilt the absorbed MLA matrices on every call with `self_attn.w_kc = w_kc.transpose(1, 2).contiguous().transpose(1, 2)` / `self_attn.w_vc = ...`. In RL, update-weights calls post_load_weights a second time after CUDA graphs were captured, so the fresh weights went into new tensors while the graphs kept reading the old w_kc/w_vc storage. The fix added `bind_or_assign`, which `copy_`s into the existing tensor when one is already bound.
import torch
from torch import nn


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, num_heads, qk_nope_head_dim, v_head_dim, kv_lora_rank):
        super().__init__()
        self.num_local_heads = num_heads
        self.qk_nope_head_dim = qk_nope_head_dim
        self.v_head_dim = v_head_dim
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)
        self.w_kc = None
        self.w_vc = None
        self.w_scale = None

    def forward_absorb(self, q_nope, latent, w_kc=None, w_vc=None):
        w_kc = self.w_kc if w_kc is None else w_kc
        w_vc = self.w_vc if w_vc is None else w_vc
        q_nope_out = torch.bmm(q_nope.transpose(0, 1), w_kc)
        attn = torch.einsum("hbc,bc->hb", q_nope_out, latent).softmax(-1)
        return torch.bmm(attn.unsqueeze(-1) * latent.unsqueeze(0), w_vc)


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = DeepseekV2AttentionMLA(**cfg)


class DeepseekV2Model(nn.Module):
    def __init__(self, cfg, num_hidden_layers):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(num_hidden_layers))


class DeepseekV2ForCausalLM(nn.Module):
    def __init__(self, cfg, num_hidden_layers=2):
        super().__init__()
        self.num_hidden_layers = num_hidden_layers
        self.model = DeepseekV2Model(cfg, num_hidden_layers)

    @torch.no_grad()
    def load_weights(self, weights):
        params_dict = dict(self.named_parameters())
        for name, loaded_weight in weights:
            params_dict[name].data.copy_(loaded_weight)
        self.post_load_weights()

    @torch.no_grad()
    def post_load_weights(self):
        for layer_id in range(self.num_hidden_layers):
            self_attn = self.model.layers[layer_id].self_attn
            w = self_attn.kv_b_proj.weight
            w_kc, w_vc = w.unflatten(
                0, (-1, self_attn.qk_nope_head_dim + self_attn.v_head_dim)
            ).split([self_attn.qk_nope_head_dim, self_attn.v_head_dim], dim=1)
            self_attn.w_kc = w_kc.transpose(1, 2).contiguous().transpose(1, 2)  # want: B
            self_attn.w_vc = w_vc.contiguous().transpose(1, 2)  # want: B


def bind_or_assign(target, source):
    if target is not None:
        target.copy_(source)
        return target
    else:
        return source


class DeepseekV2ForCausalLMFixed(DeepseekV2ForCausalLM):
    @torch.no_grad()
    def post_load_weights(self):
        for layer_id in range(self.num_hidden_layers):
            self_attn = self.model.layers[layer_id].self_attn
            w = self_attn.kv_b_proj.weight
            w_kc, w_vc = w.unflatten(
                0, (-1, self_attn.qk_nope_head_dim + self_attn.v_head_dim)
            ).split([self_attn.qk_nope_head_dim, self_attn.v_head_dim], dim=1)
            self_attn.w_kc = bind_or_assign(
                self_attn.w_kc, w_kc.transpose(1, 2).contiguous().transpose(1, 2)
            )
            self_attn.w_vc = bind_or_assign(self_attn.w_vc, w_vc.contiguous().transpose(1, 2))


class CudaGraphRunner:
    """Stands in for graph capture: the tensors read at capture time are burned in."""

    def __init__(self, model):
        self.captured = [(l.self_attn.w_kc, l.self_attn.w_vc) for l in model.model.layers]


def _weights(model, seed):
    g = torch.Generator().manual_seed(seed)
    return [(n, torch.randn(p.shape, generator=g)) for n, p in model.named_parameters()]


if __name__ == "__main__":
    cfg = dict(num_heads=2, qk_nope_head_dim=4, v_head_dim=3, kv_lora_rank=5)
    for cls, expect_stale in ((DeepseekV2ForCausalLM, True), (DeepseekV2ForCausalLMFixed, False)):
        torch.manual_seed(0)
        model = cls(cfg)
        model.load_weights(_weights(model, 1))
        runner = CudaGraphRunner(model)
        old_kc = runner.captured[0][0].clone()
        model.load_weights(_weights(model, 2))
        new_kc = model.model.layers[0].self_attn.w_kc
        graph_kc = runner.captured[0][0]
        assert not torch.equal(old_kc, new_kc)
        assert torch.equal(graph_kc, old_kc) == expect_stale
        assert torch.equal(graph_kc, new_kc) == (not expect_stale)
    print("ok")
