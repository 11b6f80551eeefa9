# source: pytorch-tpu/llama https://github.com/pytorch-tpu/llama/pull/59 — Attention.forward rebuilt the whole KV cache every decode step with out-of-place `self.cache_k = self.cache_k.index_copy(1, input_indexes, xk)`; the fix writes the new positions in place with `index_copy_`.
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class ModelArgs:
    dim: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: Optional[int] = None
    vocab_size: int = 97
    max_batch_size: int = 2
    max_seq_len: int = 32
    norm_eps: float = 1e-5


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis) -> Tuple[torch.Tensor, torch.Tensor]:
    xq_ = torch.view_as_complex(
        xq.transpose(1, 2).reshape(-1, xq.shape[1], int(xq.shape[-1] / 2), 2).float())
    xk_ = torch.view_as_complex(
        xk.transpose(1, 2).reshape(-1, xq.shape[1], int(xq.shape[-1] / 2), 2).float())
    xq_out = torch.view_as_real(xq_ * freqs_cis)
    xk_out = torch.view_as_real(xk_ * freqs_cis)
    xq_out = xq_out.reshape(xq.shape[0], xq.shape[2], xq.shape[1], xq.shape[3]).transpose(1, 2)
    xk_out = xk_out.reshape(xk.shape[0], xk.shape[2], xk.shape[1], xk.shape[3]).transpose(1, 2)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_local_heads = args.n_heads
        self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
        self.n_local_kv_heads = self.n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = args.dim // args.n_heads

        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)

        cache_k = torch.zeros((args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim))
        self.register_buffer("cache_k", cache_k)
        cache_v = torch.zeros((args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim))
        self.register_buffer("cache_v", cache_v)

    def forward(self, x, freqs_cis, mask, input_indexes):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)

        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

        self.cache_k = self.cache_k.index_copy(1, input_indexes, xk)  # want: C
        self.cache_v = self.cache_v.index_copy(1, input_indexes, xv)  # want: C

        keys = self.cache_k[:, :]
        values = self.cache_v[:, :]

        keys = repeat_kv(keys, self.n_rep)
        values = repeat_kv(values, self.n_rep)

        xq = xq.transpose(1, 2)
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class CrossAttentionCache(nn.Module):
    """Fixed shape from the PR (look-alike): the new keys land in the buffer in place."""

    def __init__(self, args: ModelArgs):
        super().__init__()
        head_dim = args.dim // args.n_heads
        self.register_buffer("cache_k", torch.zeros((args.max_batch_size, args.max_seq_len, args.n_heads, head_dim)))

    def update(self, input_indexes, xk):
        self.cache_k.index_copy_(1, input_indexes, xk)
        return self.cache_k


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, layer_id: int, args: ModelArgs):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, 4 * args.dim)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, freqs_cis, mask, input_indexes):
        h = x + self.attention.forward(self.attention_norm(x), freqs_cis, mask, input_indexes)
        return h + self.feed_forward.forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, params: ModelArgs):
        super().__init__()
        self.params = params
        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.layers = torch.nn.ModuleList(TransformerBlock(i, params) for i in range(params.n_layers))
        self.norm = RMSNorm(params.dim, eps=params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False)
        self.register_buffer("freqs_cis", precompute_freqs_cis(params.dim // params.n_heads, params.max_seq_len * 2))
        mask = torch.full((1, 1, params.max_seq_len, params.max_seq_len), float("-inf")).to(torch.float)
        self.register_buffer("mask", torch.triu(mask, diagonal=1))

    @torch.no_grad()
    def forward(self, tokens, input_indexes, output_index: Optional[torch.Tensor]):
        h = self.tok_embeddings(tokens)
        freqs_cis = self.freqs_cis.index_select(0, input_indexes)
        mask = self.mask.index_select(2, input_indexes)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask, input_indexes)
        h = self.norm(h)
        if output_index is not None:
            h = h.index_select(1, output_index - input_indexes[0]).squeeze(dim=1)
        return self.output(h).float()


if __name__ == "__main__":
    torch.manual_seed(0)
    args = ModelArgs()
    model = Transformer(args)
    tokens = torch.randint(0, args.vocab_size, (args.max_batch_size, 4))
    prompt_idx = torch.arange(0, 4)
    logits = model(tokens, prompt_idx, torch.tensor([3]))
    cur = logits.argmax(-1, keepdim=True)
    for pos in range(4, 12):  # decode loop: one position per step
        logits = model(cur, torch.tensor([pos]), torch.tensor([pos]))
        cur = logits.argmax(-1, keepdim=True)
    cc = CrossAttentionCache(args)
    cc.update(torch.tensor([0]), torch.randn(args.max_batch_size, 1, args.n_heads, args.dim // args.n_heads))
    print("ok", tuple(logits.shape))
