# source: aqlaboratory/openfold-3 https://github.com/aqlaboratory/openfold-3/pull/217 — PairBlock.tri_att_start_end called z.contiguous() after each z.transpose(-2, -3) on the inplace_safe (inference) path, materialising two extra copies of the N x N x C_z pair tensor per block even though the in-place add writes through the transposed view; the PR removed both .contiguous() calls.
import math

import torch
from torch import nn


def add(m1, m2, inplace):
    # openfold's helper: in-place add when safe, out-of-place otherwise
    if not inplace:
        m1 = m1 + m2
    else:
        m1 += m2
    return m1


class TriangleAttention(nn.Module):
    def __init__(self, c_in, c_hidden, no_heads, inf=1e9):
        super().__init__()
        self.c_hidden, self.no_heads, self.inf = c_hidden, no_heads, inf
        self.layer_norm = nn.LayerNorm(c_in)
        self.linear = nn.Linear(c_in, no_heads, bias=False)
        self.linear_q = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_k = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_v = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_o = nn.Linear(c_hidden * no_heads, c_in)

    def forward(self, x, mask=None, chunk_size=None, use_memory_efficient_kernel=False,
                use_deepspeed_evo_attention=False, use_lma=False, inplace_safe=False):
        # x: [*, I, J, C]; attention along J for every row I
        x = self.layer_norm(x)
        mask_bias = (self.inf * (mask - 1))[..., :, None, None, :]
        triangle_bias = self.linear(x).permute(0, 3, 1, 2).unsqueeze(1)  # [*, 1, H, I, J]
        *b, I, J, _ = x.shape
        q = self.linear_q(x).view(*b, I, J, self.no_heads, self.c_hidden).transpose(-2, -3)
        k = self.linear_k(x).view(*b, I, J, self.no_heads, self.c_hidden).transpose(-2, -3)
        v = self.linear_v(x).view(*b, I, J, self.no_heads, self.c_hidden).transpose(-2, -3)
        a = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.c_hidden) + mask_bias + triangle_bias
        o = torch.matmul(torch.softmax(a, dim=-1), v).transpose(-2, -3).reshape(*b, I, J, -1)
        return self.linear_o(o)


class PairBlock(nn.Module):
    def __init__(self, c_z=16, c_hidden=8, no_heads=2):
        super().__init__()
        self.tri_att_start = TriangleAttention(c_z, c_hidden, no_heads)
        self.tri_att_end = TriangleAttention(c_z, c_hidden, no_heads)
        self.ps_dropout_row_layer = nn.Dropout(0.25)

    def tri_att_start_end(self, z, _attn_chunk_size, pair_mask, use_deepspeed_evo_attention, use_lma, inplace_safe):
        z = add(z, self.ps_dropout_row_layer(self.tri_att_start(
            z, mask=pair_mask, chunk_size=_attn_chunk_size, use_memory_efficient_kernel=False,
            use_deepspeed_evo_attention=use_deepspeed_evo_attention, use_lma=use_lma, inplace_safe=inplace_safe,
        )), inplace=inplace_safe)

        z = z.transpose(-2, -3)
        if inplace_safe:
            z = z.contiguous()  # want: C

        z = add(z, self.ps_dropout_row_layer(self.tri_att_end(
            z, mask=pair_mask.transpose(-1, -2), chunk_size=_attn_chunk_size, use_memory_efficient_kernel=False,
            use_deepspeed_evo_attention=use_deepspeed_evo_attention, use_lma=use_lma, inplace_safe=inplace_safe,
        )), inplace=inplace_safe)

        z = z.transpose(-2, -3)
        if inplace_safe:
            z = z.contiguous()  # want: C

        return z


class PairBlockFixed(PairBlock):
    def tri_att_start_end(self, z, _attn_chunk_size, pair_mask, use_deepspeed_evo_attention, use_lma, inplace_safe):
        z = add(z, self.ps_dropout_row_layer(self.tri_att_start(
            z, mask=pair_mask, chunk_size=_attn_chunk_size, use_memory_efficient_kernel=False,
            use_deepspeed_evo_attention=use_deepspeed_evo_attention, use_lma=use_lma, inplace_safe=inplace_safe,
        )), inplace=inplace_safe)

        z = z.transpose(-2, -3)

        z = add(z, self.ps_dropout_row_layer(self.tri_att_end(
            z, mask=pair_mask.transpose(-1, -2), chunk_size=_attn_chunk_size, use_memory_efficient_kernel=False,
            use_deepspeed_evo_attention=use_deepspeed_evo_attention, use_lma=use_lma, inplace_safe=inplace_safe,
        )), inplace=inplace_safe)

        return z.transpose(-2, -3)


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = PairBlock().eval()
    fixed = PairBlockFixed().eval()
    fixed.load_state_dict(buggy.state_dict())
    N, C = 48, 16
    z0 = torch.randn(1, N, N, C)
    mask = torch.ones(1, N, N)
    with torch.no_grad():
        zb = z0.clone()
        out_b = buggy.tri_att_start_end(zb, None, mask, False, False, inplace_safe=True)
        zf = z0.clone()
        out_f = fixed.tri_att_start_end(zf, None, mask, False, False, inplace_safe=True)
    assert torch.allclose(out_b, out_f, atol=1e-5)
    print("pair tensor bytes:", z0.untyped_storage().nbytes())
    print("buggy result lives in a fresh copy:", out_b.data_ptr() != zb.data_ptr())
    print("fixed result is the caller's buffer updated in place:", out_f.data_ptr() == zf.data_ptr())
