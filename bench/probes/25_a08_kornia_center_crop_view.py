# source: kornia/kornia https://github.com/kornia/kornia/issues/4413 (fix PR #4727) — CenterCrop(cropping_mode="slice").apply_transform returned input[..., top:top+h, left:left+w], a view of the caller's batch: "a view keeps the whole original tensor alive, so a pipeline that crops a large batch down and keeps the crops holds the full input in memory indefinitely" (and writes alias the input); fix: return a clone of the slice (".contiguous() would not be enough")
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch import nn


class CenterCrop(nn.Module):
    def __init__(self, size: Tuple[int, int], cropping_mode: str = "slice"):
        super().__init__()
        self.size = size
        self.flags = {"size": size, "cropping_mode": cropping_mode}

    def apply_transform(
        self, input: torch.Tensor, params: Dict[str, torch.Tensor], flags: Dict[str, Any], transform: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        if flags["cropping_mode"] == "slice":
            crop_h, crop_w = int(flags["size"][0]), int(flags["size"][1])
            top = (input.shape[-2] - crop_h) // 2
            left = (input.shape[-1] - crop_w) // 2
            return input[..., top : top + crop_h, left : left + crop_w]  # want: A
        raise NotImplementedError(f"Not supported type: {flags['cropping_mode']}.")

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self.apply_transform(input, {}, self.flags)


class CenterCropFixed(CenterCrop):
    def apply_transform(self, input, params, flags, transform=None):
        crop_h, crop_w = int(flags["size"][0]), int(flags["size"][1])
        top = (input.shape[-2] - crop_h) // 2
        left = (input.shape[-1] - crop_w) // 2
        # .contiguous() would not be enough: a full-width crop is already contiguous
        return input[..., top : top + crop_h, left : left + crop_w].clone()


def thumbnail_bank(aug: nn.Module, frames: List[torch.Tensor]) -> List[torch.Tensor]:
    bank = []
    for frame_batch in frames:
        bank.append(aug(frame_batch))  # maybe: A (the store that pins each batch; the fix was made in the augmentation)
    return bank


def crop_mean(aug: nn.Module, x: torch.Tensor) -> torch.Tensor:
    # the crop is reduced immediately; only a fresh [B, C] tensor leaves
    return aug(x).mean(dim=(-2, -1))


if __name__ == "__main__":
    frames = [torch.rand(8, 3, 128, 128) for _ in range(3)]
    bank = thumbnail_bank(CenterCrop((16, 16)), frames)
    bank_fixed = thumbnail_bank(CenterCropFixed((16, 16)), frames)
    for crop, crop_fixed in zip(bank, bank_fixed):
        assert torch.equal(crop, crop_fixed)
        assert crop.untyped_storage().nbytes() == 8 * 3 * 128 * 128 * 4  # the whole input batch
        assert crop.untyped_storage().nbytes() > 50 * crop.numel() * crop.element_size()
        assert crop_fixed.untyped_storage().nbytes() == crop_fixed.numel() * 4
    full_width = CenterCrop((128, 128))(frames[0][:1])
    assert full_width.contiguous().data_ptr() == frames[0].data_ptr()  # .contiguous() is a no-op here
    assert crop_mean(CenterCrop((16, 16)), frames[0]).shape == (8, 3)
    print("ok: kept center crops pinned their full input batches")
