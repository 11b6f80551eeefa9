# source: huggingface/transformers https://github.com/huggingface/transformers/pull/44005 — the Qwen2-VL vision tower iterated the device tensor grid_thw (`for t, h, w in grid_thw:`) and fed the resulting 0-d tensors to torch.arange/expand/reshape/repeat, a CUDA sync for every scalar use of every image; the fix converts grid_thw to a Python list once at the start of the function so those syncs collapse into one.
import torch
import torch.nn as nn


class VisionRotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000.0):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seqlen):
        seq = torch.arange(seqlen, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(seq, self.inv_freq)
        return freqs


class Qwen2VisionTransformerPretrainedModel(nn.Module):
    def __init__(self, embed_dim=32, num_heads=4, spatial_merge_size=2):
        super().__init__()
        self.spatial_merge_size = spatial_merge_size
        head_dim = embed_dim // num_heads
        self.rotary_pos_emb = VisionRotaryEmbedding(head_dim // 2)

    def rot_pos_emb(self, grid_thw):
        pos_ids = []
        for t, h, w in grid_thw:  # want: D
            hpos_ids = torch.arange(h).unsqueeze(1).expand(-1, w)
            hpos_ids = hpos_ids.reshape(
                h // self.spatial_merge_size,
                self.spatial_merge_size,
                w // self.spatial_merge_size,
                self.spatial_merge_size,
            )
            hpos_ids = hpos_ids.permute(0, 2, 1, 3)
            hpos_ids = hpos_ids.flatten()

            wpos_ids = torch.arange(w).unsqueeze(0).expand(h, -1)
            wpos_ids = wpos_ids.reshape(
                h // self.spatial_merge_size,
                self.spatial_merge_size,
                w // self.spatial_merge_size,
                self.spatial_merge_size,
            )
            wpos_ids = wpos_ids.permute(0, 2, 1, 3)
            wpos_ids = wpos_ids.flatten()
            pos_ids.append(torch.stack([hpos_ids, wpos_ids], dim=-1).repeat(t, 1))
        pos_ids = torch.cat(pos_ids, dim=0)
        max_grid_size = grid_thw[:, 1:].max()  # maybe: D (0-d device max later used as torch.arange length)
        rotary_pos_emb_full = self.rotary_pos_emb(max_grid_size)
        rotary_pos_emb = rotary_pos_emb_full[pos_ids].flatten(1)
        return rotary_pos_emb


class Qwen2VisionTransformerPretrainedModelFixed(Qwen2VisionTransformerPretrainedModel):
    def rot_pos_emb(self, grid_thw):
        grid_thw_list = grid_thw.tolist()
        pos_ids = []
        for t, h, w in grid_thw_list:
            hpos_ids = torch.arange(h).unsqueeze(1).expand(-1, w)
            hpos_ids = hpos_ids.reshape(
                h // self.spatial_merge_size,
                self.spatial_merge_size,
                w // self.spatial_merge_size,
                self.spatial_merge_size,
            )
            hpos_ids = hpos_ids.permute(0, 2, 1, 3)
            hpos_ids = hpos_ids.flatten()

            wpos_ids = torch.arange(w).unsqueeze(0).expand(h, -1)
            wpos_ids = wpos_ids.reshape(
                h // self.spatial_merge_size,
                self.spatial_merge_size,
                w // self.spatial_merge_size,
                self.spatial_merge_size,
            )
            wpos_ids = wpos_ids.permute(0, 2, 1, 3)
            wpos_ids = wpos_ids.flatten()
            pos_ids.append(torch.stack([hpos_ids, wpos_ids], dim=-1).repeat(t, 1))
        pos_ids = torch.cat(pos_ids, dim=0)
        max_grid_size = max(max(h, w) for _, h, w in grid_thw_list)
        rotary_pos_emb_full = self.rotary_pos_emb(max_grid_size)
        rotary_pos_emb = rotary_pos_emb_full[pos_ids].flatten(1)
        return rotary_pos_emb


if __name__ == "__main__":
    grid_thw = torch.tensor([[1, 8, 6], [2, 4, 4], [1, 6, 10]])
    a = Qwen2VisionTransformerPretrainedModel()
    b = Qwen2VisionTransformerPretrainedModelFixed()
    ra, rb = a.rot_pos_emb(grid_thw), b.rot_pos_emb(grid_thw)
    print("rotary emb equal:", torch.equal(ra, rb), tuple(ra.shape))
