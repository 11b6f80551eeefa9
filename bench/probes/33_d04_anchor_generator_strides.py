# source: pytorch/vision https://github.com/pytorch/vision/pull/5515 — AnchorGenerator.forward built the per-level strides with torch.tensor(image_size[0] // g[0], dtype=torch.int64, device=device), a blocking pageable host-to-device copy that shows up as a synchronizing CUDA op on every detector forward; the fix allocates on device and fills: torch.empty((), dtype=torch.int64, device=device).fill_(...).
from typing import List, NamedTuple, Tuple

import torch
from torch import nn, Tensor


class ImageList(NamedTuple):
    tensors: Tensor
    image_sizes: List[Tuple[int, int]]


class AnchorGenerator(nn.Module):
    def __init__(self, sizes=((32,), (64,), (128,)), aspect_ratios=((0.5, 1.0, 2.0),) * 3):
        super().__init__()
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(s, a) for s, a in zip(sizes, aspect_ratios)]

    def generate_anchors(self, scales, aspect_ratios, dtype=torch.float32, device=torch.device("cpu")):
        scales = torch.as_tensor(scales, dtype=dtype, device=device)
        aspect_ratios = torch.as_tensor(aspect_ratios, dtype=dtype, device=device)
        h_ratios = torch.sqrt(aspect_ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).view(-1)
        hs = (h_ratios[:, None] * scales[None, :]).view(-1)
        base_anchors = torch.stack([-ws, -hs, ws, hs], dim=1) / 2
        return base_anchors.round()

    def set_cell_anchors(self, dtype, device):
        self.cell_anchors = [cell_anchor.to(dtype=dtype, device=device) for cell_anchor in self.cell_anchors]

    def grid_anchors(self, grid_sizes: List[List[int]], strides: List[List[Tensor]]) -> List[Tensor]:
        anchors = []
        for size, stride, base_anchors in zip(grid_sizes, strides, self.cell_anchors):
            grid_height, grid_width = size
            stride_height, stride_width = stride
            device = base_anchors.device
            shifts_x = torch.arange(0, grid_width, dtype=torch.int32, device=device) * stride_width
            shifts_y = torch.arange(0, grid_height, dtype=torch.int32, device=device) * stride_height
            shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x = shift_x.reshape(-1)
            shift_y = shift_y.reshape(-1)
            shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def _strides(self, grid_sizes, image_size, device):
        return [
            [
                torch.tensor(image_size[0] // g[0], dtype=torch.int64, device=device),  # want: D
                torch.tensor(image_size[1] // g[1], dtype=torch.int64, device=device),  # want: D
            ]
            for g in grid_sizes
        ]

    def forward(self, image_list: ImageList, feature_maps: List[Tensor]) -> List[Tensor]:
        grid_sizes = [feature_map.shape[-2:] for feature_map in feature_maps]
        image_size = image_list.tensors.shape[-2:]
        dtype, device = feature_maps[0].dtype, feature_maps[0].device
        strides = self._strides(grid_sizes, image_size, device)
        self.set_cell_anchors(dtype, device)
        anchors_over_all_feature_maps = self.grid_anchors(grid_sizes, strides)
        anchors: List[List[Tensor]] = []
        for _ in range(len(image_list.image_sizes)):
            anchors_in_image = [anchors_per_feature_map for anchors_per_feature_map in anchors_over_all_feature_maps]
            anchors.append(anchors_in_image)
        return [torch.cat(anchors_per_image) for anchors_per_image in anchors]


class AnchorGeneratorFixed(AnchorGenerator):
    def _strides(self, grid_sizes, image_size, device):
        return [
            [
                torch.empty((), dtype=torch.int64, device=device).fill_(image_size[0] // g[0]),
                torch.empty((), dtype=torch.int64, device=device).fill_(image_size[1] // g[1]),
            ]
            for g in grid_sizes
        ]


if __name__ == "__main__":
    images = ImageList(torch.randn(2, 3, 128, 160), [(128, 160), (120, 150)])
    feats = [torch.randn(2, 8, 128 // s, 160 // s) for s in (8, 16, 32)]
    a = AnchorGenerator()(images, feats)
    b = AnchorGeneratorFixed()(images, feats)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    print("anchors per image:", [t.shape[0] for t in a])
