# VL102: `.contiguous()` of a `.permute(0, 3, 1, 2)` result copies (not contiguous unless C/H/W are 1),
# so the stored tensor shares nothing with `x_feat` (timm coat.py:695)
import torch


def intermediates(xs: list, sizes: list, B: int) -> list:
    out = []
    for (H, W), x_feat in zip(sizes, xs):
        out.append(x_feat[:, 1:, :].reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous())
    return out
