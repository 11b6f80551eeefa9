# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/25531 — _add_lora_gate_up_delta (called from the after_gate_up hook closure of every MoE layer) computed `(adapter_enabled * (lora_ranks > 0)).any().item()` to decide whether any LoRA was active: one cudaStreamSynchronize per MoE layer per step (260 syncs per forward). The fix removed the .any().item() guard and always launches the LoRA kernel, which early-exits on disabled adapters.
from dataclasses import dataclass
from typing import Callable, Optional

import torch

_IS_CAPTURE_MODE = False


def get_is_capture_mode():
    return _IS_CAPTURE_MODE


@dataclass
class LoRAInfo:
    gate_up_lora_a_weights: torch.Tensor  # [num_loras, num_experts, 2 * max_rank, hidden_dim]
    gate_up_lora_b_weights: torch.Tensor  # [num_loras, num_experts, gate_up_dim, max_rank]
    lora_ranks: torch.Tensor  # [num_loras]
    adapter_enabled: torch.Tensor  # [num_loras]
    max_lora_rank: int
    num_experts: int


@dataclass
class LoRAHooks:
    after_gate_up: Optional[Callable] = None


def fused_moe_lora(output, qcurr_hidden_states, lora_a_stacked, lora_b_stacked, topk_weights,
                   topk_ids, token_lora_mapping, adapter_enabled, max_lora_rank):
    # reference (non-Triton) kernel: per-program early exit is a multiply by adapter_enabled
    M, top_k, _ = output.shape
    enabled = adapter_enabled[token_lora_mapping].to(output.dtype)  # [M]
    for half, (a, b) in enumerate(zip(lora_a_stacked, lora_b_stacked)):
        a_sel = a[token_lora_mapping[:, None], topk_ids]  # [M, top_k, r, hidden]
        b_sel = b[token_lora_mapping[:, None], topk_ids]  # [M, top_k, inter, r]
        shrink = torch.einsum("mkrh,mh->mkr", a_sel, qcurr_hidden_states)
        expand = torch.einsum("mkir,mkr->mki", b_sel, shrink)
        inter = expand.shape[-1]
        output[:, :, half * inter:(half + 1) * inter] += expand * enabled[:, None, None]


def _add_lora_gate_up_delta(hidden_states, intermediate_cache, topk_weights, topk_ids, lora_info,
                            token_lora_mapping):
    """Add LoRA gate_up delta to intermediate_cache in-place."""
    if get_is_capture_mode():
        # During CUDA graph capture, always enter the LoRA path so that the kernels are recorded.
        has_active_lora = True
    else:
        num_loras = len(lora_info.lora_ranks)
        enabled = lora_info.adapter_enabled[:num_loras] * (lora_info.lora_ranks > 0).to(lora_info.adapter_enabled.dtype)
        has_active_lora = enabled.any().item()  # want: D
    if not has_active_lora or lora_info is None or lora_info.max_lora_rank == 0:
        return
    r = lora_info.max_lora_rank
    gate_up_a = lora_info.gate_up_lora_a_weights
    gate_up_b = lora_info.gate_up_lora_b_weights
    inter_size = gate_up_b.shape[2] // 2
    lora_a_stacked = [gate_up_a[:, :, :r, :], gate_up_a[:, :, r:2 * r, :]]
    lora_b_stacked = [gate_up_b[:, :, :inter_size, :], gate_up_b[:, :, inter_size:, :]]
    fused_moe_lora(intermediate_cache, hidden_states, lora_a_stacked, lora_b_stacked, topk_weights,
                   topk_ids, token_lora_mapping, lora_info.adapter_enabled, r)


def _add_lora_gate_up_delta_fixed(hidden_states, intermediate_cache, topk_weights, topk_ids, lora_info,
                                  token_lora_mapping):
    if lora_info is None or lora_info.max_lora_rank == 0:
        return
    r = lora_info.max_lora_rank
    gate_up_a = lora_info.gate_up_lora_a_weights
    gate_up_b = lora_info.gate_up_lora_b_weights
    inter_size = gate_up_b.shape[2] // 2
    lora_a_stacked = [gate_up_a[:, :, :r, :], gate_up_a[:, :, r:2 * r, :]]
    lora_b_stacked = [gate_up_b[:, :, :inter_size, :], gate_up_b[:, :, inter_size:, :]]
    fused_moe_lora(intermediate_cache, hidden_states, lora_a_stacked, lora_b_stacked, topk_weights,
                   topk_ids, token_lora_mapping, lora_info.adapter_enabled, r)


def build_lora_hooks(hidden_states, lora_info, topk_ids, token_lora_mapping, delta_fn=_add_lora_gate_up_delta):
    """Build LoRA hook closures for injection into any MoE runner."""
    if lora_info is None or lora_info.max_lora_rank == 0:
        return LoRAHooks()

    def after_gate_up(hidden_states, intermediate_cache1, topk_weights, topk_ids):
        delta_fn(hidden_states, intermediate_cache1, topk_weights, topk_ids, lora_info, token_lora_mapping)

    return LoRAHooks(after_gate_up=after_gate_up)


def run_moe_layer(hidden_states, w13, topk_ids, topk_weights, hooks):
    # gate_up projection for every (token, expert) pair: [M, top_k, 2 * inter]
    intermediate_cache1 = torch.einsum("mh,mkih->mki", hidden_states, w13[topk_ids])
    if hooks.after_gate_up is not None:
        hooks.after_gate_up(hidden_states, intermediate_cache1, topk_weights, topk_ids)
    gate, up = intermediate_cache1.chunk(2, dim=-1)
    return (torch.nn.functional.silu(gate) * up * topk_weights[..., None]).sum(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    M, H, E, I, R, L, K = 8, 16, 4, 12, 4, 3, 2
    info = LoRAInfo(torch.randn(L, E, 2 * R, H) * 0.1, torch.randn(L, E, 2 * I, R) * 0.1,
                    torch.tensor([4, 0, 4]), torch.tensor([1, 0, 0]), R, E)
    x, w13 = torch.randn(M, H), torch.randn(E, 2 * I, H) * 0.1
    topk_weights, topk_ids = torch.softmax(torch.randn(M, E), -1).topk(K, dim=-1)
    mapping = torch.randint(0, L, (M,))
    outs = []
    for fn in (_add_lora_gate_up_delta, _add_lora_gate_up_delta_fixed):
        outs.append([run_moe_layer(x, w13, topk_ids, topk_weights, build_lora_hooks(x, info, topk_ids, mapping, fn))
                     for _layer in range(4)])
    assert all(torch.allclose(a, b) for a, b in zip(*outs))
    print("outputs match across", len(outs[0]), "MoE layers")
