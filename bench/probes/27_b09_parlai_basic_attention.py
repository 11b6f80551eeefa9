# source: facebookresearch/ParlAI https://github.com/facebookresearch/ParlAI/pull/3068 — BasicAttention.forward called the out-of-place `l1.masked_fill(attn_mask, neginf(l1.dtype))` and ignored the result, so padded keys still received attention weight; the fix uses `l1.masked_fill_(...)`.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NEAR_INF = 1e20
NEAR_INF_FP16 = 65504


def neginf(dtype: torch.dtype) -> float:
    """
    Return a representable finite number near -inf for a dtype.
    """
    if dtype is torch.float16:
        return -NEAR_INF_FP16
    else:
        return -NEAR_INF


class BasicAttention(nn.Module):
    """
    Implements simple/classical attention.
    """

    def __init__(self, dim=1, attn='cosine', residual=False, get_weights=True):
        super().__init__()
        if attn == 'cosine':
            self.cosine = nn.CosineSimilarity(dim=dim)
        self.attn = attn
        self.dim = dim
        self.get_weights = get_weights
        self.residual = residual

    def forward(self, xs, ys, mask_ys=None, values=None):
        """
        Compute attention.

        Attend over ys with query xs to obtain weights, then apply weights to
        values (ys if yalues is None)
        """
        bsz = xs.size(0)
        y_len = ys.size(1)
        x_len = xs.size(1)
        if self.attn == 'cosine':
            l1 = self.cosine(xs, ys).unsqueeze(self.dim - 1)
        else:
            l1 = torch.bmm(xs, ys.transpose(1, 2))
            if self.attn == 'sqrt':
                d_k = ys.size(-1)
                l1 = l1 / math.sqrt(d_k)
        if mask_ys is not None:
            attn_mask = (mask_ys == 0).view(bsz, 1, y_len)
            attn_mask = attn_mask.repeat(1, x_len, 1)
            l1.masked_fill(attn_mask, neginf(l1.dtype))  # want: B
        l2 = F.softmax(l1, dim=self.dim, dtype=torch.float).type_as(l1)
        if values is None:
            values = ys
        lhs_emb = torch.bmm(l2, values)

        # # add back the query
        if self.residual:
            lhs_emb = lhs_emb.add(xs)

        if self.get_weights:
            return lhs_emb.squeeze(self.dim - 1), l2
        else:
            return lhs_emb


class BasicAttentionFixed(BasicAttention):
    def forward(self, xs, ys, mask_ys=None, values=None):
        bsz, y_len, x_len = xs.size(0), ys.size(1), xs.size(1)
        l1 = torch.bmm(xs, ys.transpose(1, 2))
        if mask_ys is not None:
            attn_mask = (mask_ys == 0).view(bsz, 1, y_len)
            attn_mask = attn_mask.repeat(1, x_len, 1)
            l1.masked_fill_(attn_mask, neginf(l1.dtype))
        l2 = F.softmax(l1, dim=self.dim, dtype=torch.float).type_as(l1)
        return torch.bmm(l2, ys if values is None else values).squeeze(self.dim - 1), l2


if __name__ == "__main__":
    torch.manual_seed(0)
    xs = torch.randn(2, 1, 4)
    ys = torch.randn(2, 5, 4)
    mask_ys = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    _, w = BasicAttention(dim=2, attn='sqrt')(xs, ys, mask_ys)
    print("buggy attention weight on padded keys:", w[0, 0, 3:].sum().item())
    _, w = BasicAttentionFixed(dim=2, attn='sqrt')(xs, ys, mask_ys)
    print("fixed attention weight on padded keys:", w[0, 0, 3:].sum().item())
