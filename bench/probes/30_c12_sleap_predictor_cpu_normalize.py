# source: talmolab/sleap-nn https://github.com/talmolab/sleap-nn/pull/406 — the inference predictor converted each uint8 frame batch to float32 on the CPU (apply_normalization: image.to(torch.float32) / 255.0) and only then moved it to the GPU, so a full-size fp32 copy was made on the host and 4x the bytes crossed PCIe; the fix transfers the uint8 batch and normalises in the model's forward() on the device (normalize_on_gpu).
import torch
from torch import nn


def apply_normalization(image: torch.Tensor):
    """Normalize image tensor."""
    if not torch.is_floating_point(image):
        image = image.to(torch.float32) / 255.0
    return image


def normalize_on_gpu(image: torch.Tensor) -> torch.Tensor:
    """Normalize image tensor on GPU after transfer."""
    if not torch.is_floating_point(image):
        image = image.to(torch.float32) / 255.0
    return image


class SingleInstanceInferenceModel(nn.Module):
    def __init__(self, torch_model, output_stride=2, normalize_in_forward=False):
        super().__init__()
        self.torch_model = torch_model
        self.output_stride = output_stride
        self.normalize_in_forward = normalize_in_forward

    def forward(self, inputs):
        imgs = inputs["image"]
        if self.normalize_in_forward:
            imgs = normalize_on_gpu(imgs)
        confmaps = self.torch_model(imgs)
        n, c, h, w = confmaps.shape
        flat = confmaps.reshape(n, c, h * w)
        vals, idx = flat.max(dim=-1)
        peaks = torch.stack([idx % w, idx // w], dim=-1).float() * self.output_stride
        return {"pred_instance_peaks": peaks, "pred_peak_values": vals}


class Predictor:
    def __init__(self, inference_model, device="cpu"):
        self.inference_model = inference_model
        self.device = device

    def _predict_generator(self, frames):
        for ex in frames:
            ex["image"] = apply_normalization(ex["image"]).to(self.device)  # want: C
            with torch.inference_mode():
                outputs = self.inference_model(ex)
            yield outputs


class PredictorFixed(Predictor):
    def _predict_generator(self, frames):
        for ex in frames:
            # uint8 crosses the bus; normalisation happens in forward() on the device
            ex["image"] = ex["image"].to(self.device, non_blocking=True)
            with torch.inference_mode():
                outputs = self.inference_model(ex)
            yield outputs


def video_frames(n_batches, batch_size=4, h=96, w=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    for i in range(n_batches):
        yield {"image": torch.randint(0, 256, (batch_size, 1, h, w), dtype=torch.uint8, generator=g), "frame_idx": i}


if __name__ == "__main__":
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 5, 1))
    buggy = Predictor(SingleInstanceInferenceModel(backbone))
    fixed = PredictorFixed(SingleInstanceInferenceModel(backbone, normalize_in_forward=True))
    sent_bug = sent_fix = 0
    for a, b, fa, fb in zip(buggy._predict_generator(video_frames(3)), fixed._predict_generator(video_frames(3)),
                            video_frames(3), video_frames(3)):
        assert torch.allclose(a["pred_peak_values"], b["pred_peak_values"], atol=1e-5)
        sent_bug += apply_normalization(fa["image"]).untyped_storage().nbytes()
        sent_fix += fb["image"].untyped_storage().nbytes()
    print("bytes handed to .to(device): buggy", sent_bug, "| fixed", sent_fix, "| ratio", sent_bug // sent_fix)
