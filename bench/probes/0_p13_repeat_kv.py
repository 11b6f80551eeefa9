import torch
import torch.nn.functional as F


def attend(q, k, v, n_rep):
    k = k.repeat_interleave(n_rep, dim=1)  # want: C
    v = v.repeat_interleave(n_rep, dim=1)  # want: C
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
