import torch
import torch.nn.functional as F


def gqa(q, k, v, groups):
    k = torch.repeat_interleave(k, groups, dim=1)  # want: C
    v = torch.repeat_interleave(v, groups, dim=1)  # want: C
    return F.scaled_dot_product_attention(q, k, v)
