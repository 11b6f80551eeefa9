# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/32589 — under the extra_buffer mamba radix strategy MambaMixer2.forward evaluated `forward_batch.mamba_track_mask.any()` in a Python `if` and `mamba_track_mask.nonzero(as_tuple=True)` on every mamba layer (27 layers -> ~56 host syncs per prefill forward); the fix hoists both into the backend's per-forward metadata (`has_mamba_track_mask`, `mamba_track_mask_indices`, `conv_states_mask_indices`) so the layers only read a Python bool and device index tensors.
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn


@dataclass
class ForwardBatch:
    mamba_track_mask: Optional[torch.Tensor]  # [bs] bool, device
    mamba_track_indices: torch.Tensor  # [bs] checkpoint slot per request, device
    track_conv_indices: torch.Tensor  # [n_tracked] last-token rows, built by the scheduler


@dataclass
class ForwardMetadata:
    track_conv_indices: torch.Tensor
    has_mamba_track_mask: bool = False
    mamba_track_mask_indices: Optional[torch.Tensor] = None
    conv_states_mask_indices: Optional[torch.Tensor] = None


class Mamba2AttnBackend:
    def init_forward_metadata(self, forward_batch: ForwardBatch) -> ForwardMetadata:
        return ForwardMetadata(track_conv_indices=forward_batch.track_conv_indices)


class Mamba2AttnBackendFixed(Mamba2AttnBackend):
    def init_forward_metadata(self, forward_batch: ForwardBatch) -> ForwardMetadata:
        md = ForwardMetadata(track_conv_indices=forward_batch.track_conv_indices)
        mask = forward_batch.mamba_track_mask
        md.has_mamba_track_mask = bool(mask is not None and mask.any())  # maybe: D (one sync per forward, hoisted out of the layers by the fix)
        if md.has_mamba_track_mask:
            md.mamba_track_mask_indices = mask.nonzero(as_tuple=True)[0]  # maybe: D (one per forward, kept by the fix)
            md.conv_states_mask_indices = forward_batch.mamba_track_indices[md.mamba_track_mask_indices]
        return md


class MambaMixer2(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.in_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, forward_batch: ForwardBatch, forward_metadata: ForwardMetadata, conv_states):
        mixed_qkv = self.in_proj(hidden_states).transpose(0, 1)  # [D, T]
        if forward_batch.mamba_track_mask is not None and forward_batch.mamba_track_mask.any():  # want: D
            conv_dst = forward_batch.mamba_track_indices
            mixed_qkv_to_track = mixed_qkv[:, forward_metadata.track_conv_indices].transpose(0, 1)
            mask_indices = forward_batch.mamba_track_mask.nonzero(as_tuple=True)[0]  # want: D
            conv_states[conv_dst[mask_indices]] = mixed_qkv_to_track
        return self.out_proj(mixed_qkv.transpose(0, 1))


class MambaMixer2Fixed(MambaMixer2):
    def forward(self, hidden_states, forward_batch: ForwardBatch, forward_metadata: ForwardMetadata, conv_states):
        mixed_qkv = self.in_proj(hidden_states).transpose(0, 1)
        if forward_metadata.has_mamba_track_mask:
            mixed_qkv_to_track = mixed_qkv[:, forward_metadata.track_conv_indices].transpose(0, 1)
            conv_states[forward_metadata.conv_states_mask_indices] = mixed_qkv_to_track
        return self.out_proj(mixed_qkv.transpose(0, 1))


def nemotron_h_forward(layers, backend, hidden_states, forward_batch, conv_caches):
    forward_metadata = backend.init_forward_metadata(forward_batch)  # once per forward
    for layer, conv_states in zip(layers, conv_caches):
        hidden_states = hidden_states + layer(hidden_states, forward_batch, forward_metadata, conv_states)
    return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    D, n_layers, n_slots, seq_lens = 8, 4, 6, [3, 4, 2]
    fb = ForwardBatch(
        mamba_track_mask=torch.tensor([True, False, True]),
        mamba_track_indices=torch.tensor([4, 1, 5]),
        track_conv_indices=torch.tensor([2, 8]),  # last token of request 0 and request 2
    )
    x = torch.randn(sum(seq_lens), D)
    buggy = nn.ModuleList(MambaMixer2(D) for _ in range(n_layers))
    fixed = nn.ModuleList(MambaMixer2Fixed(D) for _ in range(n_layers))
    fixed.load_state_dict(buggy.state_dict())
    caches_b, caches_f = ([torch.zeros(n_slots, D) for _ in range(n_layers)] for _ in range(2))
    with torch.no_grad():
        out_b = nemotron_h_forward(buggy, Mamba2AttnBackend(), x, fb, caches_b)
        out_f = nemotron_h_forward(fixed, Mamba2AttnBackendFixed(), x, fb, caches_f)
    assert torch.allclose(out_b, out_f) and all(torch.equal(a, b) for a, b in zip(caches_b, caches_f))
    print(f"same outputs; buggy path synced 2x per layer ({2 * n_layers}), fixed path 2x per forward")
