# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/4961 — "[Fix] weights update for deepseek when enabling cuda graph": when weights were pushed with `update_weights_from_tensor` after the engine started, DeepseekV2ForCausalLM.load_weights rebuilt `self_attn.w_kc` / `self_attn.w_vc` from kv_b_proj as new tensors, so their addresses changed and the already-captured CUDA graphs kept decoding with the old absorbed matrices. The proposed fix writes the re-derived matrices into the existing w_kc/w_vc tensors (the approach later merged as `bind_or_assign`).
import torch
from torch import nn


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, num_heads=2, qk_nope_head_dim=4, v_head_dim=3, kv_lora_rank=5):
        super().__init__()
        self.qk_nope_head_dim = qk_nope_head_dim
        self.v_head_dim = v_head_dim
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)
        self.w_kc = None
        self.w_vc = None


def _split_kv_b_proj(self_attn):
    w_kc, w_vc = self_attn.kv_b_proj.weight.unflatten(
        0, (-1, self_attn.qk_nope_head_dim + self_attn.v_head_dim)
    ).split([self_attn.qk_nope_head_dim, self_attn.v_head_dim], dim=1)
    return w_kc.transpose(1, 2).contiguous().transpose(1, 2), w_vc.contiguous().transpose(1, 2)


class DeepseekV2ForCausalLM(nn.Module):
    def __init__(self, num_hidden_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(nn.ModuleDict({"self_attn": DeepseekV2AttentionMLA()}) for _ in range(num_hidden_layers))

    def _absorb(self, self_attn):
        self_attn.w_kc, self_attn.w_vc = _split_kv_b_proj(self_attn)  # want: B

    @torch.no_grad()
    def load_weights(self, weights):
        params_dict = dict(self.named_parameters())
        for name, loaded_weight in weights:
            params_dict[name].data.copy_(loaded_weight)
        for layer in self.layers:
            self._absorb(layer["self_attn"])


class DeepseekV2ForCausalLMFixed(DeepseekV2ForCausalLM):
    def _absorb(self, self_attn):
        w_kc, w_vc = _split_kv_b_proj(self_attn)
        if self_attn.w_kc is None:
            self_attn.w_kc, self_attn.w_vc = w_kc, w_vc
        else:
            self_attn.w_kc.copy_(w_kc)
            self_attn.w_vc.copy_(w_vc)


class ModelRunner:
    def __init__(self, model):
        self.model = model
        self.graph_inputs = None

    def init_cuda_graphs(self):
        self.graph_inputs = [(l["self_attn"].w_kc, l["self_attn"].w_vc) for l in self.model.layers]

    def update_weights_from_tensor(self, named_tensors):
        self.model.load_weights(named_tensors)
        return True, "Success"


if __name__ == "__main__":
    for cls, expect_stale in ((DeepseekV2ForCausalLM, True), (DeepseekV2ForCausalLMFixed, False)):
        torch.manual_seed(0)
        runner = ModelRunner(cls())
        names = [n for n, _ in runner.model.named_parameters()]
        runner.model.load_weights([(n, torch.randn(14, 5)) for n in names])
        runner.init_cuda_graphs()
        captured_vc = runner.graph_inputs[1][1]
        snapshot = captured_vc.clone()
        runner.update_weights_from_tensor([(n, torch.randn(14, 5)) for n in names])
        live_vc = runner.model.layers[1]["self_attn"].w_vc
        assert not torch.equal(live_vc, snapshot)
        assert torch.equal(captured_vc, snapshot) == expect_stale
    print("ok")
