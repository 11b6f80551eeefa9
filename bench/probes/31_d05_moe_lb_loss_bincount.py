# source: mlc-ai/pith-train https://github.com/mlc-ai/pith-train/pull/44 — the MoE load-balance losses (micro-batch, global-batch and sequence-level) counted tokens per expert with `torch.bincount(idx, minlength=n)` in every gate forward; CUDA bincount issues a synchronous `input.max().item()` to size its output, so each MoE layer stalled the pipeline. The fix replaces the three call sites with a scatter_add_ into a fixed-size [num_experts] buffer.
import torch


def _expert_token_counts(idx_flat, n_bins):
    out = torch.zeros(n_bins, dtype=torch.long, device=idx_flat.device)
    ones = torch.ones(1, dtype=torch.long, device=idx_flat.device).expand_as(idx_flat)
    out.scatter_add_(0, idx_flat, ones)
    return out


class MicroBatchLoadBalanceLoss:
    def __init__(self, lb_coef):
        self.lb_coef = lb_coef

    def __call__(self, scores, topk_idx, num_experts, top_k):
        num_tokens = scores.shape[0]
        tokens_per_expert = torch.bincount(topk_idx.reshape(-1), minlength=num_experts)  # want: D
        tokens_per_expert = tokens_per_expert.to(scores.dtype)
        f = tokens_per_expert / (num_tokens * top_k)
        p = scores.mean(dim=0)
        return self.lb_coef * num_experts * torch.dot(f, p)


class GlobalBatchLoadBalanceLoss:
    def __init__(self, lb_coef):
        self.lb_coef = lb_coef
        self.group_size = 1
        self._count_buffer = None
        self._total_tokens = None

    def init_buffers(self, num_experts, device):
        if self._count_buffer is None:
            self._count_buffer = torch.zeros(num_experts, dtype=torch.float32, device=device)
            self._total_tokens = torch.zeros((), dtype=torch.int32, device=device)

    def __call__(self, scores, topk_idx, num_experts, top_k):
        num_tokens = scores.shape[0]
        tokens_per_expert = torch.bincount(topk_idx.reshape(-1), minlength=num_experts)  # want: D
        tokens_per_expert = tokens_per_expert.to(scores.dtype)
        self._count_buffer.add_(tokens_per_expert.detach())
        self._total_tokens.add_(num_tokens * top_k * self.group_size)
        f = self._count_buffer / self._total_tokens
        p = scores.mean(dim=0)
        return self.lb_coef * num_experts * torch.dot(f, p)


class SequenceLevelLoadBalanceLoss:
    def __init__(self, lb_coef, sequence_length):
        self.lb_coef = lb_coef
        self.sequence_length = sequence_length

    def __call__(self, scores, topk_idx, num_experts, top_k):
        sequence_length = self.sequence_length
        bsz = scores.shape[0] // sequence_length
        batch_offsets = torch.arange(bsz, device=topk_idx.device)
        batch_offsets = batch_offsets.unsqueeze(1).expand(-1, sequence_length * top_k) * num_experts
        flat_idx = topk_idx.view(bsz, -1) + batch_offsets
        tokens_per_expert = torch.bincount(flat_idx.reshape(-1), minlength=bsz * num_experts)  # want: D
        tokens_per_expert = tokens_per_expert.to(scores.dtype).view(bsz, num_experts)
        f = tokens_per_expert / (sequence_length * top_k)
        p = scores.view(bsz, sequence_length, num_experts).mean(dim=1)
        per_seq = (f * p).sum(dim=1) * num_experts
        return self.lb_coef * per_seq.mean()


class MicroBatchLoadBalanceLossFixed(MicroBatchLoadBalanceLoss):
    def __call__(self, scores, topk_idx, num_experts, top_k):
        num_tokens = scores.shape[0]
        tokens_per_expert = _expert_token_counts(topk_idx.reshape(-1), num_experts)
        tokens_per_expert = tokens_per_expert.to(scores.dtype)
        f = tokens_per_expert / (num_tokens * top_k)
        p = scores.mean(dim=0)
        return self.lb_coef * num_experts * torch.dot(f, p)


class GlobalBatchLoadBalanceLossFixed(GlobalBatchLoadBalanceLoss):
    def __call__(self, scores, topk_idx, num_experts, top_k):
        num_tokens = scores.shape[0]
        tokens_per_expert = _expert_token_counts(topk_idx.reshape(-1), num_experts)
        tokens_per_expert = tokens_per_expert.to(scores.dtype)
        self._count_buffer.add_(tokens_per_expert.detach())
        self._total_tokens.add_(num_tokens * top_k * self.group_size)
        f = self._count_buffer / self._total_tokens
        p = scores.mean(dim=0)
        return self.lb_coef * num_experts * torch.dot(f, p)


class SequenceLevelLoadBalanceLossFixed(SequenceLevelLoadBalanceLoss):
    def __call__(self, scores, topk_idx, num_experts, top_k):
        sequence_length = self.sequence_length
        bsz = scores.shape[0] // sequence_length
        batch_offsets = torch.arange(bsz, device=topk_idx.device)
        batch_offsets = batch_offsets.unsqueeze(1).expand(-1, sequence_length * top_k) * num_experts
        flat_idx = topk_idx.view(bsz, -1) + batch_offsets
        tokens_per_expert = _expert_token_counts(flat_idx.reshape(-1), bsz * num_experts)
        tokens_per_expert = tokens_per_expert.to(scores.dtype).view(bsz, num_experts)
        f = tokens_per_expert / (sequence_length * top_k)
        p = scores.view(bsz, sequence_length, num_experts).mean(dim=1)
        per_seq = (f * p).sum(dim=1) * num_experts
        return self.lb_coef * per_seq.mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    E, K, B, S = 8, 2, 2, 16
    scores = torch.softmax(torch.randn(B * S, E), dim=-1)
    topk_idx = scores.topk(K, dim=-1).indices
    pairs = [
        (MicroBatchLoadBalanceLoss(0.01), MicroBatchLoadBalanceLossFixed(0.01)),
        (GlobalBatchLoadBalanceLoss(0.01), GlobalBatchLoadBalanceLossFixed(0.01)),
        (SequenceLevelLoadBalanceLoss(0.01, S), SequenceLevelLoadBalanceLossFixed(0.01, S)),
    ]
    for bug, fix in pairs:
        for fn in (bug, fix):
            if hasattr(fn, "init_buffers"):
                fn.init_buffers(E, scores.device)
        a, b = bug(scores, topk_idx, E, K), fix(scores, topk_idx, E, K)
        assert torch.allclose(a, b), type(bug).__name__
    print("all three load-balance losses agree")
