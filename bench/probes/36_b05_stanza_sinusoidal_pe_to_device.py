# source: stanfordnlp/stanza https://github.com/stanfordnlp/stanza/pull/1002 — The constituency parser's SinusoidalEncoding rebuilt its `pe` buffer when a longer sentence arrived, calling `build_position(..., device=self.pe.device)`, but the builder did `pe.to(device=device)` and threw the result away, so the regrown table always lived on the CPU while the model ran on GPU. The fix rebinds: `pe = pe.to(device=device)`.
import math

import torch
from torch import nn


class SinusoidalEncoding(nn.Module):
    def __init__(self, model_dim, max_len):
        super().__init__()
        self.register_buffer('pe', self.build_position(model_dim, max_len))

    @staticmethod
    def build_position(model_dim, max_len, device=None):
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, model_dim, 2) * (-math.log(10000.0) / model_dim))
        pe = torch.zeros(max_len, model_dim)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        if device is not None:
            pe.to(device=device)  # want: B
        return pe

    def forward(self, x):
        if max(x) >= self.pe.shape[0]:
            self.register_buffer('pe', self.build_position(self.pe.shape[1], max(x) + 1, device=self.pe.device))
        return self.pe[x]

    def max_len(self):
        return self.pe.shape[0]


class SinusoidalEncodingFixed(SinusoidalEncoding):
    @staticmethod
    def build_position(model_dim, max_len, device=None):
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, model_dim, 2) * (-math.log(10000.0) / model_dim))
        pe = torch.zeros(max_len, model_dim)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        if device is not None:
            pe = pe.to(device=device)
        return pe


class ConcatSinusoidalEncoding(nn.Module):
    def __init__(self, d_model=8, max_len=4, cls=SinusoidalEncoding):
        super().__init__()
        self.encoding = cls(d_model // 2, max_len)

    def forward(self, x):
        timing = self.encoding(torch.arange(x.shape[1], device=x.device))
        x, timing = torch.broadcast_tensors(x, timing)
        return torch.cat([x, timing], dim=-1)


if __name__ == "__main__":
    # "meta" stands in for the accelerator the parser was moved to.
    bug = SinusoidalEncoding.build_position(4, 16, device=torch.device("meta"))
    fix = SinusoidalEncodingFixed.build_position(4, 16, device=torch.device("meta"))
    print("buggy regrown pe device:", bug.device, "| fixed:", fix.device)
    assert bug.device.type == "cpu" and fix.device.type == "meta"
    enc = ConcatSinusoidalEncoding()
    out = enc(torch.zeros(2, 6, 4))  # seq 6 > max_len=4 -> table regrown via build_position
    print("regrown table length:", enc.encoding.max_len(), "output", tuple(out.shape))
