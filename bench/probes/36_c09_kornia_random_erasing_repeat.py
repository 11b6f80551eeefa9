# source: kornia/kornia https://github.com/kornia/kornia/pull/3828 — RandomErasing.apply_transform built two full (B, C, H, W) tensors on every call with `.repeat`: the per-sample fill value repeated over all channels/pixels and the (B, H, W) box mask repeated over channels, although `torch.where` broadcasts; the fix passes the value as (B, 1, 1, 1) and the mask as (B, 1, H, W).
from typing import Any, Dict, Optional

import torch


def bbox_generator(x_start, y_start, width, height):
    """Boxes as (B, 4, 2) corner points."""
    bbox = torch.stack([x_start, y_start], dim=-1).unsqueeze(1).repeat(1, 4, 1)
    bbox[:, 1, 0] += width - 1
    bbox[:, 2] += torch.stack([width - 1, height - 1], dim=-1)
    bbox[:, 3, 1] += height - 1
    return bbox


def bbox_to_mask(boxes, width, height):
    """(B, 4, 2) boxes -> (B, H, W) float mask, vectorised."""
    xs = torch.arange(width, device=boxes.device).view(1, 1, -1)
    ys = torch.arange(height, device=boxes.device).view(1, -1, 1)
    x0, x1 = boxes[:, 0, 0].view(-1, 1, 1), boxes[:, 2, 0].view(-1, 1, 1)
    y0, y1 = boxes[:, 0, 1].view(-1, 1, 1), boxes[:, 2, 1].view(-1, 1, 1)
    return ((xs >= x0) & (xs <= x1) & (ys >= y0) & (ys <= y1)).float()


class RandomErasing:
    def apply_transform(self, input: torch.Tensor, params: Dict[str, torch.Tensor], flags: Dict[str, Any],
                        transform: Optional[torch.Tensor] = None) -> torch.Tensor:
        _, c, h, w = input.size()
        values = params["values"].unsqueeze(-1).unsqueeze(-1).unsqueeze(-1).repeat(1, *input.shape[1:]).to(input)  # want: C
        bboxes = bbox_generator(params["xs"], params["ys"], params["widths"], params["heights"])
        mask = bbox_to_mask(bboxes, w, h)  # Returns B, H, W
        mask = mask.unsqueeze(1).repeat(1, c, 1, 1).to(input)  # want: C
        transformed = torch.where(mask == 1.0, values, input)
        return transformed

    def apply_transform_fixed(self, input: torch.Tensor, params: Dict[str, torch.Tensor], flags: Dict[str, Any],
                              transform: Optional[torch.Tensor] = None) -> torch.Tensor:
        _, _, h, w = input.size()
        # Broadcast the per-sample fill value (B, 1, 1, 1) and the single-channel mask (B, 1, H, W)
        values = params["values"].view(-1, 1, 1, 1).to(input)
        bboxes = bbox_generator(params["xs"], params["ys"], params["widths"], params["heights"])
        mask = bbox_to_mask(bboxes, w, h).unsqueeze(1).to(input)  # (B, 1, H, W)
        transformed = torch.where(mask == 1.0, values, input)
        return transformed


if __name__ == "__main__":
    torch.manual_seed(0)
    B, C, H, W = 4, 3, 32, 32
    images = torch.rand(B, C, H, W)
    params = {
        "values": torch.rand(B),
        "xs": torch.randint(0, 16, (B,)), "ys": torch.randint(0, 16, (B,)),
        "widths": torch.randint(1, 16, (B,)), "heights": torch.randint(1, 16, (B,)),
    }
    aug = RandomErasing()
    out_bug = aug.apply_transform(images, params, {})
    out_fix = aug.apply_transform_fixed(images, params, {})
    assert torch.equal(out_bug, out_fix)
    full = params["values"].view(-1, 1, 1, 1).repeat(1, C, H, W)
    print("repeat materialized two (B, C, H, W) temporaries of", full.numel(), "elements each")
