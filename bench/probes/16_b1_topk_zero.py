import torch


def suppress(scores: torch.Tensor, k: int):
    _, topk_idx = scores.topk(k, dim=-1)
    scores[topk_idx].zero_()  # want: B
    return scores
