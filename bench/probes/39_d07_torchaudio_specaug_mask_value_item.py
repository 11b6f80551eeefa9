# source: pytorch/audio https://github.com/pytorch/audio/pull/4015 — The speech feature-processing path computed the SpecAugment fill value as a tensor statistic and called .item() on it so it could be passed as the float mask_value of mask_along_axis_iid, once per batch in the data/training pipeline. The .item() is a CPU-GPU sync on every call; the fix keeps mask_value as a tensor and rewrites mask_along_axis_iid to apply it with torch.where instead of masked_fill with a Python float.
import torch
from torch import Tensor, nn


def _get_mask_param(mask_param: int, p: float, axis_length: int) -> int:
    if p == 1.0:
        return mask_param
    return min(mask_param, int(axis_length * p))


def _iid_mask(specgrams: Tensor, mask_param: int, axis: int, p: float):
    dim = specgrams.dim()
    if axis not in [dim - 2, dim - 1]:
        raise ValueError("Only Frequency and Time masking are supported")
    mask_param = _get_mask_param(mask_param, p, specgrams.shape[axis])
    if mask_param < 1:
        return None
    device, dtype = specgrams.device, specgrams.dtype
    value = torch.rand(specgrams.shape[: (dim - 2)], device=device, dtype=dtype) * mask_param
    min_value = torch.rand(specgrams.shape[: (dim - 2)], device=device, dtype=dtype) * (specgrams.size(axis) - value)
    mask_start = min_value.long()[..., None, None]
    mask_end = (min_value.long() + value.long())[..., None, None]
    mask = torch.arange(0, specgrams.size(axis), device=device, dtype=dtype)
    return (mask >= mask_start) & (mask < mask_end)


def mask_along_axis_iid(specgrams: Tensor, mask_param: int, mask_value: float, axis: int, p: float = 1.0) -> Tensor:
    cond = _iid_mask(specgrams, mask_param, axis, p)
    if cond is None:
        return specgrams
    specgrams = specgrams.transpose(axis, -1)
    specgrams = specgrams.masked_fill(cond, mask_value)
    return specgrams.transpose(axis, -1)


def mask_along_axis_iid_fixed(specgrams: Tensor, mask_param: int, mask_value: Tensor, axis: int, p: float = 1.0) -> Tensor:
    cond = _iid_mask(specgrams, mask_param, axis, p)
    if cond is None:
        return specgrams
    specgrams = specgrams.transpose(axis, -1)
    specgrams = torch.where(cond, mask_value.to(specgrams.dtype), specgrams)
    return specgrams.transpose(axis, -1)


class SpecAugmentFeatureProcessor(nn.Module):
    def __init__(self, n_freq_masks=2, freq_mask_param=8, n_time_masks=2, time_mask_param=10, p=1.0):
        super().__init__()
        self.n_freq_masks, self.freq_mask_param = n_freq_masks, freq_mask_param
        self.n_time_masks, self.time_mask_param = n_time_masks, time_mask_param
        self.p = p

    def forward(self, features: Tensor) -> Tensor:
        # features: (batch, channel, freq, time)
        mask_value = features.mean().item()  # want: D
        for _ in range(self.n_freq_masks):
            features = mask_along_axis_iid(features, self.freq_mask_param, mask_value, features.dim() - 2, p=self.p)
        for _ in range(self.n_time_masks):
            features = mask_along_axis_iid(features, self.time_mask_param, mask_value, features.dim() - 1, p=self.p)
        return features


class SpecAugmentFeatureProcessorFixed(SpecAugmentFeatureProcessor):
    def forward(self, features: Tensor) -> Tensor:
        mask_value = features.mean()
        for _ in range(self.n_freq_masks):
            features = mask_along_axis_iid_fixed(features, self.freq_mask_param, mask_value, features.dim() - 2, p=self.p)
        for _ in range(self.n_time_masks):
            features = mask_along_axis_iid_fixed(features, self.time_mask_param, mask_value, features.dim() - 1, p=self.p)
        return features


if __name__ == "__main__":
    feats = torch.randn(4, 1, 40, 100)
    torch.manual_seed(0)
    a = SpecAugmentFeatureProcessor()(feats)
    torch.manual_seed(0)
    b = SpecAugmentFeatureProcessorFixed()(feats)
    assert torch.allclose(a, b)
    assert not torch.equal(a, feats)
    print("ok")
