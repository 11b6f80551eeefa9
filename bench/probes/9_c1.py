import torch
import torch.nn as nn


class Attn(nn.Module):
    def __init__(self, d, h, kvh):
        super().__init__()
        self.h, self.kvh = h, kvh
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d // h * kvh)
        self.v = nn.Linear(d, d // h * kvh)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.h, -1).transpose(1, 2)
        k = self.k(x).view(b, t, self.kvh, -1).transpose(1, 2)
        v = self.v(x).view(b, t, self.kvh, -1).transpose(1, 2)
        k = k[:, :, None].expand(b, self.kvh, self.h // self.kvh, t, k.shape[-1]).reshape(b, self.h, t, -1)  # want: C
        v = v[:, :, None].expand(b, self.kvh, self.h // self.kvh, t, v.shape[-1]).reshape(b, self.h, t, -1)  # want: C
        return nn.functional.scaled_dot_product_attention(q, k, v)
