import torch
import torch.nn.functional as F


def attend(q, k, v, n_rep):
    b, h, s, d = k.shape
    k = k[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)  # want: C
    v = v[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)  # want: C
    return F.scaled_dot_product_attention(q, k, v)
