import torch


def attention(q, k, v):
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return out.contiguous().contiguous()  # want: C
