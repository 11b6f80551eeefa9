# source: hkproj/pytorch-llama https://github.com/hkproj/pytorch-llama/issues/8 — SelfAttention.forward materialised the grouped-query K/V with repeat_kv (expand + reshape, i.e. a full copy of the cached keys/values n_rep times) on every decoding step before the score/value matmuls. The issue (closed after discussion with the author) points out that the replication is unnecessary: grouping the query heads as (n_kv_heads, n_rep) lets torch.matmul broadcast over the shared K/V heads, which is what the fixed version below does.
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 32
    n_heads: int = 8
    n_kv_heads: Optional[int] = 2
    max_batch_size: int = 2
    max_seq_len: int = 16


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch_size, seq_len, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(batch_size, seq_len, n_kv_heads, n_rep, head_dim)
        .reshape(batch_size, seq_len, n_kv_heads * n_rep, head_dim)
    )


class SelfAttention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
        self.n_heads_q = args.n_heads
        self.n_rep = self.n_heads_q // self.n_kv_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
        self.cache_k = torch.zeros((args.max_batch_size, args.max_seq_len, self.n_kv_heads, self.head_dim))
        self.cache_v = torch.zeros((args.max_batch_size, args.max_seq_len, self.n_kv_heads, self.head_dim))
        self.kv_used = None

    def forward(self, x: torch.Tensor, start_pos: int):
        batch_size, seq_len, _ = x.shape
        xq = self.wq(x).view(batch_size, seq_len, self.n_heads_q, self.head_dim)
        xk = self.wk(x).view(batch_size, seq_len, self.n_kv_heads, self.head_dim)
        xv = self.wv(x).view(batch_size, seq_len, self.n_kv_heads, self.head_dim)

        self.cache_k[:batch_size, start_pos : start_pos + seq_len] = xk
        self.cache_v[:batch_size, start_pos : start_pos + seq_len] = xv
        keys = self.cache_k[:batch_size, : start_pos + seq_len]
        values = self.cache_v[:batch_size, : start_pos + seq_len]

        keys = repeat_kv(keys, self.n_rep)  # want: C
        values = repeat_kv(values, self.n_rep)  # want: C
        self.kv_used = keys

        xq = xq.transpose(1, 2)
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(batch_size, seq_len, -1)
        return self.wo(output)


class SelfAttentionFixed(SelfAttention):
    def forward(self, x: torch.Tensor, start_pos: int):
        batch_size, seq_len, _ = x.shape
        xq = self.wq(x).view(batch_size, seq_len, self.n_heads_q, self.head_dim)
        xk = self.wk(x).view(batch_size, seq_len, self.n_kv_heads, self.head_dim)
        xv = self.wv(x).view(batch_size, seq_len, self.n_kv_heads, self.head_dim)

        self.cache_k[:batch_size, start_pos : start_pos + seq_len] = xk
        self.cache_v[:batch_size, start_pos : start_pos + seq_len] = xv
        keys = self.cache_k[:batch_size, : start_pos + seq_len]
        values = self.cache_v[:batch_size, : start_pos + seq_len]
        self.kv_used = keys

        xq = xq.view(batch_size, seq_len, self.n_kv_heads, self.n_rep, self.head_dim).permute(0, 2, 3, 1, 4)
        keys = keys.transpose(1, 2).unsqueeze(2)
        values = values.transpose(1, 2).unsqueeze(2)
        scores = torch.matmul(xq, keys.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.permute(0, 3, 1, 2, 4).reshape(batch_size, seq_len, -1)
        return self.wo(output)


if __name__ == "__main__":
    torch.manual_seed(0)
    args = ModelArgs()
    bug = SelfAttention(args)
    fix = SelfAttentionFixed(args)
    fix.load_state_dict(bug.state_dict())
    prompt = torch.randn(2, 5, args.dim)
    step = torch.randn(2, 1, args.dim)
    with torch.no_grad():
        out_bug = [bug(prompt, 0), bug(step, 5)]
        out_fix = [fix(prompt, 0), fix(step, 5)]
    for a, b in zip(out_bug, out_fix):
        assert torch.allclose(a, b, atol=1e-5)
    assert bug.kv_used.data_ptr() != bug.cache_k.data_ptr()
    assert bug.kv_used.shape[2] == args.n_heads
    assert fix.kv_used.data_ptr() == fix.cache_k.data_ptr()
    print("ok")
