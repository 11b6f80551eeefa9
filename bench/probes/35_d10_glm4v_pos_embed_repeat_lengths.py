# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/52369 — glm4_1v's vision embeddings turned the host lengths/image_shapes into device tensors and then built target_h/target_w with `image_shapes[i, 1].repeat(lengths[i])` per image, reading each device length back as a Python int; the fix expands the host data with numpy and ships the result with one non_blocking copy.
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Glm4vVisionEmbeddings(nn.Module):
    def __init__(self, hidden_size=16, image_size=16, patch_size=4):
        super().__init__()
        self.num_patches = (image_size // patch_size) ** 2
        self.position_embedding = nn.Embedding(self.num_patches, hidden_size)

    def _interp(self, embeddings, target_h, target_w, h_coords, w_coords):
        pos_embed_weight = self.position_embedding.weight
        hidden_size = pos_embed_weight.shape[1]
        device = pos_embed_weight.device
        orig_size = int(pos_embed_weight.shape[0] ** 0.5)
        pos_embed_2d = (pos_embed_weight.view(orig_size, orig_size, hidden_size)
                        .permute(2, 0, 1).unsqueeze(0).to(device=device, dtype=torch.float32))
        h_coords = h_coords.to(device=device, dtype=torch.float32)
        w_coords = w_coords.to(device=device, dtype=torch.float32)
        norm_w = ((w_coords + 0.5) / target_w) * 2 - 1
        norm_h = ((h_coords + 0.5) / target_h) * 2 - 1
        grid = torch.stack((norm_w, norm_h), dim=-1).unsqueeze(0).unsqueeze(2)
        interpolated = F.grid_sample(pos_embed_2d, grid, mode="bicubic", align_corners=False,
                                     padding_mode="border")
        adapted_pos_embed = interpolated.squeeze(0).squeeze(-1).permute(1, 0)
        return embeddings + adapted_pos_embed.to(embeddings.dtype)

    def forward(self, embeddings, lengths, image_shapes, h_coords, w_coords):
        device = self.position_embedding.weight.device
        if isinstance(lengths, list):
            lengths = torch.tensor(lengths, device=device, dtype=torch.long)
        if not isinstance(image_shapes, torch.Tensor):
            image_shapes = torch.tensor(image_shapes, device=device, dtype=torch.long)
        target_h = torch.cat([image_shapes[i, 1].repeat(lengths[i]) for i in range(len(lengths))]).to(  # want: D
            device=device, dtype=torch.float32)
        target_w = torch.cat([image_shapes[i, 2].repeat(lengths[i]) for i in range(len(lengths))]).to(  # want: D
            device=device, dtype=torch.float32)
        return self._interp(embeddings, target_h, target_w, h_coords, w_coords)


class Glm4vVisionEmbeddingsFixed(Glm4vVisionEmbeddings):
    def forward(self, embeddings, lengths, image_shapes, h_coords, w_coords):
        device = self.position_embedding.weight.device
        # lengths / image_shapes are host data: expand them with numpy, copy once
        lengths_np = np.asarray(lengths, dtype=np.int64)
        shapes_np = np.asarray(image_shapes, dtype=np.int64)
        target_h = torch.from_numpy(np.repeat(shapes_np[:, 1], lengths_np).astype(np.float32))
        target_w = torch.from_numpy(np.repeat(shapes_np[:, 2], lengths_np).astype(np.float32))
        target_h = target_h.to(device, non_blocking=True)
        target_w = target_w.to(device, non_blocking=True)
        return self._interp(embeddings, target_h, target_w, h_coords, w_coords)


def make_coords(grid_thw):
    hs, ws = [], []
    for t, h, w in grid_thw:
        hh, ww = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        hs.append(hh.flatten().repeat(t))
        ws.append(ww.flatten().repeat(t))
    return torch.cat(hs), torch.cat(ws)


if __name__ == "__main__":
    torch.manual_seed(0)
    grid_thw = [[1, 4, 6], [2, 2, 2]]
    lengths = [t * h * w for t, h, w in grid_thw]
    h_coords, w_coords = make_coords(grid_thw)
    x = torch.randn(sum(lengths), 16)
    bug = Glm4vVisionEmbeddings()
    fix = Glm4vVisionEmbeddingsFixed()
    fix.load_state_dict(bug.state_dict())
    with torch.no_grad():
        a = bug(x, lengths, grid_thw, h_coords, w_coords)
        b = fix(x, lengths, grid_thw, h_coords, w_coords)
    print("pos-embedded patches equal:", torch.allclose(a, b), tuple(a.shape))
