# source: opendilab/DI-engine https://github.com/opendilab/DI-engine/issues/333 (fix commit dc064896) — ding/torch_utils/network/transformer.py Attention.forward called score.masked_fill(~mask, value=-1e9) and dropped the result, so padded entries were never masked out of the entity-attention softmax; fix: score.masked_fill_(~mask, value=-1e9)
import math
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, input_dim: int, head_dim: int, output_dim: int, head_num: int, dropout: nn.Module):
        super().__init__()
        self.head_num = head_num
        self.head_dim = head_dim
        self.dropout = dropout
        self.attention_pre = nn.Linear(input_dim, head_dim * head_num * 3)
        self.project = nn.Linear(head_dim * head_num, output_dim)

    def split(self, x: torch.Tensor, T: bool = False) -> List[torch.Tensor]:
        B, N = x.shape[:2]
        x = x.view(B, N, self.head_num, self.head_dim)
        x = x.permute(0, 2, 1, 3).contiguous()  # B, head_num, N, head_dim
        if T:
            x = x.permute(0, 1, 3, 2).contiguous()
        return x

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, N = x.shape[:2]
        x = self.attention_pre(x)
        query, key, value = torch.chunk(x, 3, dim=2)
        query, key, value = self.split(query), self.split(key, T=True), self.split(value)

        score = torch.matmul(query, key)  # B, head_num, N, N
        score /= math.sqrt(self.head_dim)
        if mask is not None:
            score.masked_fill(~mask, value=-1e9)  # want: B

        score = F.softmax(score, dim=-1)
        score = self.dropout(score)
        attention = torch.matmul(score, value)  # B, head_num, N, head_dim
        attention = attention.permute(0, 2, 1, 3).contiguous()
        return self.project(attention.view(B, N, -1))


class FixedAttention(Attention):
    def forward(self, x, mask=None):
        B, N = x.shape[:2]
        query, key, value = torch.chunk(self.attention_pre(x), 3, dim=2)
        score = torch.matmul(self.split(query), self.split(key, T=True)) / math.sqrt(self.head_dim)
        if mask is not None:
            score.masked_fill_(~mask, value=-1e9)
        attention = torch.matmul(self.dropout(F.softmax(score, dim=-1)), self.split(value))
        return self.project(attention.permute(0, 2, 1, 3).contiguous().view(B, N, -1))


def entity_mask(valid: torch.Tensor) -> torch.Tensor:
    # (B, N) -> (B, 1, N, N), as Transformer.forward builds it
    return valid.unsqueeze(dim=1).repeat(1, valid.shape[1], 1).unsqueeze(dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = Attention(8, 4, 8, 2, nn.Dropout(0.0))
    fixed = FixedAttention(8, 4, 8, 2, nn.Dropout(0.0))
    fixed.load_state_dict(buggy.state_dict())
    x = torch.randn(2, 5, 8)
    valid = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    x_noise = x.clone()
    x_noise[0, 3:] = 100.0  # change only the padded entries
    m = entity_mask(valid)
    assert not torch.allclose(buggy(x, m)[0, :3], buggy(x_noise, m)[0, :3])  # padding leaks into real entities
    assert torch.allclose(fixed(x, m)[0, :3], fixed(x_noise, m)[0, :3])
    print("ok: the attention mask was computed and thrown away")
