# source: verl-project/verl https://github.com/verl-project/verl/pull/6473 — "[megatron] feat: support DeepSeek V4 GRPO": after each rollout weight sync, the vLLM DSv4 helper walked the fused-MoE modules and rebuilt them with `module.w13_weight = _make_mxfp4_moe_param(...)` (and likewise w2). The reviewer noted that reconstructing the weight breaks CUDA graph — the captured graph keeps the old parameter's storage, so updated expert weights are never seen — so DSv4 could only run eagerly until a direct `weight.copy_` path exists (vllm-project/vllm#48312).
import torch
from torch import nn


class FusedMoE(nn.Module):
    def __init__(self, num_experts, hidden_size, intermediate_size):
        super().__init__()
        self.num_experts = num_experts
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.w13_weight = nn.Parameter(torch.zeros(num_experts, 2 * intermediate_size, hidden_size), requires_grad=False)
        self.w2_weight = nn.Parameter(torch.zeros(num_experts, hidden_size, intermediate_size), requires_grad=False)
        self.w13_weight.weight_loader = self.weight_loader
        self.w2_weight.weight_loader = self.weight_loader

    def weight_loader(self, param, loaded_weight, expert_id):
        param.data[expert_id].copy_(loaded_weight)


def _is_mxfp4_fused_moe_module(module):
    return isinstance(module, FusedMoE)


def _shuffle_for_kernel(w):
    return w.flip(-1).contiguous()


def _make_mxfp4_moe_param(data, weight_loader):
    param = nn.Parameter(data, requires_grad=False)
    param.weight_loader = weight_loader
    return param


def process_weights_after_sync(model):
    for _, module in model.named_modules():
        if not _is_mxfp4_fused_moe_module(module):
            continue
        weight_loader = module.weight_loader
        module.w13_weight = _make_mxfp4_moe_param(_shuffle_for_kernel(module.w13_weight.data), weight_loader)  # want: B
        module.w2_weight = _make_mxfp4_moe_param(_shuffle_for_kernel(module.w2_weight.data), weight_loader)  # want: B


def process_weights_after_sync_fixed(model):
    for _, module in model.named_modules():
        if not _is_mxfp4_fused_moe_module(module):
            continue
        module.w13_weight.data.copy_(_shuffle_for_kernel(module.w13_weight.data))
        module.w2_weight.data.copy_(_shuffle_for_kernel(module.w2_weight.data))


def update_weights(model, named_weights, post_process):
    params = dict(model.named_parameters())
    for name, (expert_id, w) in named_weights:
        param = params[name]
        param.weight_loader(param, w, expert_id)
    post_process(model)


if __name__ == "__main__":
    for post, expect_stale in ((process_weights_after_sync, True), (process_weights_after_sync_fixed, False)):
        torch.manual_seed(0)
        model = nn.Sequential(FusedMoE(2, 4, 3))
        moe = model[0]
        named = [("0.w13_weight", (e, torch.randn(6, 4))) for e in range(2)]
        update_weights(model, named, post)
        graph_w13 = moe.w13_weight  # captured by the CUDA graph
        snapshot = graph_w13.detach().clone()
        named = [("0.w13_weight", (e, torch.randn(6, 4))) for e in range(2)]
        update_weights(model, named, post)
        assert not torch.equal(moe.w13_weight.detach(), snapshot)
        assert torch.equal(graph_w13.detach(), moe.w13_weight.detach()) == (not expect_stale)
    print("ok")
