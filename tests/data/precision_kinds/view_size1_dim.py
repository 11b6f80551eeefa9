# VL101: `t[0]` of a tensor whose leading dim is 1 is all of `t` (vllm pixtral.py:1534)
import torch
import torch.nn.functional as F


def get_sub_grids(x: torch.Tensor, sizes: list, k: int) -> list:
    d = x.shape[-1]
    out: list = []
    for i, tokens in enumerate(x.split([h * w for h, w in sizes])):
        h, w = sizes[i]
        grid = tokens.view(h, w, d).permute(2, 0, 1)[None, :, :, :]
        sub = F.unfold(grid, kernel_size=k, stride=k)
        sub = sub.view(1, d, k, k, -1)
        out.append(sub[0])
    return out
