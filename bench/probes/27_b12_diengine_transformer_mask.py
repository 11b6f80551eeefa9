# source: opendilab/DI-engine https://github.com/opendilab/DI-engine/issues/333 (fix commit dc064896e164cae1061db8b1ffe7cd084a0aed1f) — Attention.forward called `score.masked_fill(~mask, value=-1e9)` and discarded the result, so masked (invalid) entries still got attention; the fix uses `score.masked_fill_(~mask, value=-1e9)`.
import math
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def fc_block(in_channels, out_channels, activation=None):
    layers = [nn.Linear(in_channels, out_channels)]
    if activation is not None:
        layers.append(activation)
    return nn.Sequential(*layers)


def build_normalization(norm_type):
    assert norm_type == 'LN'
    return nn.LayerNorm


class Attention(nn.Module):
    def __init__(self, input_dim: int, head_dim: int, output_dim: int, head_num: int, dropout: nn.Module) -> None:
        super(Attention, self).__init__()
        self.head_num = head_num
        self.head_dim = head_dim
        self.dropout = dropout
        self.attention_pre = fc_block(input_dim, head_dim * head_num * 3)  # query, key, value
        self.project = fc_block(head_dim * head_num, output_dim)
        self.last_score = None

    def split(self, x: torch.Tensor, T: bool = False) -> List[torch.Tensor]:
        B, N = x.shape[:2]
        x = x.view(B, N, self.head_num, self.head_dim)
        x = x.permute(0, 2, 1, 3).contiguous()  # B, head_num, N, head_dim
        if T:
            x = x.permute(0, 1, 3, 2).contiguous()
        return x

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        assert (len(x.shape) == 3)
        B, N = x.shape[:2]
        x = self.attention_pre(x)
        query, key, value = torch.chunk(x, 3, dim=2)
        query, key, value = self.split(query), self.split(key, T=True), self.split(value)

        score = torch.matmul(query, key)  # B, head_num, N, N
        score /= math.sqrt(self.head_dim)
        if mask is not None:
            score.masked_fill(~mask, value=-1e9)  # want: B

        score = F.softmax(score, dim=-1)
        self.last_score = score
        score = self.dropout(score)
        attention = torch.matmul(score, value)  # B, head_num, N, head_dim

        attention = attention.permute(0, 2, 1, 3).contiguous()  # B, N, head_num, head_dim
        attention = self.project(attention.view(B, N, -1))  # B, N, output_dim
        return attention


class TransformerLayer(nn.Module):
    def __init__(self, input_dim, head_dim, hidden_dim, output_dim, head_num, mlp_num, dropout, activation) -> None:
        super(TransformerLayer, self).__init__()
        self.attention = Attention(input_dim, head_dim, output_dim, head_num, dropout)
        self.layernorm1 = build_normalization('LN')(output_dim)
        self.dropout = dropout
        layers = []
        dims = [output_dim] + [hidden_dim] * (mlp_num - 1) + [output_dim]
        for i in range(mlp_num):
            layers.append(fc_block(dims[i], dims[i + 1], activation=activation))
            if i != mlp_num - 1:
                layers.append(self.dropout)
        layers.append(self.dropout)
        self.mlp = nn.Sequential(*layers)
        self.layernorm2 = build_normalization('LN')(output_dim)

    def forward(self, inputs: Tuple[torch.Tensor, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        x, mask = inputs
        a = self.dropout(self.attention(x, mask))
        x = self.layernorm1(x + a)
        m = self.dropout(self.mlp(x))
        x = self.layernorm2(x + m)
        return (x, mask)


class Transformer(nn.Module):
    def __init__(self, input_dim, head_dim=8, hidden_dim=32, output_dim=16, head_num=2, mlp_num=2, layer_num=2,
                 dropout_ratio=0., activation=nn.ReLU()):
        super(Transformer, self).__init__()
        self.embedding = fc_block(input_dim, output_dim, activation=activation)
        self.act = activation
        layers = []
        dims = [output_dim] + [output_dim] * layer_num
        self.dropout = nn.Dropout(dropout_ratio)
        for i in range(layer_num):
            layers.append(
                TransformerLayer(dims[i], head_dim, hidden_dim, dims[i + 1], head_num, mlp_num, self.dropout, self.act)
            )
        self.main = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if mask is not None:
            mask = mask.unsqueeze(dim=1).repeat(1, mask.shape[1], 1).unsqueeze(dim=1)
        x = self.embedding(x)
        x = self.dropout(x)
        x, mask = self.main((x, mask))
        return x


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_k: int, dropout: float = 0.0) -> None:
        super(ScaledDotProductAttention, self).__init__()
        self.d_k = d_k
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        attn = torch.matmul(q / (self.d_k ** 0.5), k.transpose(2, 3))
        if mask is not None:
            # inplace modification for reasonable softmax
            attn.masked_fill_(~mask, -1e9)
        attn = self.dropout(F.softmax(attn, dim=-1))
        self.last_attn = attn
        return torch.matmul(attn, v)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Transformer(input_dim=6)
    x = torch.randn(2, 5, 6)
    mask = torch.tensor([[True, True, True, False, False], [True] * 5])
    model(x, mask)
    score = model.main[0].attention.last_score
    print("buggy: attention mass on invalid entries (should be ~0):", score[0, :, :, 3:].sum().item())

    sdpa = ScaledDotProductAttention(d_k=4)
    q = k = v = torch.randn(2, 2, 5, 4)
    m4 = mask.unsqueeze(1).repeat(1, 5, 1).unsqueeze(1)
    sdpa(q, k, v, m4)
    print("fixed-style SDPA: attention mass on invalid entries:", sdpa.last_attn[0, :, :, 3:].sum().item())
