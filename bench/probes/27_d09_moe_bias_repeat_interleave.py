# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/2440 — gpt_oss `_run_experts_grouped_mm` (MoE forward) expanded expert biases with `repeat_interleave(num_tokens_per_expert_long)` without `output_size` and padded with `tail_slack = x.shape[0] - int(offsets[-1])`, two D2H syncs each for b1 and b2; the fix pads the counts first and calls `repeat_interleave(..., output_size=x.shape[0])`.
from __future__ import annotations

import torch
from torch import nn


class ScaleBiasForward(torch.autograd.Function):
    """Scales bias in forward pass but not in backward (tensor-parallel MoE)."""

    @staticmethod
    def forward(ctx, bias, tp_degree):
        ctx.tp_degree = tp_degree
        if tp_degree > 1:
            return bias / tp_degree
        return bias

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


def swiglu(x, alpha: float = 1.702, limit: float = 7.0):
    x_glu, x_linear = x[..., ::2], x[..., 1::2]
    x_glu = x_glu.clamp(min=None, max=limit)
    x_linear = x_linear.clamp(min=-limit, max=limit)
    out_glu = x_glu * torch.sigmoid(alpha * x_glu)
    return out_glu * (x_linear + 1)


def _run_experts_for_loop(
    mlp1_weight: torch.Tensor,
    mlp1_bias: torch.Tensor,
    mlp2_weight: torch.Tensor,
    mlp2_bias: torch.Tensor,
    swiglu_limit: float,
    x: torch.Tensor,
    num_tokens_per_expert: torch.Tensor,
    tp_degree: int = 1,
) -> torch.Tensor:
    # NOTE: this would incur a synchronization between device and host
    num_tokens_per_expert = num_tokens_per_expert.tolist()  # maybe: D (documented, accepted sync on the non-grouped fallback path; not touched by the fix)

    num_padding = x.shape[0] - sum(num_tokens_per_expert)
    x = torch.split(
        x[: sum(num_tokens_per_expert)],
        split_size_or_sections=num_tokens_per_expert,
        dim=0,
    )
    out_experts_splits = []
    for expert_idx, x_expert in enumerate(x):
        h = (
            torch.matmul(x_expert, mlp1_weight[expert_idx].transpose(-2, -1))
            + mlp1_bias[expert_idx]
        )
        h = swiglu(h, limit=swiglu_limit)
        b2 = ScaleBiasForward.apply(mlp2_bias[expert_idx], tp_degree)
        h = torch.matmul(h, mlp2_weight[expert_idx].transpose(-2, -1)) + b2
        out_experts_splits.append(h)
    out = torch.cat(out_experts_splits, dim=0)
    out = torch.vstack((out, out.new_zeros((num_padding, out.shape[-1]))))
    return out


def _run_experts_grouped_mm(
    mlp1_weight: torch.Tensor,
    mlp1_bias: torch.Tensor,
    mlp2_weight: torch.Tensor,
    mlp2_bias: torch.Tensor,
    swiglu_limit: float,
    x: torch.Tensor,
    num_tokens_per_expert: torch.Tensor,
    tp_degree: int = 1,
) -> torch.Tensor:
    offsets = torch.cumsum(num_tokens_per_expert, dim=0, dtype=torch.int32)
    num_tokens_per_expert_long = num_tokens_per_expert.to(torch.long)

    h = torch._grouped_mm(
        x.bfloat16(), mlp1_weight.transpose(-2, -1).bfloat16(), offs=offsets
    )

    b1 = mlp1_bias.repeat_interleave(num_tokens_per_expert_long, dim=0)  # want: D
    tail_slack = x.shape[0] - int(offsets[-1])  # want: D
    if tail_slack:
        b1 = torch.cat([b1, b1.new_zeros((tail_slack, b1.shape[-1]))], dim=0)
    h = h + b1.to(h.dtype)

    h = swiglu(h, limit=swiglu_limit)
    h = torch._grouped_mm(h, mlp2_weight.transpose(-2, -1).bfloat16(), offs=offsets)

    # Apply custom autograd function to scale bias in forward but not in backward
    b2_base = mlp2_bias.repeat_interleave(num_tokens_per_expert_long, dim=0)  # want: D
    b2 = ScaleBiasForward.apply(b2_base, tp_degree)
    tail_slack = x.shape[0] - int(offsets[-1])  # want: D
    if tail_slack:  # padding
        b2 = torch.cat([b2, b2.new_zeros((tail_slack, b2.shape[-1]))], dim=0)
    h = h + b2.to(h.dtype)

    return h


def _run_experts_grouped_mm_fixed(
    mlp1_weight: torch.Tensor,
    mlp1_bias: torch.Tensor,
    mlp2_weight: torch.Tensor,
    mlp2_bias: torch.Tensor,
    swiglu_limit: float,
    x: torch.Tensor,
    num_tokens_per_expert: torch.Tensor,
    tp_degree: int = 1,
) -> torch.Tensor:
    offsets = torch.cumsum(num_tokens_per_expert, dim=0, dtype=torch.int32)
    # Pad num_tokens_per_expert with tail slack so that repeat_interleave
    # with output_size=x.shape[0] directly produces a static-shaped output.
    tail_slack = (x.shape[0] - offsets[-1]).unsqueeze(0).to(num_tokens_per_expert.dtype)
    num_tokens_per_expert_long = torch.cat([num_tokens_per_expert, tail_slack]).long()

    h = torch._grouped_mm(
        x.bfloat16(), mlp1_weight.transpose(-2, -1).bfloat16(), offs=offsets
    )

    b1 = torch.cat([mlp1_bias, mlp1_bias.new_zeros(1, mlp1_bias.shape[-1])])
    b1 = b1.repeat_interleave(num_tokens_per_expert_long, dim=0, output_size=x.shape[0])
    h = h + b1.to(h.dtype)

    h = swiglu(h, limit=swiglu_limit)
    h = torch._grouped_mm(h, mlp2_weight.transpose(-2, -1).bfloat16(), offs=offsets)

    b2 = torch.cat([mlp2_bias, mlp2_bias.new_zeros(1, mlp2_bias.shape[-1])])
    b2 = b2.repeat_interleave(num_tokens_per_expert_long, dim=0, output_size=x.shape[0])
    b2 = ScaleBiasForward.apply(b2, tp_degree)
    h = h + b2.to(h.dtype)

    return h


class GptOssGroupedExperts(nn.Module):
    def __init__(self, dim: int, hidden_dim: int, num_experts: int, swiglu_limit: float, use_grouped_mm: bool,
                 fixed: bool = False):
        super().__init__()
        self.num_experts = num_experts
        self.use_grouped_mm = use_grouped_mm
        self.swiglu_limit = swiglu_limit
        self.fixed = fixed
        self.mlp1_weight = nn.Parameter(torch.randn((num_experts, hidden_dim * 2, dim)) * 0.1)
        self.mlp1_bias = nn.Parameter(torch.randn((num_experts, hidden_dim * 2)) * 0.1)
        self.mlp2_weight = nn.Parameter(torch.randn((num_experts, dim, hidden_dim)) * 0.1)
        self.mlp2_bias = nn.Parameter(torch.randn((num_experts, dim)) * 0.1)

    def forward(self, x: torch.Tensor, num_tokens_per_expert: torch.Tensor) -> torch.Tensor:
        mlp1_weight = self.mlp1_weight
        mlp1_bias = self.mlp1_bias
        mlp2_weight = self.mlp2_weight
        mlp2_bias = self.mlp2_bias
        tp_degree = 1

        if self.use_grouped_mm:
            run_experts_fn = _run_experts_grouped_mm_fixed if self.fixed else _run_experts_grouped_mm
            return run_experts_fn(
                mlp1_weight, mlp1_bias, mlp2_weight, mlp2_bias, self.swiglu_limit, x, num_tokens_per_expert, tp_degree,
            )
        else:
            return _run_experts_for_loop(
                mlp1_weight, mlp1_bias, mlp2_weight, mlp2_bias, self.swiglu_limit, x, num_tokens_per_expert, tp_degree,
            )


if __name__ == "__main__":
    torch.manual_seed(0)
    dim, hidden, E = 16, 16, 4
    experts = GptOssGroupedExperts(dim, hidden, E, 7.0, use_grouped_mm=True)
    experts_fixed = GptOssGroupedExperts(dim, hidden, E, 7.0, use_grouped_mm=True, fixed=True)
    experts_fixed.load_state_dict(experts.state_dict())
    experts_loop = GptOssGroupedExperts(dim, hidden, E, 7.0, use_grouped_mm=False)
    experts_loop.load_state_dict(experts.state_dict())
    x = torch.randn(24, dim)  # 24 rows, only 20 routed -> 4 rows of tail slack
    num_tokens_per_expert = torch.tensor([5, 3, 8, 4], dtype=torch.int32)
    a = experts(x, num_tokens_per_expert)
    b = experts_fixed(x, num_tokens_per_expert)
    c = experts_loop(x, num_tokens_per_expert)
    print(a.shape, torch.allclose(a.float(), b.float()), (a.float()[:20] - c[:20]).abs().max().item() < 0.1)
