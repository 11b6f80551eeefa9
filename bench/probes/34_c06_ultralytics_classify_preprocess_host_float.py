# source: ultralytics/ultralytics https://github.com/ultralytics/ultralytics/pull/26023 — ClassificationPredictor.preprocess ran the whole Compose (incl. ToTensor's uint8->fp32 widening) on the host, stacked fp32, shipped that to the device and only then cast to half; the fix stops the host chain before ToTensor, transfers uint8 and does the float cast, /255 and Normalize on the device.
import numpy as np
import torch


class CenterCrop:
    def __init__(self, size):
        self.size = size

    def __call__(self, im):
        h, w = im.shape[:2]
        top, left = (h - self.size) // 2, (w - self.size) // 2
        return im[top : top + self.size, left : left + self.size]


class ToTensor:
    def __call__(self, im):  # HWC uint8 -> CHW float32 in [0, 1], like torchvision ToTensor
        return torch.from_numpy(np.ascontiguousarray(im.transpose(2, 0, 1))).float().div(255.0)


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, x):
        return (x - self.mean.to(x)) / self.std.to(x)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


def classify_transforms(size):
    return Compose([CenterCrop(size), ToTensor(), Normalize((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))])


class Model:
    def __init__(self, device="cpu", fp16=False):
        self.device, self.fp16 = torch.device(device), fp16


class ClassificationPredictor:
    def __init__(self, model, imgsz=64):
        self.model, self.imgsz = model, imgsz

    def setup_source(self):
        self.transforms = classify_transforms(self.imgsz)

    def preprocess(self, img):
        """Convert input images to model-compatible tensor format with appropriate normalization."""
        if not isinstance(img, torch.Tensor):
            # BGR -> RGB, then the full transform chain (ToTensor widens to fp32 on the host)
            img = torch.stack([self.transforms(np.ascontiguousarray(im[..., ::-1])) for im in img], dim=0)  # maybe: C (fp32 built on host)
        img = (img if isinstance(img, torch.Tensor) else torch.from_numpy(img)).to(self.model.device)  # want: C
        return img.half() if self.model.fp16 else img.float()  # Convert uint8 to fp16/32


class ClassificationPredictorFixed(ClassificationPredictor):
    def setup_source(self):
        full = classify_transforms(self.imgsz)
        split = next(i for i, t in enumerate(full.transforms) if isinstance(t, ToTensor))
        self.pre_transform = Compose(full.transforms[:split])  # host: uint8 crop/resize only
        self.post_transform = Compose(full.transforms[split + 1 :])  # device: Normalize once per batch

    def preprocess(self, img):
        if not isinstance(img, torch.Tensor):
            img = torch.from_numpy(np.stack([self.pre_transform(im) for im in img]))  # NHWC uint8
        img = img.to(self.model.device, non_blocking=True)
        img = img.flip(-1).permute(0, 3, 1, 2)  # BGR -> RGB, NHWC -> NCHW on the device
        img = img.half() if self.model.fp16 else img.float()
        img = img / 255
        return self.post_transform(img)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (96, 128, 3), dtype=np.uint8) for _ in range(4)]
    model = Model("cpu", fp16=False)
    buggy, fixed = ClassificationPredictor(model), ClassificationPredictorFixed(model)
    buggy.setup_source()
    fixed.setup_source()

    host_b = torch.stack([buggy.transforms(np.ascontiguousarray(im[..., ::-1])) for im in frames])
    host_f = torch.from_numpy(np.stack([fixed.pre_transform(im) for im in frames]))
    print("bytes sent to device  buggy:", host_b.numel() * host_b.element_size(),
          " fixed:", host_f.numel() * host_f.element_size())
    out_b, out_f = buggy.preprocess(frames), fixed.preprocess(frames)
    assert out_b.shape == out_f.shape and torch.allclose(out_b, out_f, atol=1e-6)
    print("same model input, 4x fewer bytes over the bus")
