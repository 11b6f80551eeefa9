# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/24246 — _add_lora_gate_up_delta checked whether any LoRA adapter was active with `.any().item()` on GPU tensors on every MoE layer forward, a GPU->CPU sync per layer; the fix replaces it with host-side checks (`lora_info is None or lora_info.max_lora_rank == 0`).
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LoRABatchInfo:
    bs: int
    seg_indptr: torch.Tensor      # [bs + 1] on device
    weight_indices: torch.Tensor  # [bs] adapter slot per request, on device
    lora_ranks: torch.Tensor      # [max_loras] rank of each slot, on device
    scalings: torch.Tensor        # [max_loras] on device
    max_lora_rank: int            # computed by the scheduler on the host


def _add_lora_gate_up_delta(hidden_states, gate_up_output, lora_info, lora_a, lora_b):
    if lora_info is None:
        return gate_up_output
    has_active_lora = (lora_info.lora_ranks[lora_info.weight_indices] > 0).any()
    if not has_active_lora.item():  # want: D
        return gate_up_output
    seg_lens = lora_info.seg_indptr[1:] - lora_info.seg_indptr[:-1]
    token_slot = torch.repeat_interleave(lora_info.weight_indices, seg_lens, output_size=hidden_states.shape[0])
    a = lora_a[token_slot]  # [T, r, H]
    b = lora_b[token_slot]  # [T, 2I, r]
    delta = torch.einsum("trh,th->tr", a, hidden_states)
    delta = torch.einsum("tor,tr->to", b, delta) * lora_info.scalings[token_slot].unsqueeze(-1)
    return gate_up_output + delta


def _add_lora_gate_up_delta_fixed(hidden_states, gate_up_output, lora_info, lora_a, lora_b):
    if lora_info is None or lora_info.max_lora_rank == 0:
        return gate_up_output
    seg_lens = lora_info.seg_indptr[1:] - lora_info.seg_indptr[:-1]
    token_slot = torch.repeat_interleave(lora_info.weight_indices, seg_lens, output_size=hidden_states.shape[0])
    a = lora_a[token_slot]
    b = lora_b[token_slot]
    delta = torch.einsum("trh,th->tr", a, hidden_states)
    delta = torch.einsum("tor,tr->to", b, delta) * lora_info.scalings[token_slot].unsqueeze(-1)
    return gate_up_output + delta


class FusedMoEWithLoRA(nn.Module):
    add_delta = staticmethod(_add_lora_gate_up_delta)

    def __init__(self, hidden, inter, max_loras, rank):
        super().__init__()
        self.gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)
        self.lora_a = nn.Parameter(torch.randn(max_loras, rank, hidden) * 0.01)
        self.lora_b = nn.Parameter(torch.randn(max_loras, 2 * inter, rank) * 0.01)
        self.lora_info = None

    def set_lora_info(self, lora_info):
        self.lora_info = lora_info

    def forward(self, hidden_states):
        gate_up = self.gate_up(hidden_states)
        gate_up = self.add_delta(hidden_states, gate_up, self.lora_info, self.lora_a, self.lora_b)
        gate, up = gate_up.chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class FusedMoEWithLoRAFixed(FusedMoEWithLoRA):
    add_delta = staticmethod(_add_lora_gate_up_delta_fixed)


def run_layers(layer_cls, num_layers, x, info):
    torch.manual_seed(1)
    layers = [layer_cls(16, 32, 4, 8) for _ in range(num_layers)]
    for layer in layers:
        layer.set_lora_info(info)
        x = x + layer(x)
    return x


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6, 16)
    info = LoRABatchInfo(
        bs=2,
        seg_indptr=torch.tensor([0, 2, 6]),
        weight_indices=torch.tensor([0, 0]),
        lora_ranks=torch.tensor([0, 8, 8, 8]),
        scalings=torch.ones(4),
        max_lora_rank=0,
    )
    y0 = run_layers(FusedMoEWithLoRA, 4, x, info)
    y1 = run_layers(FusedMoEWithLoRAFixed, 4, x, info)
    print("no-LoRA batch, outputs equal:", torch.allclose(y0, y1))
