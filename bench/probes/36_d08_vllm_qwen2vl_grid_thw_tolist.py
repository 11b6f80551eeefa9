# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/28168 — the model runner's group_mm_kwargs_by_modality moved every multimodal field to the GPU, including `image_grid_thw`, which Qwen2-VL's _process_image_input immediately read back with `grid_thw.tolist()` (and `.tolist()` again for the split sizes), a cudaStreamSynchronize per multimodal batch; the fix adds `multimodal_cpu_fields = {"image_grid_thw", "video_grid_thw"}` so those fields stay on the host and the `.tolist()` calls are free.
from typing import Dict, Iterable

import torch
import torch.nn as nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def group_mm_kwargs_by_modality(mm_kwargs: Dict[str, torch.Tensor], *, device, multimodal_cpu_fields: Iterable[str] = ()):
    return {
        k: v if k in multimodal_cpu_fields else v.to(device, non_blocking=True)
        for k, v in mm_kwargs.items()
    }


class Qwen2VisionTransformer(nn.Module):
    spatial_merge_size = 2

    def __init__(self, patch_dim=12, hidden=16):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, hidden)
        self.merger = nn.Linear(hidden * self.spatial_merge_size**2, hidden)

    def forward(self, pixel_values, grid_thw: list):
        x = self.patch_embed(pixel_values)  # [sum(t*h*w), hidden]
        seqlens = [t * h * w for t, h, w in grid_thw]  # host ints, drive cu_seqlens / windowing
        assert sum(seqlens) == x.shape[0]
        return self.merger(x.reshape(-1, x.shape[-1] * self.spatial_merge_size**2))


class Qwen2VLForConditionalGeneration(nn.Module):
    multimodal_cpu_fields: set = set()

    def __init__(self):
        super().__init__()
        self.visual = Qwen2VisionTransformer()

    def _process_image_input(self, image_input):
        grid_thw = image_input["image_grid_thw"]
        assert grid_thw.ndim == 2
        grid_thw_list = grid_thw.tolist()  # want: D
        pixel_values = image_input["pixel_values"]
        image_embeds = self.visual(pixel_values, grid_thw=grid_thw_list)
        merge_size = self.visual.spatial_merge_size
        sizes = (grid_thw.prod(-1) // merge_size // merge_size).tolist()  # want: D
        return image_embeds.split(sizes)

    def get_multimodal_embeddings(self, **kwargs):
        return self._process_image_input(kwargs)


class Qwen2VLForConditionalGenerationFixed(Qwen2VLForConditionalGeneration):
    multimodal_cpu_fields = {"image_grid_thw", "video_grid_thw"}

    def _process_image_input(self, image_input):
        grid_thw = image_input["image_grid_thw"]  # declared CPU field: never left the host
        assert grid_thw.ndim == 2
        grid_thw_list = grid_thw.tolist()
        image_embeds = self.visual(image_input["pixel_values"], grid_thw=grid_thw_list)
        merge_size = self.visual.spatial_merge_size
        sizes = [t * h * w // (merge_size * merge_size) for t, h, w in grid_thw_list]
        return image_embeds.split(sizes)


def execute_mm_encoder(model, mm_kwargs, use_cpu_fields: bool):
    cpu_fields = model.multimodal_cpu_fields if use_cpu_fields else ()
    batched = group_mm_kwargs_by_modality(mm_kwargs, device=DEVICE, multimodal_cpu_fields=cpu_fields)
    return model.get_multimodal_embeddings(**batched)


if __name__ == "__main__":
    torch.manual_seed(0)
    grid_thw = torch.tensor([[1, 4, 4], [1, 2, 6]])  # produced by the HF processor on the CPU
    mm_kwargs = {"pixel_values": torch.randn(16 + 12, 12), "image_grid_thw": grid_thw}
    buggy = Qwen2VLForConditionalGeneration().to(DEVICE)
    fixed = Qwen2VLForConditionalGenerationFixed().to(DEVICE)
    fixed.load_state_dict(buggy.state_dict())
    a = execute_mm_encoder(buggy, mm_kwargs, use_cpu_fields=False)
    b = execute_mm_encoder(fixed, mm_kwargs, use_cpu_fields=True)
    assert len(a) == len(b) == 2 and all(torch.equal(x, y) for x, y in zip(a, b))
    print("per-image embeds:", [tuple(x.shape) for x in b])
