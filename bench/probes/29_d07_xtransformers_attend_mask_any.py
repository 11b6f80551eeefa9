# source: lucidrains/x-transformers https://github.com/lucidrains/x-transformers/pull/355 — Attend.flash_attn (and the non-flash forward) guarded the zeroing of fully-masked rows with `if exists(row_is_entirely_masked) and row_is_entirely_masked.any():`, turning a 0-dim CUDA bool into a Python bool on every attention call; the fix only checks that the mask exists and always calls masked_fill.
import torch
import torch.nn.functional as F
from torch import nn


def exists(val):
    return val is not None


class Attend(nn.Module):
    def __init__(self, causal=False, dropout=0., scale=None, flash=True):
        super().__init__()
        self.causal = causal
        self.dropout = dropout
        self.scale = scale
        self.flash = flash

    def create_causal_mask(self, i, j, device):
        return torch.ones((i, j), device=device, dtype=torch.bool).triu(j - i + 1)

    def flash_attn(self, q, k, v, mask=None, attn_bias=None):
        batch, heads, q_len, _, k_len, device = *q.shape, k.shape[-2], q.device

        if exists(self.scale):
            default_scale = q.shape[-1] ** -0.5
            q = q * (self.scale / default_scale)

        causal = self.causal

        # in the case of kv caching with one token (q_len == 1), just turn off causal masking
        if q_len == 1 and causal:
            causal = False

        # expand key padding mask
        if exists(mask):
            assert mask.ndim == 4
            mask = mask.expand(batch, heads, q_len, k_len)

        # manually handle causal mask, if another mask was given
        if exists(mask) and causal:
            causal_mask = self.create_causal_mask(q_len, k_len, device=device)
            mask = mask & ~causal_mask
            causal = False

        # protect against an entire row being masked out
        row_is_entirely_masked = None
        if exists(mask):
            row_is_entirely_masked = ~mask.any(dim=-1)

        out = F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=mask,
            dropout_p=self.dropout if self.training else 0.,
            is_causal=causal
        )

        # for a row that is entirely masked out, should zero out the output of that row token
        if exists(row_is_entirely_masked) and row_is_entirely_masked.any():  # want: D
            out = out.masked_fill(row_is_entirely_masked[..., None], 0.)

        return out

    def forward(self, q, k, v, mask=None, attn_bias=None):
        if exists(mask) and mask.ndim == 2:
            mask = mask[:, None, None, :]
        return self.flash_attn(q, k, v, mask=mask, attn_bias=attn_bias)


class AttendFixed(Attend):
    def flash_attn(self, q, k, v, mask=None, attn_bias=None):
        batch, heads, q_len, _, k_len, device = *q.shape, k.shape[-2], q.device

        if exists(self.scale):
            default_scale = q.shape[-1] ** -0.5
            q = q * (self.scale / default_scale)

        causal = self.causal

        # in the case of kv caching with one token (q_len == 1), just turn off causal masking
        if q_len == 1 and causal:
            causal = False

        # expand key padding mask
        if exists(mask):
            assert mask.ndim == 4
            mask = mask.expand(batch, heads, q_len, k_len)

        # manually handle causal mask, if another mask was given
        if exists(mask) and causal:
            causal_mask = self.create_causal_mask(q_len, k_len, device=device)
            mask = mask & ~causal_mask
            causal = False

        # protect against an entire row being masked out
        row_is_entirely_masked = None
        if exists(mask):
            row_is_entirely_masked = ~mask.any(dim=-1)

        out = F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=mask,
            dropout_p=self.dropout if self.training else 0.,
            is_causal=causal
        )

        # for a row that is entirely masked out, should zero out the output of that row token
        if exists(row_is_entirely_masked):
            out = out.masked_fill(row_is_entirely_masked[..., None], 0.)

        return out


class Block(nn.Module):
    def __init__(self, dim, heads, attend):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim, bias=False)
        self.attend = attend

    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        out = self.attend(q, k, v, mask=mask)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 6, 32)
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, :] = False  # an entirely padded sequence
    bug = Block(32, 4, Attend(causal=True))
    fix = Block(32, 4, AttendFixed(causal=True))
    fix.load_state_dict(bug.state_dict())
    yb, yf = bug(x, mask), fix(x, mask)
    assert torch.allclose(yb, yf) and not torch.isnan(yf).any()
    print("masked sequence output norm:", float(yf[1].detach().norm()))
