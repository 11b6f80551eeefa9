# source: facebookresearch/xformers https://github.com/facebookresearch/xformers/pull/119 — MultiHeadDispatch.forward always folded q/k/v heads into the batch dimension and called `.contiguous()` on them before attention, paying a full copy of each projection per forward; the fix ("contiguous tensors are only needed for sparse, removing the contiguous cost when not needed") hands attention mechanisms that accept a head dimension a strided [B, H, S, Hs] view instead.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledDotProduct(nn.Module):
    requires_head_dimension = True  # accepts [..., S, Hs] with any leading dims, any strides

    def forward(self, q, k, v, att_mask=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=att_mask)


def _split_heads(t, B, S, H, Hs):
    return t.view(B, S, H, Hs).transpose(1, 2).flatten(start_dim=0, end_dim=1).contiguous()  # want: C


class MultiHeadDispatch(nn.Module):
    def __init__(self, dim_model, num_heads, attention, bias=True):
        super().__init__()
        assert dim_model % num_heads == 0
        self.num_heads = num_heads
        self.dim_k = dim_model // num_heads
        self.attention = attention
        self.in_proj = nn.Linear(dim_model, 3 * dim_model, bias=bias)
        self.proj = nn.Linear(dim_model, dim_model, bias=bias)
        self.resid_drop = nn.Dropout(0.0, inplace=False)

    def forward(self, query, att_mask=None):
        B, S_Q, _ = query.size()
        q, k, v = self.in_proj(query).chunk(3, dim=-1)

        # Reshape k/q/v heads
        k, q, v = map(lambda x: _split_heads(x, B, S_Q, self.num_heads, self.dim_k), (k, q, v))

        # Self-attend
        y = self.attention(q=q, k=k, v=v, att_mask=att_mask)

        # Re-assemble all head outputs side by side
        y = y.view(B, self.num_heads, S_Q, self.dim_k).transpose(1, 2).flatten(start_dim=2, end_dim=3)

        # Output projection, dropout and good to go
        return self.resid_drop(self.proj(y))


def _fold_heads(t, B, S, H, Hs):
    return t.view(B, S, H, Hs).transpose(1, 2).flatten(start_dim=0, end_dim=1)


def _split_heads_fixed(t, B, S, H, Hs):
    return t.view(B, S, H, Hs).transpose(1, 2)


class MultiHeadDispatchFixed(MultiHeadDispatch):
    def forward(self, query, att_mask=None):
        B, S_Q, _ = query.size()
        q, k, v = self.in_proj(query).chunk(3, dim=-1)

        # Reshape k/q/v heads; only fold (and pay for a copy) when the attention needs it
        reshape_fn = _split_heads_fixed if self.attention.requires_head_dimension else _fold_heads
        k, q, v = map(lambda x: reshape_fn(x, B, S_Q, self.num_heads, self.dim_k), (k, q, v))

        # Self-attend
        y = self.attention(q=q, k=k, v=v, att_mask=att_mask)

        # Re-assemble all head outputs side by side
        y = y.view(B, self.num_heads, S_Q, self.dim_k).transpose(1, 2).flatten(start_dim=2, end_dim=3)

        # Output projection, dropout and good to go
        return self.resid_drop(self.proj(y))


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = MultiHeadDispatch(256, 8, ScaledDotProduct())
    fixed = MultiHeadDispatchFixed(256, 8, ScaledDotProduct())
    fixed.load_state_dict(buggy.state_dict())
    x = torch.randn(4, 128, 256)

    proj = buggy.in_proj(x).detach()
    q = proj.chunk(3, dim=-1)[0]
    folded = _split_heads(q, 4, 128, 8, 32)
    strided = _split_heads_fixed(q, 4, 128, 8, 32)
    print("buggy q shares projection storage:", folded.data_ptr() == q.data_ptr())
    print("fixed q shares projection storage:", strided.data_ptr() == q.data_ptr())
    assert strided.data_ptr() == q.data_ptr() and folded.data_ptr() != q.data_ptr()
    with torch.no_grad():
        assert torch.allclose(buggy(x), fixed(x), atol=1e-5)
