import torch
import torch.nn.functional as F


def attend(q, k, v, n_rep):
    k = torch.repeat_interleave(k, n_rep, dim=1)  # want: C
    v = torch.repeat_interleave(v, n_rep, dim=1)  # want: C
    return F.scaled_dot_product_attention(q, k, v)
