# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/5578 — top2gating() returned `exp_counts.detach().to('cpu')` on every MoE forward, a device-to-host copy that synchronizes the stream in every MoE layer although no caller used the counts on the host. The fix ("reduce cpu host overhead when using moe") returns exp_counts on device.
from typing import Any, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Module

uniform_map = {}


def gumbel_rsample(shape, device):
    gumbel = uniform_map.get(device)
    if gumbel is None:
        one = torch.tensor(1.0, device=device)
        zero = torch.tensor(0.0, device=device)
        gumbel = torch.distributions.gumbel.Gumbel(zero, one).rsample
        uniform_map[device] = gumbel
    return gumbel(shape)


def _capacity(gates: Tensor, capacity_factor: Tensor, min_capacity: Tensor) -> Tensor:
    # gates has shape of SE
    num_tokens = gates.shape[0]
    num_experts = gates.shape[1]
    capacity = torch.ceil((num_tokens / num_experts) * capacity_factor).to(torch.int64)
    if capacity < min_capacity:  # maybe: D (tensor comparison in the (jit-scripted) helper; untouched by the fix)
        capacity = min_capacity.to(torch.int64)
    return capacity


def _one_hot_to_float(x, num_classes):
    return F.one_hot(x, num_classes=num_classes).float()  # maybe: D (num_classes is a 0-d tensor -> int(); untouched by the fix)


def _top2gating_body(logits: Tensor, capacity_factor: float, min_capacity: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Implements Top2Gating on logits (shared body of the buggy and fixed variants)."""
    # everything is in fp32 in this function
    gates = F.softmax(logits, dim=1)
    capacity = _capacity(gates, torch.tensor(capacity_factor * 2), torch.tensor(min_capacity))

    # Create a mask for 1st's expert per token
    indices1_s = torch.argmax(gates, dim=1)
    num_experts = int(gates.shape[1])
    mask1 = F.one_hot(indices1_s, num_classes=num_experts)

    # Create a mask for 2nd's expert per token using Gumbel-max trick
    logits_w_noise = logits + gumbel_rsample(logits.shape, device=logits.device)
    # Replace top-expert with min value
    logits_except1 = logits_w_noise.masked_fill(mask1.bool(), float("-inf"))
    indices2_s = torch.argmax(logits_except1, dim=1)
    mask2 = F.one_hot(indices2_s, num_classes=num_experts)

    # Compute locations in capacity buffer
    locations1 = torch.cumsum(mask1, dim=0) - 1
    locations2 = torch.cumsum(mask2, dim=0) - 1
    # Update 2nd's location by accounting for locations of 1st
    locations2 += torch.sum(mask1, dim=0, keepdim=True)

    # gating decisions
    exp_counts = torch.sum(mask1 + mask2, dim=0)

    # Compute l_aux
    me = torch.mean(gates, dim=0)
    ce = torch.mean(mask1.float(), dim=0)
    l_aux = torch.mean(me * ce) * num_experts * num_experts

    # Remove locations outside capacity from mask
    mask1 = mask1 * torch.lt(locations1, capacity)
    mask2 = mask2 * torch.lt(locations2, capacity)

    # Store the capacity location for each token
    locations1_s = torch.sum(locations1 * mask1, dim=1)
    locations2_s = torch.sum(locations2 * mask2, dim=1)

    # Normalize gate probabilities
    mask1_float = mask1.float()
    mask2_float = mask2.float()
    gates1_s = torch.einsum("se,se->s", gates, mask1_float)
    gates2_s = torch.einsum("se,se->s", gates, mask2_float)
    denom_s = gates1_s + gates2_s
    # Avoid divide-by-zero
    denom_s = torch.clamp(denom_s, min=torch.finfo(denom_s.dtype).eps)
    gates1_s /= denom_s
    gates2_s /= denom_s

    # Calculate combine_weights and dispatch_mask
    gates1 = torch.einsum("s,se->se", gates1_s, mask1_float)
    gates2 = torch.einsum("s,se->se", gates2_s, mask2_float)
    locations1_sc = _one_hot_to_float(locations1_s, capacity)
    locations2_sc = _one_hot_to_float(locations2_s, capacity)
    combine1_sec = torch.einsum("se,sc->sec", gates1, locations1_sc)
    combine2_sec = torch.einsum("se,sc->sec", gates2, locations2_sc)
    combine_weights = combine1_sec + combine2_sec
    dispatch_mask = combine_weights.bool()

    return l_aux, combine_weights, dispatch_mask, exp_counts


def top2gating(logits: Tensor, capacity_factor: float, min_capacity: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    l_aux, combine_weights, dispatch_mask, exp_counts = _top2gating_body(logits, capacity_factor, min_capacity)
    return l_aux, combine_weights, dispatch_mask, exp_counts.detach().to('cpu')  # want: D


def top2gating_fixed(logits: Tensor, capacity_factor: float, min_capacity: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    l_aux, combine_weights, dispatch_mask, exp_counts = _top2gating_body(logits, capacity_factor, min_capacity)
    return l_aux, combine_weights, dispatch_mask, exp_counts.detach()


class TopKGate(Module):
    def __init__(self, model_dim, num_experts, capacity_factor=1.0, min_capacity=4, gating_fn=top2gating):
        super().__init__()
        self.wg = torch.nn.Linear(model_dim, num_experts, bias=False).float()
        self.capacity_factor = capacity_factor
        self.min_capacity = min_capacity
        self.gating_fn = gating_fn

    def forward(self, input: torch.Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        logits = self.wg(input.float())
        return self.gating_fn(logits, self.capacity_factor, self.min_capacity)


class MOELayer(Module):
    def __init__(self, gate, experts, num_local_experts):
        super().__init__()
        self.gate = gate
        self.experts = experts
        self.num_local_experts = num_local_experts

    def forward(self, *input: Tensor, **kwargs: Any) -> Tensor:
        d_model = input[0].shape[-1]
        reshaped_input = input[0].reshape(-1, d_model)
        self.l_aux, combine_weights, dispatch_mask, self.exp_counts = self.gate(reshaped_input)
        dispatched_input = torch.einsum("sec,sm->ecm", dispatch_mask.type_as(input[0]), reshaped_input)
        expert_output = torch.stack([e(dispatched_input[i]) for i, e in enumerate(self.experts)])
        combined_output = torch.einsum("sec,ecm->sm", combine_weights.type_as(input[0]), expert_output)
        return combined_output.reshape(input[0].shape)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 16, 32)
    for fn in (top2gating, top2gating_fixed):
        experts = torch.nn.ModuleList([torch.nn.Linear(32, 32) for _ in range(4)])
        layer = MOELayer(TopKGate(32, 4, gating_fn=fn), experts, num_local_experts=4)
        out = layer(x)
        print(fn.__name__, tuple(out.shape), "exp_counts on", layer.exp_counts.device, tuple(layer.exp_counts.shape))
