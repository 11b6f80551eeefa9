# source: roboflow/rf-detr https://github.com/roboflow/rf-detr/pull/1415 — predict() turned each uint8 PIL/NumPy image into a float32 CHW tensor on the host (_uint8_image_to_tensor) and only then pinned and copied it to the model device, moving 4x the bytes and pinning a 4x staging buffer; the fix transfers the zero-copy uint8 CHW view and widens/divides on the accelerator.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def _uint8_image_to_tensor(img):
    """HWC uint8 image -> float32 CHW tensor in [0, 1] (on the host)."""
    arr = np.asarray(img)
    chw = torch.from_numpy(arr).permute(2, 0, 1)
    return chw.float().div_(255.0)  # maybe: C (host-side widening; only wasteful because it is transferred next)


def _uint8_image_to_chw_view(img):
    arr = np.asarray(img)
    return torch.from_numpy(arr).permute(2, 0, 1)


def _uint8_chw_to_float(chw):
    return chw.float().div_(255.0)


class TinyDetector(nn.Module):
    def __init__(self, resolution=32):
        super().__init__()
        self.resolution = resolution
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return self.backbone(x).mean(dim=(2, 3))


class RFDETR:
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    def __init__(self, device="cpu"):
        self.device = torch.device(device)
        self.model = TinyDetector().to(self.device)
        self.transferred_bytes = 0
        self._mean = torch.tensor(self.means, device=self.device).view(3, 1, 1)
        self._std = torch.tensor(self.stds, device=self.device).view(3, 1, 1)

    def _normalize_resize(self, img_tensor):
        img_tensor = (img_tensor - self._mean) / self._std
        res = self.model.resolution
        return F.interpolate(img_tensor[None], size=(res, res), mode="bilinear", align_corners=False)[0]

    @torch.no_grad()
    def predict(self, images, threshold=0.5):
        processed_images = []
        orig_sizes = []
        for img in images:
            img_tensor = _uint8_image_to_tensor(img)
            h, w = img_tensor.shape[1:]
            orig_sizes.append((h, w))
            if self.device.type == "cuda":
                img_tensor = img_tensor.pin_memory()
            self.transferred_bytes += img_tensor.numel() * img_tensor.element_size()
            img_tensor = img_tensor.to(self.device, non_blocking=True)  # want: C
            processed_images.append(self._normalize_resize(img_tensor))

        batch = torch.stack(processed_images)
        return self.model(batch), orig_sizes


class RFDETRFixed(RFDETR):
    @torch.no_grad()
    def predict(self, images, threshold=0.5):
        processed_images = []
        orig_sizes = []
        for img in images:
            img_tensor = _uint8_image_to_chw_view(img)
            h, w = img_tensor.shape[1:]
            orig_sizes.append((h, w))
            if self.device.type == "cuda":
                img_tensor = img_tensor.pin_memory()
            self.transferred_bytes += img_tensor.numel() * img_tensor.element_size()
            img_tensor = img_tensor.to(self.device, non_blocking=True)
            img_tensor = _uint8_chw_to_float(img_tensor)
            processed_images.append(self._normalize_resize(img_tensor))

        batch = torch.stack(processed_images)
        return self.model(batch), orig_sizes


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8) for _ in range(3)]

    buggy = RFDETR()
    fixed = RFDETRFixed()
    fixed.model.load_state_dict(buggy.model.state_dict())

    out_a, sizes_a = buggy.predict(frames)
    out_b, sizes_b = fixed.predict(frames)
    assert torch.allclose(out_a, out_b, atol=1e-6) and sizes_a == sizes_b
    print("host->device bytes: buggy", buggy.transferred_bytes, "fixed", fixed.transferred_bytes)
    assert buggy.transferred_bytes == 4 * fixed.transferred_bytes
