# source: roboflow/rf-detr PR #1415 (host-to-device) and PR #1388 (device-to-host) — predict() widened uint8 images to float32 on the host and then copied 4x the bytes to the accelerator; and for CUDA float inputs it moved the fp16/fp32 image to the CPU before scaling it to uint8 for source_image, instead of narrowing on the device first
from typing import List

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

MEANS = torch.tensor([0.485, 0.456, 0.406])
STDS = torch.tensor([0.229, 0.224, 0.225])


def _uint8_image_to_tensor(array: np.ndarray) -> torch.Tensor:
    """HWC uint8 -> CHW float32 in [0, 1], one allocation for layout + dtype, divide in place."""
    chw = torch.from_numpy(array).permute(2, 0, 1)
    return chw.float().div_(255.0)  # maybe: C (the widening itself is fine; it becomes wasteful because predict() ships the result to the device)


def _uint8_image_to_chw_view(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(array).permute(2, 0, 1)


def _uint8_chw_to_float(chw: torch.Tensor) -> torch.Tensor:
    return chw.float().div_(255.0)


class TinyDetector(nn.Module):
    def __init__(self, num_queries=5, num_classes=3):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, stride=4, padding=1)
        self.head = nn.Linear(8, num_queries * (num_classes + 4))
        self.nq, self.nc = num_queries, num_classes

    def forward(self, x):
        feat = self.backbone(x).mean((2, 3))
        out = self.head(feat).view(x.shape[0], self.nq, self.nc + 4)
        return out[..., : self.nc], out[..., self.nc:].sigmoid()


class RFDETR:
    def __init__(self, resolution=32, device="cpu"):
        self.model = TinyDetector().eval()
        self.resolution = resolution
        self.device = torch.device(device)

    @torch.no_grad()
    def predict(self, images: List, threshold: float = 0.0, include_source_image: bool = True):
        processed_images, orig_sizes, sources = [], [], []
        for img in images:
            if isinstance(img, np.ndarray):
                if img.dtype != np.uint8:
                    raise ValueError("expected a uint8 HWC image")
                img_tensor = _uint8_image_to_tensor(img)
                if include_source_image:
                    sources.append(img)
            elif isinstance(img, torch.Tensor):
                img_tensor = img
                if include_source_image:
                    if img.is_floating_point():
                        source = (img.permute(1, 2, 0).cpu().numpy() * 255).astype(np.uint8)  # want: C
                    else:
                        source = img.permute(1, 2, 0).cpu().numpy()  # already 1 byte per channel: nothing to narrow
                    sources.append(source)
            else:
                raise TypeError(type(img))
            h, w = img_tensor.shape[1:]
            orig_sizes.append((h, w))
            if img_tensor.device.type == "cpu" and self.device.type == "cuda":
                img_tensor = img_tensor.pin_memory()
            img_tensor = img_tensor.to(self.device)  # want: C
            img_tensor = (img_tensor - MEANS.to(self.device)[:, None, None]) / STDS.to(self.device)[:, None, None]
            img_tensor = F.interpolate(img_tensor[None], size=(self.resolution, self.resolution),
                                       mode="bilinear", align_corners=False)[0]
            processed_images.append(img_tensor)

        batch = torch.stack(processed_images)
        logits, boxes = self.model(batch)
        scores, labels = logits.sigmoid().max(-1)
        sizes = torch.tensor(orig_sizes, dtype=torch.float32, device=self.device)  # python ints: a real H2D copy of 2*B numbers
        boxes = boxes * sizes.flip(-1).repeat(1, 2)[:, None, :]
        return scores, labels, boxes, sources

    @torch.no_grad()
    def predict_fixed(self, images: List[np.ndarray]):
        out = []
        for img in images:
            chw = _uint8_image_to_chw_view(img)
            if self.device.type == "cuda":
                chw = chw.pin_memory()
            x = _uint8_chw_to_float(chw.to(self.device))  # 1 byte per channel crosses the bus
            out.append(x)
        return out

    @staticmethod
    def source_from_device_float(img: torch.Tensor) -> np.ndarray:
        return (img * 255).to(torch.uint8).permute(1, 2, 0).cpu().numpy()  # narrow first, then copy: the fixed order


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8) for _ in range(2)]
    det = RFDETR()
    s, l, b, src = det.predict(frames)
    assert s.shape == (2, 5) and b.shape == (2, 5, 4) and src[0] is frames[0]
    fixed = det.predict_fixed(frames)
    assert torch.allclose(fixed[0], _uint8_image_to_tensor(frames[0]))
    as_float = _uint8_image_to_tensor(frames[1])
    _, _, _, src2 = det.predict([as_float])
    assert np.array_equal(src2[0], RFDETR.source_from_device_float(as_float))
    assert as_float.element_size() == 4 * _uint8_image_to_chw_view(frames[1]).element_size()
    print("ok: the float image is 4x the bytes of the uint8 one on either side of the copy")
