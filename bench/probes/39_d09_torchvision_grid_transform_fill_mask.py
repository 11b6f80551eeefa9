# source: pytorch/vision https://github.com/pytorch/vision/pull/8171 — The v2 geometry kernel _apply_grid_transform (used by affine/rotate/perspective with a fill colour) painted the fill in nearest mode with boolean-mask index_put, float_img[bool_mask] = fill_img.expand_as(float_img)[bool_mask]. Boolean-mask indexing runs nonzero and syncs with the host on CUDA (and breaks torch.compile graphs); the fix replaces it with torch.where(mask < 0.5, fill_img.expand_as(float_img), float_img).
from typing import List, Optional, Union

import torch
from torch.nn.functional import grid_sample


def _fill_image(float_img: torch.Tensor, fill: Union[float, List[float]]) -> torch.Tensor:
    fill_list = fill if isinstance(fill, (tuple, list)) else [float(fill)]
    return torch.tensor(fill_list, dtype=float_img.dtype, device=float_img.device).view(1, -1, 1, 1)  # maybe: D (pageable host list copied to the device every call; kept by the fix)


def _grid_sample_with_mask(img, grid, mode, fill):
    input_shape = img.shape
    num_channels, input_height, input_width = input_shape[-3:]
    img = img.reshape(-1, num_channels, input_height, input_width)
    squashed_batch_size = img.shape[0]
    fp = img.dtype == grid.dtype
    float_img = img if fp else img.to(grid.dtype)
    if squashed_batch_size > 1:
        grid = grid.expand(squashed_batch_size, -1, -1, -1)
    if fill is not None:
        mask = torch.ones((squashed_batch_size, 1, input_height, input_width), dtype=float_img.dtype, device=float_img.device)
        float_img = torch.cat((float_img, mask), dim=1)
    float_img = grid_sample(float_img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    return float_img, fp


def _apply_grid_transform(img: torch.Tensor, grid: torch.Tensor, mode: str, fill: Optional[Union[float, List[float]]]) -> torch.Tensor:
    input_shape = img.shape
    output_shape = input_shape[:-2] + (grid.shape[1], grid.shape[2])
    if img.numel() == 0:
        return img.reshape(output_shape)
    float_img, fp = _grid_sample_with_mask(img, grid, mode, fill)

    # Fill with required color
    if fill is not None:
        float_img, mask = torch.tensor_split(float_img, indices=(-1,), dim=-3)
        mask = mask.expand_as(float_img)
        fill_img = _fill_image(float_img, fill)
        if mode == "nearest":
            bool_mask = mask < 0.5
            float_img[bool_mask] = fill_img.expand_as(float_img)[bool_mask]  # want: D
        else:  # 'bilinear'
            float_img = float_img.sub_(fill_img).mul_(mask).add_(fill_img)

    img = float_img.round_().to(img.dtype) if not fp else float_img
    return img.reshape(output_shape)


def _apply_grid_transform_fixed(img: torch.Tensor, grid: torch.Tensor, mode: str, fill: Optional[Union[float, List[float]]]) -> torch.Tensor:
    input_shape = img.shape
    output_shape = input_shape[:-2] + (grid.shape[1], grid.shape[2])
    if img.numel() == 0:
        return img.reshape(output_shape)
    float_img, fp = _grid_sample_with_mask(img, grid, mode, fill)

    # Fill with required color
    if fill is not None:
        float_img, mask = torch.tensor_split(float_img, indices=(-1,), dim=-3)
        mask = mask.expand_as(float_img)
        fill_img = _fill_image(float_img, fill)
        if mode == "nearest":
            float_img = torch.where(mask < 0.5, fill_img.expand_as(float_img), float_img)
        else:  # 'bilinear'
            float_img = float_img.sub_(fill_img).mul_(mask).add_(fill_img)

    img = float_img.round_().to(img.dtype) if not fp else float_img
    return img.reshape(output_shape)


if __name__ == "__main__":
    torch.manual_seed(0)
    img = torch.randint(0, 256, (2, 3, 16, 16), dtype=torch.uint8)
    theta = torch.tensor([[[0.8, -0.5, 0.1], [0.5, 0.8, -0.2]]])
    grid = torch.nn.functional.affine_grid(theta, [1, 3, 16, 16], align_corners=False)
    for mode in ("nearest", "bilinear"):
        a = _apply_grid_transform(img, grid, mode, fill=[10.0, 20.0, 30.0])
        b = _apply_grid_transform_fixed(img, grid, mode, fill=[10.0, 20.0, 30.0])
        assert torch.equal(a, b), mode
    assert (a == 10).any()
    print("ok")
