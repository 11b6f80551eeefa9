# source: ByteDance-Seed/VeOmni https://github.com/ByteDance-Seed/VeOmni/pull/764 — the Qwen3-VL patches built cu_seqlens with torch.repeat_interleave on GPU repeats, read max_seqlen back with `.detach().cpu().item()`, and in the model forward did `n_image_tokens = image_mask.sum().long().item()` plus a slice; the fix builds cu_seqlens/max_seqlen from a host `grid_thw` list and drops the count (masked_scatter already consumes exactly mask.sum() rows).
import torch
import torch.nn.functional as F
from torch import nn


class VisionBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, cu_seqlens, max_seqlen):
        # a varlen flash-attention kernel consumes cu_seqlens / max_seqlen here
        return hidden_states + self.proj(self.norm(hidden_states))


class Qwen3VLVisionModel(nn.Module):
    def __init__(self, in_dim=12, dim=16, depth=2):
        super().__init__()
        self.patch_embed = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList(VisionBlock(dim) for _ in range(depth))

    def forward(self, hidden_states, grid_thw, **kwargs):
        hidden_states = self.patch_embed(hidden_states)
        cu_seqlens = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(  # want: D
            dim=0, dtype=torch.int32)
        cu_seqlens = F.pad(cu_seqlens, (1, 0), value=0)
        max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max().detach().cpu().item()  # want: D
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        return hidden_states


class Qwen3VLVisionModelFixed(Qwen3VLVisionModel):
    def forward(self, hidden_states, grid_thw, grid_thw_list=None, **kwargs):
        hidden_states = self.patch_embed(hidden_states)
        seqlens = [h * w for t, h, w in grid_thw_list for _ in range(t)]
        cu_list = [0]
        for s in seqlens:
            cu_list.append(cu_list[-1] + s)
        cu_seqlens = torch.tensor(cu_list, dtype=torch.int32, device=hidden_states.device)
        max_seqlen = max(seqlens)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        return hidden_states


class Qwen3VLModel(nn.Module):
    def __init__(self, visual, vocab=50, dim=16, image_token_id=49):
        super().__init__()
        self.visual = visual
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.image_token_id = image_token_id

    def forward(self, input_ids, pixel_values, image_grid_thw, image_grid_thw_list=None):
        inputs_embeds = self.embed_tokens(input_ids)
        image_mask = input_ids == self.image_token_id
        image_embeds = self.visual(pixel_values, grid_thw=image_grid_thw, grid_thw_list=image_grid_thw_list)
        n_image_tokens = image_mask.sum().long().item()  # want: D
        image_embeds = image_embeds[:n_image_tokens]
        image_mask_expanded = image_mask.unsqueeze(-1).expand_as(inputs_embeds)
        return inputs_embeds.masked_scatter(image_mask_expanded, image_embeds.to(inputs_embeds.dtype))


class Qwen3VLModelFixed(Qwen3VLModel):
    def forward(self, input_ids, pixel_values, image_grid_thw, image_grid_thw_list=None):
        inputs_embeds = self.embed_tokens(input_ids)
        image_mask = input_ids == self.image_token_id
        image_embeds = self.visual(pixel_values, grid_thw=image_grid_thw, grid_thw_list=image_grid_thw_list)
        # collator pads vision rows at the end; masked_scatter consumes exactly mask.sum() leading rows
        image_mask_expanded = image_mask.unsqueeze(-1).expand_as(inputs_embeds)
        return inputs_embeds.masked_scatter(image_mask_expanded, image_embeds.to(inputs_embeds.dtype))


if __name__ == "__main__":
    torch.manual_seed(0)
    grid_list = [[1, 2, 3], [2, 2, 2]]
    grid = torch.tensor(grid_list)
    n_patches = 6 + 8
    pixels = torch.randn(n_patches + 2, 12)  # two padded rows at the end
    grid_pad = torch.tensor([[1, 2, 3], [2, 2, 2], [1, 1, 2]])
    ids = torch.randint(0, 40, (20,))
    ids[2:2 + n_patches] = 49
    bug = Qwen3VLModel(Qwen3VLVisionModel())
    fix = Qwen3VLModelFixed(Qwen3VLVisionModelFixed())
    fix.load_state_dict(bug.state_dict())
    with torch.no_grad():
        a = bug(ids, pixels, grid_pad)
        b = fix(ids, pixels, grid_pad, grid_list + [[1, 1, 2]])
    print("embeds equal:", torch.allclose(a, b), tuple(a.shape))
