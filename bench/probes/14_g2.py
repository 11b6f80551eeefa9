import torch
import torch.nn.functional as F


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n_rep: int):
    b, h, t, d = k.shape
    k = k[:, :, None].expand(b, h, n_rep, t, d).contiguous().view(b, h * n_rep, t, d)  # want: C
    v = v[:, :, None].expand(b, h, n_rep, t, d).contiguous().view(b, h * n_rep, t, d)  # want: C
    return F.scaled_dot_product_attention(q, k, v)
