# source: BlinkDL/ChatRWKV https://github.com/BlinkDL/ChatRWKV/pull/177 — att_seq_v5_2 appended each timestep's output to a list, then `torch.cat(out, dim=1)` and `out.transpose(0, 1).contiguous().reshape(T, H*S)` copied the whole result twice; the fix preallocates `out = torch.empty((T, H, S))`, writes `out[t] = ...` in the loop and just reshapes.
from typing import Optional

import torch
import torch.nn.functional as F


def gemm(a, b, output_dtype: Optional[torch.dtype] = None):
    if output_dtype is None:
        output_dtype = a.dtype
    return (a @ b).to(output_dtype)


class RWKV(torch.nn.Module):
    def att_seq_v5_2(self, x, sx, s, ln_w, ln_b, lx_w, lx_b, k_mix, v_mix, r_mix, g_mix, t_decay, t_first, kw, vw, rw, gw, ow, kmx=None, krx=None, kmy=None, kry=None, vmx=None, vrx=None, vmy=None, vry=None, rmx=None, rrx=None, rmy=None, rry=None, omx=None, orx=None, omy=None, ory=None):
        xx = F.layer_norm(x, (x.shape[-1],), weight=ln_w, bias=ln_b)
        sx = torch.cat((sx.unsqueeze(0), xx[:-1, :]))
        kx = xx * k_mix + sx * (1 - k_mix)
        vx = xx * v_mix + sx * (1 - v_mix)
        rx = xx * r_mix + sx * (1 - r_mix)
        gx = xx * g_mix + sx * (1 - g_mix)

        H = t_decay.shape[0]
        S = x.shape[-1] // H
        T = x.shape[0]

        r = gemm(rx, rw, output_dtype=torch.float32).view(T, H, S).transpose(0, 1)
        k = gemm(kx, kw, output_dtype=torch.float32).view(T, H, S).transpose(0, 1).transpose(-2, -1)
        v = gemm(vx, vw, output_dtype=torch.float32).view(T, H, S).transpose(0, 1)
        g = F.silu(gemm(gx, gw))

        out = []
        for t in range(T):
            rt = r[:, t:t + 1, :]
            kt = k[:, :, t:t + 1]
            vt = v[:, t:t + 1, :]
            at = gemm(kt, vt)
            out.append(rt @ (t_first * at + s))
            s = at + t_decay * s
        out = torch.cat(out, dim=1)  # want: C

        out = out.transpose(0, 1).contiguous().reshape(T, H * S)  # want: C
        out = F.group_norm(out, num_groups=H, weight=lx_w, bias=lx_b)
        out = out.to(dtype=x.dtype) * g
        out = gemm(out, ow)

        return x + out, xx[-1, :], s

    def att_seq_v5_2_fixed(self, x, sx, s, ln_w, ln_b, lx_w, lx_b, k_mix, v_mix, r_mix, g_mix, t_decay, t_first, kw, vw, rw, gw, ow):
        # merged version (look-alike)
        xx = F.layer_norm(x, (x.shape[-1],), weight=ln_w, bias=ln_b)
        sx = torch.cat((sx.unsqueeze(0), xx[:-1, :]))
        kx = xx * k_mix + sx * (1 - k_mix)
        vx = xx * v_mix + sx * (1 - v_mix)
        rx = xx * r_mix + sx * (1 - r_mix)
        gx = xx * g_mix + sx * (1 - g_mix)

        H = t_decay.shape[0]
        S = x.shape[-1] // H
        T = x.shape[0]

        r = gemm(rx, rw, output_dtype=torch.float32).view(T, H, S).transpose(0, 1)
        k = gemm(kx, kw, output_dtype=torch.float32).view(T, H, S).transpose(0, 1).transpose(-2, -1)
        v = gemm(vx, vw, output_dtype=torch.float32).view(T, H, S).transpose(0, 1)
        g = F.silu(gemm(gx, gw))

        out = torch.empty((T, H, S), dtype=r.dtype, device=r.device)
        for t in range(T):
            rt = r[:, t:t + 1, :]
            kt = k[:, :, t:t + 1]
            vt = v[:, t:t + 1, :]
            at = gemm(kt, vt)
            out[t] = (rt @ (t_first * at + s)).squeeze(1)
            s = at + t_decay * s

        out = out.reshape(T, H * S)
        out = F.group_norm(out, num_groups=H, weight=lx_w, bias=lx_b)
        out = out.to(dtype=x.dtype) * g
        out = gemm(out, ow)

        return x + out, xx[-1, :], s


if __name__ == "__main__":
    torch.manual_seed(0)
    T, C, H = 48, 128, 4
    S = C // H
    m = RWKV()
    p = dict(
        ln_w=torch.ones(C), ln_b=torch.zeros(C), lx_w=torch.ones(C), lx_b=torch.zeros(C),
        k_mix=torch.rand(C), v_mix=torch.rand(C), r_mix=torch.rand(C), g_mix=torch.rand(C),
        t_decay=torch.rand(H, 1, 1) * 0.9, t_first=torch.rand(H, 1, 1),
        kw=torch.randn(C, C) / C ** 0.5, vw=torch.randn(C, C) / C ** 0.5, rw=torch.randn(C, C) / C ** 0.5,
        gw=torch.randn(C, C) / C ** 0.5, ow=torch.randn(C, C) / C ** 0.5,
    )
    x = torch.randn(T, C)
    sx = torch.zeros(C)
    s = torch.zeros(H, S, S)
    y1, _, s1 = m.att_seq_v5_2(x, sx, s, **p)
    y2, _, s2 = m.att_seq_v5_2_fixed(x, sx, s, **p)
    print("ok", tuple(y1.shape), torch.allclose(y1, y2, atol=1e-4), torch.allclose(s1, s2, atol=1e-4))
