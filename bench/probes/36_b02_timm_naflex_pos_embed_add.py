# source: huggingface/pytorch-image-models https://github.com/huggingface/pytorch-image-models/commit/3dc90ed7a75fb9a650871f62c9ecab4fff60f2ca — In NaFlex ViT's FlexEmbeds, `_apply_learned_naflex_pos_embed` grouped batch rows by grid size and did `x[batch_indices, :seq_len].add_(pos)` with `batch_indices` a Python list; that advanced index returns a copy, so no position embedding was ever added for NaFlex inputs ("fix bug in naflex pos embed add"). The fix scatters with `x[:, :seq_len].index_add_(0, idx, pos.expand(...))`.
from typing import Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class FlexEmbeds(nn.Module):
    def __init__(self, embed_dim: int = 8, grid: Tuple[int, int] = (4, 4), fixed: bool = False):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.randn(1, grid[0], grid[1], embed_dim) * 0.02)
        self.pos_embed_interp_mode = "bilinear"
        self.fixed = fixed

    def _apply_learned_naflex_pos_embed(self, x: torch.Tensor, naflex_grid_sizes: List[Tuple[int, int]]):
        orig_h, orig_w = self.pos_embed.shape[1:3]
        size_to_indices: Dict[Tuple[int, int], List[int]] = {}
        for bi, (h, w) in enumerate(naflex_grid_sizes):
            k = (h, w)
            if not k in size_to_indices:
                size_to_indices[k] = [bi]
            else:
                size_to_indices[k].append(bi)

        pos_embed_nchw = self.pos_embed.permute(0, 3, 1, 2).float()  # B,C,H,W
        for k, batch_indices in size_to_indices.items():
            h, w = k
            if (h == orig_h) and (w == orig_w):
                pos_embed_flat = self.pos_embed.reshape(1, orig_h * orig_w, -1)
            else:
                pos_embed_flat = F.interpolate(
                    pos_embed_nchw, size=(h, w), mode=self.pos_embed_interp_mode,
                    align_corners=False, antialias=True,
                ).flatten(2).transpose(1, 2)
            pos_embed_flat = pos_embed_flat.to(dtype=x.dtype)
            seq_len = min(x.shape[1], pos_embed_flat.shape[1])
            if not self.fixed:
                x[batch_indices, :seq_len].add_(pos_embed_flat[:, :seq_len])  # want: B
            else:
                x[:, :seq_len].index_add_(
                    0,
                    torch.as_tensor(batch_indices, device=x.device),
                    pos_embed_flat[:, :seq_len].expand(len(batch_indices), -1, -1),
                )

    def forward(self, patches: torch.Tensor, patch_coord: torch.Tensor) -> torch.Tensor:
        max_y = patch_coord[:, :, 0].max(dim=1)[0] + 1
        max_x = patch_coord[:, :, 1].max(dim=1)[0] + 1
        naflex_grid_sizes = [(int(h.item()), int(w.item())) for h, w in zip(max_y, max_x)]
        x = patches.clone()  # stands in for self.proj(patches)
        with torch.no_grad():
            self._apply_learned_naflex_pos_embed(x, naflex_grid_sizes=naflex_grid_sizes)
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    B, N, D = 3, 9, 8
    coords = torch.stack(torch.meshgrid(torch.arange(3), torch.arange(3), indexing="ij"), -1).reshape(1, N, 2)
    coords = coords.expand(B, -1, -1).clone()
    patches = torch.zeros(B, N, D)
    bug = FlexEmbeds(D)(patches, coords)
    fixed_mod = FlexEmbeds(D, fixed=True)
    fixed_mod.load_state_dict(FlexEmbeds(D).state_dict())
    fix = fixed_mod(patches, coords)
    print("buggy |x| after pos add:", bug.abs().sum().item())
    print("fixed |x| after pos add:", fix.abs().sum().item())
    assert bug.abs().sum() == 0, "position embedding was added to a temporary copy"
    assert fix.abs().sum() > 0
