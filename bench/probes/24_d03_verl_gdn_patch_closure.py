# source: verl-project/verl PR #6559 (review by gemini-code-assist) — the monkey-patched GDN forward for packed THD sequences built seq_idx in a nested helper that branched on `if cu_seqlens[-1] < total_tokens:` with cu_seqlens on the GPU: a device->host sync in every training forward; the suggested fix appends total_tokens unconditionally
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class PackedSeqParams:
    cu_seqlens_q: torch.Tensor
    cu_seqlens_q_padded: Optional[torch.Tensor] = None
    qkv_format: str = "thd"


class GatedDeltaNet(nn.Module):
    """Stand-in for Megatron's GDN layer: a depthwise causal conv plus a gated projection."""

    def __init__(self, hidden=16, kernel=4):
        super().__init__()
        self.in_proj = nn.Linear(hidden, 2 * hidden)
        self.conv1d = nn.Conv1d(hidden, hidden, kernel, groups=hidden, padding=kernel - 1)
        self.out_proj = nn.Linear(hidden, hidden)
        self.kernel = kernel

    def forward(self, hidden_states, attention_mask=None, packed_seq_params=None):
        x, gate = self.in_proj(hidden_states).chunk(2, dim=-1)
        x = self.conv1d(x.transpose(1, 2))[..., : x.shape[1]].transpose(1, 2)
        return self.out_proj(F.silu(x) * torch.sigmoid(gate))


def apply_gdn_packed_seq_patch():
    orig_forward = GatedDeltaNet.forward

    def _get_cu_seqlens(packed_seq_params):
        if packed_seq_params is None or packed_seq_params.qkv_format != "thd":
            return None
        cu_seqlens_padded = getattr(packed_seq_params, "cu_seqlens_q_padded", None)
        if cu_seqlens_padded is not None:
            return cu_seqlens_padded
        return packed_seq_params.cu_seqlens_q

    def _build_seq_idx_from_cu_seqlens(cu_seqlens, total_tokens):
        if cu_seqlens is None:
            return None
        if cu_seqlens[-1] < total_tokens:  # want: D
            cu_seqlens = torch.cat([cu_seqlens, cu_seqlens.new_tensor([total_tokens])])
        seq_lengths = (cu_seqlens[1:] - cu_seqlens[:-1]).clamp(min=0)
        seq_ids = torch.arange(seq_lengths.numel(), device=cu_seqlens.device)
        seq_idx = torch.repeat_interleave(seq_ids, seq_lengths)  # maybe: D (tensor repeats without output_size: ATen reads the total back to size the output)
        return seq_idx.to(torch.int32).unsqueeze(0)

    def _build_seq_idx_fixed(cu_seqlens, total_tokens):
        # always append: a trailing zero-length segment is harmless, and output_size keeps it on device
        cu_seqlens = torch.cat([cu_seqlens, cu_seqlens.new_tensor([total_tokens])])
        seq_lengths = (cu_seqlens[1:] - cu_seqlens[:-1]).clamp(min=0)
        seq_ids = torch.arange(seq_lengths.numel(), device=cu_seqlens.device)
        return torch.repeat_interleave(seq_ids, seq_lengths, output_size=total_tokens).to(torch.int32).unsqueeze(0)

    def patched_forward(self, hidden_states, attention_mask=None, packed_seq_params=None, use_fixed=False):
        cu_seqlens = _get_cu_seqlens(packed_seq_params)
        if cu_seqlens is None:
            return orig_forward(self, hidden_states, attention_mask, packed_seq_params)
        total_tokens = hidden_states.shape[1]  # host int from the shape
        build = _build_seq_idx_fixed if use_fixed else _build_seq_idx_from_cu_seqlens
        seq_idx = build(cu_seqlens, total_tokens)
        x, gate = self.in_proj(hidden_states).chunk(2, dim=-1)
        x = x.transpose(1, 2)
        # causal depthwise conv that does not leak across packed-sequence boundaries
        k = self.kernel
        xp = F.pad(x, (k - 1, 0))
        sp = F.pad(seq_idx, (k - 1, 0), value=-1)
        w = self.conv1d.weight.squeeze(1)
        y = self.conv1d.bias[None, :, None].expand_as(x).clone()
        for j in range(k):
            same = (sp[:, j:j + x.shape[-1]] == seq_idx).unsqueeze(1)
            y = y + torch.where(same, xp[..., j:j + x.shape[-1]] * w[:, j, None], 0.0)
        y = y.transpose(1, 2)
        return self.out_proj(F.silu(y) * torch.sigmoid(gate))

    GatedDeltaNet.forward = patched_forward


if __name__ == "__main__":
    torch.manual_seed(0)
    apply_gdn_packed_seq_patch()
    layer = GatedDeltaNet()
    lengths = [5, 3, 6]
    h = torch.randn(1, sum(lengths) + 2, 16)  # two padding tokens past cu_seqlens[-1]
    cu = F.pad(torch.tensor(lengths).cumsum(0), (1, 0))
    params = PackedSeqParams(cu_seqlens_q=cu)
    with torch.no_grad():
        a = layer(h, packed_seq_params=params)
        b = layer(h, packed_seq_params=params, use_fixed=True)
        first = layer(h[:, :5], packed_seq_params=PackedSeqParams(cu_seqlens_q=torch.tensor([0, 5])))
    assert torch.allclose(a, b, atol=1e-6)
    assert torch.allclose(a[:, :5], first, atol=1e-6)  # the first packed sequence does not see the others
    print("ok:", tuple(a.shape))
