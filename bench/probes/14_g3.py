import torch
import torch.nn.functional as F


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n_rep: int):
    k = torch.cat([k] * n_rep, dim=1)  # maybe: C (head order differs from repeat_interleave)
    v = torch.cat([v] * n_rep, dim=1)
    return F.scaled_dot_product_attention(q, k, v)
