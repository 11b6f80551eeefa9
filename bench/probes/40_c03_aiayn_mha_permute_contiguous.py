# source: jadore801120/attention-is-all-you-need-pytorch https://github.com/jadore801120/attention-is-all-you-need-pytorch/commit/e2c95f83907f4ee480eef074822471b4844f498c — MultiHeadAttention.forward folded the heads into the batch for torch.bmm with `q.permute(2, 0, 1, 3).contiguous().view(-1, len_q, d_k)` (same for k and v) and `mask.repeat(n_head, 1, 1)`, copying q/k/v and materialising the mask n_head times on every call. The commit "Use matmul instead of bmm to reduce the contiguous operations" keeps q/k/v as `transpose(1, 2)` views fed to torch.matmul and broadcasts the mask with `mask.unsqueeze(1)`.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledDotProductAttention(nn.Module):
    ''' Scaled Dot-Product Attention '''
    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)
        self.softmax = nn.Softmax(dim=2)

    def forward(self, q, k, v, mask=None):
        attn = torch.bmm(q, k.transpose(1, 2))
        attn = attn / self.temperature
        if mask is not None:
            attn = attn.masked_fill(mask, -np.inf)
        attn = self.softmax(attn)
        attn = self.dropout(attn)
        output = torch.bmm(attn, v)
        return output, attn


class MultiHeadAttention(nn.Module):
    ''' Multi-Head Attention module '''
    def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
        super().__init__()
        self.n_head = n_head
        self.d_k = d_k
        self.d_v = d_v
        self.w_qs = nn.Linear(d_model, n_head * d_k)
        self.w_ks = nn.Linear(d_model, n_head * d_k)
        self.w_vs = nn.Linear(d_model, n_head * d_v)
        self.attention = ScaledDotProductAttention(temperature=np.power(d_k, 0.5))
        self.layer_norm = nn.LayerNorm(d_model)
        self.fc = nn.Linear(n_head * d_v, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
        sz_b, len_q, _ = q.size()
        sz_b, len_k, _ = k.size()
        sz_b, len_v, _ = v.size()
        residual = q

        q = self.w_qs(q).view(sz_b, len_q, n_head, d_k)
        k = self.w_ks(k).view(sz_b, len_k, n_head, d_k)
        v = self.w_vs(v).view(sz_b, len_v, n_head, d_v)

        q = q.permute(2, 0, 1, 3).contiguous().view(-1, len_q, d_k)  # want: C
        k = k.permute(2, 0, 1, 3).contiguous().view(-1, len_k, d_k)  # want: C
        v = v.permute(2, 0, 1, 3).contiguous().view(-1, len_v, d_v)  # want: C

        mask = mask.repeat(n_head, 1, 1)  # maybe: C (per-head copy of the mask where a broadcast would do)
        output, attn = self.attention(q, k, v, mask=mask)

        output = output.view(n_head, sz_b, len_q, d_v)
        output = output.permute(1, 2, 0, 3).contiguous().view(sz_b, len_q, -1)  # b x lq x (n*dv)

        output = self.dropout(self.fc(output))
        output = self.layer_norm(output + residual)
        return output, attn


class ScaledDotProductAttentionFixed(ScaledDotProductAttention):
    def forward(self, q, k, v, mask=None):
        attn = torch.matmul(q, k.transpose(2, 3))
        attn = attn / self.temperature
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e9)
        attn = self.dropout(F.softmax(attn, dim=-1))
        output = torch.matmul(attn, v)
        return output, attn


class MultiHeadAttentionFixed(MultiHeadAttention):
    def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
        super().__init__(n_head, d_model, d_k, d_v, dropout)
        self.attention = ScaledDotProductAttentionFixed(temperature=d_k ** 0.5)

    def forward(self, q, k, v, mask=None):
        d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
        sz_b, len_q, len_k, len_v = q.size(0), q.size(1), k.size(1), v.size(1)
        residual = q

        # Separate different heads: b x lq x n x dv
        q = self.w_qs(q).view(sz_b, len_q, n_head, d_k)
        k = self.w_ks(k).view(sz_b, len_k, n_head, d_k)
        v = self.w_vs(v).view(sz_b, len_v, n_head, d_v)
        # Transpose for attention dot product: b x n x lq x dv
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

        if mask is not None:
            mask = mask.unsqueeze(1)   # For head axis broadcasting.
        output, attn = self.attention(q, k, v, mask=mask)

        # Combine the last two dimensions to concatenate all the heads together: b x lq x (n*dv)
        output = output.transpose(1, 2).contiguous().view(sz_b, len_q, -1)
        output = self.dropout(self.fc(output))
        output = self.layer_norm(output + residual)
        return output, attn


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = MultiHeadAttention(n_head=4, d_model=32, d_k=8, d_v=8).eval()
    fixed = MultiHeadAttentionFixed(n_head=4, d_model=32, d_k=8, d_v=8).eval()
    fixed.load_state_dict(buggy.state_dict())
    seen = {}
    buggy.attention.register_forward_pre_hook(lambda m, a: seen.__setitem__("b", a))
    fixed.attention.register_forward_pre_hook(lambda m, a: seen.__setitem__("f", a))

    x = torch.randn(2, 5, 32)
    keep = torch.ones(2, 5, 5, dtype=torch.bool).tril()
    with torch.no_grad():
        out_b, _ = buggy(x, x, x, mask=~keep)
        out_f, _ = fixed(x, x, x, mask=keep)
    assert torch.allclose(out_b, out_f, atol=1e-5)
    qb, qf = seen["b"][0], seen["f"][0]
    # buggy q is a fresh contiguous copy; fixed q is still a strided view of the projection output
    assert qb.is_contiguous() and not qf.is_contiguous()
    print("ok")
