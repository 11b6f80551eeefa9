# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/32579 — `x2[mask][:, 0] = 0` left x2 unchanged: the boolean-mask index produces a new tensor and the second subscript assigns into that copy. The fix indexes both dimensions in one __setitem__ (`x[mask, 0] = 0` / `x[mask0, mask1] = 0`).
import torch


class RandomCropWithKeypoints:
    """Crops an image and moves COCO-style keypoints (x, y, visibility) with it."""

    def __init__(self, size, generator=None):
        self.size = size
        self.generator = generator

    def get_params(self, img):
        _, h, w = img.shape
        th, tw = self.size
        i = int(torch.randint(0, h - th + 1, (1,), generator=self.generator))
        j = int(torch.randint(0, w - tw + 1, (1,), generator=self.generator))
        return i, j, th, tw

    def __call__(self, img, target):
        i, j, h, w = self.get_params(img)
        img = img[:, i:i + h, j:j + w]
        kpts = target["keypoints"].clone()  # (N, K, 3)
        kpts[..., 0] -= j
        kpts[..., 1] -= i
        outside = (kpts[..., 0] < 0) | (kpts[..., 0] >= w) | (kpts[..., 1] < 0) | (kpts[..., 1] >= h)
        # keypoints that left the crop become invisible and are zeroed (COCO convention)
        kpts[outside][:, 2] = 0  # want: B
        kpts[outside][:, :2] = 0  # want: B
        target["keypoints"] = kpts
        boxes = target["boxes"].clone()
        boxes[:, 0::2] = (boxes[:, 0::2] - j).clamp(0, w)
        boxes[:, 1::2] = (boxes[:, 1::2] - i).clamp(0, h)
        target["boxes"] = boxes
        return img, target


class RandomCropWithKeypointsFixed(RandomCropWithKeypoints):
    def __call__(self, img, target):
        i, j, h, w = self.get_params(img)
        img = img[:, i:i + h, j:j + w]
        kpts = target["keypoints"].clone()  # (N, K, 3)
        kpts[..., 0] -= j
        kpts[..., 1] -= i
        outside = (kpts[..., 0] < 0) | (kpts[..., 0] >= w) | (kpts[..., 1] < 0) | (kpts[..., 1] >= h)
        kpts[outside, 2] = 0
        kpts[outside, :2] = 0
        target["keypoints"] = kpts
        boxes = target["boxes"].clone()
        boxes[:, 0::2] = (boxes[:, 0::2] - j).clamp(0, w)
        boxes[:, 1::2] = (boxes[:, 1::2] - i).clamp(0, h)
        target["boxes"] = boxes
        return img, target


def make_sample(seed=0):
    g = torch.Generator().manual_seed(seed)
    img = torch.rand(3, 64, 64, generator=g)
    kxy = torch.rand(2, 17, 2, generator=g) * 64
    kpts = torch.cat([kxy, torch.full((2, 17, 1), 2.0)], dim=-1)
    boxes = torch.tensor([[4.0, 4.0, 40.0, 50.0], [20.0, 10.0, 60.0, 62.0]])
    return img, {"keypoints": kpts, "boxes": boxes}


if __name__ == "__main__":
    for name, cls in (("buggy", RandomCropWithKeypoints), ("fixed", RandomCropWithKeypointsFixed)):
        img, target = make_sample()
        t = cls((32, 32), generator=torch.Generator().manual_seed(1))
        out_img, out_t = t(img, target)
        k = out_t["keypoints"]
        bad = ((k[..., 0] < 0) | (k[..., 0] >= 32) | (k[..., 1] < 0) | (k[..., 1] >= 32)) & (k[..., 2] > 0)
        print(f"{name}: visible keypoints outside the crop = {int(bad.sum())}")
        if name == "buggy":
            assert bad.any()
        else:
            assert not bad.any()
