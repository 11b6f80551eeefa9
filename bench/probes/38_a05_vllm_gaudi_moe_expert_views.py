# source: vllm-project/vllm-gaudi https://github.com/vllm-project/vllm-gaudi/pull/1594 — After upstream moved all local experts into one contiguous w13_weight/w2_weight Parameter, HPUUnquantizedFusedMoEMethod.process_weights_after_loading gave every per-expert MoeMatmul a slice `layer.w13_weight.data[expert_id]` as its long-lived `.weight`. A slice keeps the whole parent storage alive, so during INC FP8 convert the full bf16 expert block could not be freed as experts were quantized and bf16 + fp8 copies coexisted (OOM on Llama-4 Maverick EP8). The fix adds _detach_moe_op_weights_to_independent, which replaces each slice with a clone and drops the contiguous parent before convert.
import torch


class MoeMatmul(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def set_weight(self, w):
        self.weight = w


class VllmMixtureOfExpertsOp(torch.nn.Module):
    def __init__(self, global_num_experts: int, num_total_experts: int):
        super().__init__()
        self.global_num_experts = global_num_experts
        self.num_experts = num_total_experts
        self.w13_list = torch.nn.ModuleList([MoeMatmul() for _ in range(num_total_experts)])
        self.w2_list = torch.nn.ModuleList([MoeMatmul() for _ in range(num_total_experts)])
        self._cached_w13_views = None
        self._cached_w2_views = None


class FusedMoE(torch.nn.Module):
    def __init__(self, num_experts: int, hidden: int, inter: int):
        super().__init__()
        self.local_num_experts = num_experts
        self.global_num_experts = num_experts
        self.w13_weight = torch.nn.Parameter(torch.randn(num_experts, 2 * inter, hidden, dtype=torch.bfloat16),
                                             requires_grad=False)
        self.w2_weight = torch.nn.Parameter(torch.randn(num_experts, hidden, inter, dtype=torch.bfloat16),
                                            requires_grad=False)


class HPUUnquantizedFusedMoEMethod:
    def process_weights_after_loading(self, layer: torch.nn.Module) -> None:
        num_experts = layer.local_num_experts
        layer.moe_op = VllmMixtureOfExpertsOp(layer.global_num_experts, num_experts)
        for expert_id in range(layer.local_num_experts):
            layer.moe_op.w13_list[expert_id].set_weight(layer.w13_weight.data[expert_id])  # want: A
            layer.moe_op.w2_list[expert_id].set_weight(layer.w2_weight.data[expert_id])  # want: A


def _detach_moe_op_weights_to_independent(model: torch.nn.Module, device: str) -> None:
    """Give each ``moe_op`` expert weight independent storage before FP8 convert."""
    target_type = torch.device(device).type
    for module in model.modules():
        moe_op = getattr(module, "moe_op", None)
        if moe_op is None:
            continue
        touched = False
        for param_name, list_name in (("w13_weight", "w13_list"), ("w2_weight", "w2_list")):
            param = getattr(module, param_name, None)
            weight_list = getattr(moe_op, list_name, None)
            if not isinstance(param, torch.Tensor) or weight_list is None:
                continue
            if param.device.type != target_type:
                continue
            if param.dim() == 0 or param.shape[0] != len(weight_list):
                continue
            for expert_id, item in enumerate(weight_list):
                w = getattr(item, "weight", None)
                if isinstance(w, torch.Tensor):
                    # Clone breaks the slice->parent storage link so the parent
                    # can be freed; the clone owns its own storage.
                    item.weight = param.data[expert_id].clone()
                    touched = True
            # Drop the contiguous parent; with every slice now independent its
            # storage refcount hits zero and the bf16 block is released.
            param.data = torch.empty(0, dtype=param.dtype, device=param.device)
        if touched:
            for cache_attr in ("_cached_w13_views", "_cached_w2_views"):
                if hasattr(moe_op, cache_attr):
                    setattr(moe_op, cache_attr, None)


def load_model(num_experts=8, detach=False):
    model = torch.nn.Sequential(FusedMoE(num_experts, hidden=32, inter=16))
    HPUUnquantizedFusedMoEMethod().process_weights_after_loading(model[0])
    if detach:
        _detach_moe_op_weights_to_independent(model, "cpu")
    return model


if __name__ == "__main__":
    torch.manual_seed(0)
    model = load_model()
    layer = model[0]
    per_expert = layer.moe_op.w13_list[0].weight.nbytes
    # every expert's weight pins the whole [E, 2I, H] bf16 block
    assert layer.moe_op.w13_list[3].weight.untyped_storage().nbytes() == 8 * per_expert
    # dropping the parent parameter data does not free it: the slices still hold the storage
    parent_ptr = layer.w13_weight.untyped_storage().data_ptr()
    layer.w13_weight.data = torch.empty(0, dtype=torch.bfloat16)
    assert layer.moe_op.w13_list[3].weight.untyped_storage().data_ptr() == parent_ptr

    torch.manual_seed(0)
    fixed = load_model(detach=True)
    fl = fixed[0]
    assert torch.equal(fl.moe_op.w13_list[3].weight, model[0].moe_op.w13_list[3].weight)
    assert all(m.weight.untyped_storage().nbytes() == per_expert for m in fl.moe_op.w13_list)
    assert fl.w13_weight.numel() == 0 and fl.w2_weight.numel() == 0
    print("ok")
