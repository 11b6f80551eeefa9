# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/22792 — `Qwen2_5_VLForConditionalGeneration._process_image_input` computed the per-image split sizes as `grid_thw.prod(-1) // merge_size // merge_size` on the GPU `grid_thw` and then `image_embeds.split(sizes.tolist())`, an extra device-to-host sync on every multimodal request even though `grid_thw_list` was already on the host (py-spy showed ~1/4 of own time there). The fix derives `sizes` from `grid_thw_list` on the CPU.
import torch


class Qwen2_5_VisionTransformer(torch.nn.Module):
    def __init__(self, patch_dim=12, hidden=8, spatial_merge_size=2):
        super().__init__()
        self.spatial_merge_size = spatial_merge_size
        self.proj = torch.nn.Linear(patch_dim * spatial_merge_size ** 2, hidden)

    @property
    def dtype(self):
        return self.proj.weight.dtype

    def forward(self, pixel_values, grid_thw):
        m2 = self.spatial_merge_size ** 2
        x = pixel_values.reshape(-1, m2 * pixel_values.shape[-1])
        return self.proj(x)


class Qwen2_5_VLForConditionalGeneration(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = Qwen2_5_VisionTransformer()

    def _process_image_input(self, image_input):
        grid_thw = image_input["image_grid_thw"]
        assert grid_thw.ndim == 2
        grid_thw_list = grid_thw.tolist()
        pixel_values = image_input["pixel_values"].type(self.visual.dtype)
        image_embeds = self.visual(pixel_values, grid_thw=grid_thw_list)

        # Split concatenated embeddings for each image item.
        merge_size = self.visual.spatial_merge_size
        sizes = grid_thw.prod(-1) // merge_size // merge_size
        return image_embeds.split(sizes.tolist())  # want: D


class Qwen2_5_VLForConditionalGenerationFixed(Qwen2_5_VLForConditionalGeneration):
    def _process_image_input(self, image_input):
        grid_thw = image_input["image_grid_thw"]
        assert grid_thw.ndim == 2
        grid_thw_list = grid_thw.tolist()
        pixel_values = image_input["pixel_values"].type(self.visual.dtype)
        image_embeds = self.visual(pixel_values, grid_thw=grid_thw_list)

        # Split concatenated embeddings for each image item.
        merge_size = self.visual.spatial_merge_size
        sizes = (
            torch.prod(torch.tensor(grid_thw_list, dtype=torch.long), -1)
            // merge_size
            // merge_size
        )
        return image_embeds.split(sizes.tolist())


if __name__ == "__main__":
    torch.manual_seed(0)
    a = Qwen2_5_VLForConditionalGeneration()
    b = Qwen2_5_VLForConditionalGenerationFixed()
    b.load_state_dict(a.state_dict())
    grid_thw = torch.tensor([[1, 4, 4], [1, 2, 6], [2, 2, 2]])
    n_patches = int(grid_thw.prod(-1).sum())
    image_input = {"image_grid_thw": grid_thw, "pixel_values": torch.randn(n_patches, 12)}
    ea, eb = a._process_image_input(image_input), b._process_image_input(image_input)
    assert [t.shape[0] for t in ea] == [t.shape[0] for t in eb] == [4, 3, 2]
    assert all(torch.equal(x, y) for x, y in zip(ea, eb))
    print("ok")
