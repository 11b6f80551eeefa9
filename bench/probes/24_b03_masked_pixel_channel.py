# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/80155 — "Mask+Index Assignment Broken": setting one channel of the masked pixels of an image with b[a][:, 0] = 1 silently changed nothing (b[a] is a gathered copy and the [:, 0] write lands in it); indexing the channel first, b[..., 0][a] = 1, works
from dataclasses import dataclass

import torch


@dataclass
class PaintMaskedChannel:
    """Augmentation: set one channel of every pixel selected by a (H, W) mask, on an (H, W, C) image."""

    channel: int
    value: float

    def __call__(self, img_hwc: torch.Tensor, mask_hw: torch.Tensor) -> torch.Tensor:
        img_hwc[mask_hw][:, self.channel] = self.value  # want: B
        return img_hwc


@dataclass
class PaintMaskedChannelFixed:
    channel: int
    value: float

    def __call__(self, img_hwc: torch.Tensor, mask_hw: torch.Tensor) -> torch.Tensor:
        img_hwc[..., self.channel][mask_hw] = self.value  # basic index first: a view, then __setitem__
        return img_hwc


def fill_masked_pixels(img_hwc: torch.Tensor, mask_hw: torch.Tensor, rgb) -> torch.Tensor:
    img_hwc[mask_hw] = torch.as_tensor(rgb, dtype=img_hwc.dtype)  # single __setitem__: lands
    return img_hwc


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.rand(5, 3) > 0.2
    img = torch.zeros(5, 3, 2)
    out = PaintMaskedChannel(channel=0, value=1.0)(img.clone(), a)
    assert out.abs().sum() == 0  # unchanged
    out_fixed = PaintMaskedChannelFixed(channel=0, value=1.0)(img.clone(), a)
    assert torch.equal(out_fixed[..., 0], a.float()) and out_fixed[..., 1].abs().sum() == 0
    filled = fill_masked_pixels(img.clone(), a, [1.0, 0.5])
    assert torch.equal(filled[a], torch.tensor([1.0, 0.5]).expand(int(a.sum()), 2))
    print("ok: img[mask][:, c] = v wrote into a temporary")
