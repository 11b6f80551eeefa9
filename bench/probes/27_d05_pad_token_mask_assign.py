# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/13461 — ZImageTransformer2DModel._prepare_sequence (called from forward on every denoising step) did `feats_cat[torch.cat(inner_pad_mask)] = pad_token`, a boolean-mask index_put that calls nonzero() (D2H sync); the fix uses `torch.where(mask, pad_token, feats_cat)`.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence


class RopeEmbedder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, ids):
        freqs = torch.arange(self.dim // 2, device=ids.device, dtype=torch.float32)
        angles = ids.float().sum(-1, keepdim=True) * freqs
        return torch.polar(torch.ones_like(angles), angles)


class ZImageTransformer2DModel(nn.Module):
    def __init__(self, dim=32, fixed=False):
        super().__init__()
        self.x_pad_token = nn.Parameter(torch.randn(dim))
        self.cap_pad_token = nn.Parameter(torch.randn(dim))
        self.rope_embedder = RopeEmbedder(dim)
        self.proj = nn.Linear(dim, dim)
        self.fixed = fixed

    def _prepare_sequence(
        self,
        feats: list[torch.Tensor],
        pos_ids: list[torch.Tensor],
        inner_pad_mask: list[torch.Tensor],
        pad_token: torch.nn.Parameter,
        noise_mask: list[list[int]] | None = None,
        device: torch.device = None,
    ):
        """Prepare sequence: apply pad token, RoPE embed, pad to batch, create attention mask."""
        item_seqlens = [len(f) for f in feats]
        max_seqlen = max(item_seqlens)
        bsz = len(feats)

        # Pad token
        feats_cat = torch.cat(feats, dim=0)
        feats_cat[torch.cat(inner_pad_mask)] = pad_token  # want: D
        feats = list(feats_cat.split(item_seqlens, dim=0))

        # RoPE
        freqs_cis = list(self.rope_embedder(torch.cat(pos_ids, dim=0)).split([len(p) for p in pos_ids], dim=0))

        # Pad to batch
        feats = pad_sequence(feats, batch_first=True, padding_value=0.0)
        freqs_cis = pad_sequence(freqs_cis, batch_first=True, padding_value=0.0)[:, : feats.shape[1]]

        # Attention mask
        if all(seq == max_seqlen for seq in item_seqlens):
            attn_mask = None
        else:
            attn_mask = torch.zeros((bsz, max_seqlen), dtype=torch.bool, device=device)
            for i, seq_len in enumerate(item_seqlens):
                attn_mask[i, :seq_len] = 1

        # Noise mask
        noise_mask_tensor = None
        if noise_mask is not None:
            noise_mask_tensor = pad_sequence(
                [torch.tensor(m, dtype=torch.long, device=device) for m in noise_mask],
                batch_first=True,
                padding_value=0,
            )[:, : feats.shape[1]]

        return feats, freqs_cis, attn_mask, item_seqlens, noise_mask_tensor

    def _prepare_sequence_fixed(
        self,
        feats: list[torch.Tensor],
        pos_ids: list[torch.Tensor],
        inner_pad_mask: list[torch.Tensor],
        pad_token: torch.nn.Parameter,
        noise_mask: list[list[int]] | None = None,
        device: torch.device = None,
    ):
        item_seqlens = [len(f) for f in feats]
        max_seqlen = max(item_seqlens)
        bsz = len(feats)

        # Pad token
        feats_cat = torch.cat(feats, dim=0)
        mask = torch.cat(inner_pad_mask).unsqueeze(-1)
        feats_cat = torch.where(mask, pad_token, feats_cat)
        feats = list(feats_cat.split(item_seqlens, dim=0))

        freqs_cis = list(self.rope_embedder(torch.cat(pos_ids, dim=0)).split([len(p) for p in pos_ids], dim=0))
        feats = pad_sequence(feats, batch_first=True, padding_value=0.0)
        freqs_cis = pad_sequence(freqs_cis, batch_first=True, padding_value=0.0)[:, : feats.shape[1]]

        if all(seq == max_seqlen for seq in item_seqlens):
            attn_mask = None
        else:
            attn_mask = torch.zeros((bsz, max_seqlen), dtype=torch.bool, device=device)
            for i, seq_len in enumerate(item_seqlens):
                attn_mask[i, :seq_len] = 1
        return feats, freqs_cis, attn_mask, item_seqlens, None

    def forward(self, x: list[torch.Tensor], x_pos_ids, x_inner_pad_mask, cap_feats, cap_pos_ids, cap_inner_pad_mask):
        device = x[0].device
        prepare = self._prepare_sequence_fixed if self.fixed else self._prepare_sequence
        x, x_freqs, x_attn_mask, x_item_seqlens, _ = prepare(
            list(x), x_pos_ids, x_inner_pad_mask, self.x_pad_token, device=device
        )
        cap, cap_freqs, cap_attn_mask, cap_item_seqlens, _ = prepare(
            list(cap_feats), cap_pos_ids, cap_inner_pad_mask, self.cap_pad_token, device=device
        )
        unified = torch.cat([x, cap], dim=1)
        return self.proj(unified)


def _inputs(dim=32):
    lens = [12, 9]
    x = [torch.randn(n, dim) for n in lens]
    pos = [torch.randint(0, 8, (n, 3)) for n in lens]
    pad = [torch.arange(n) >= n - 2 for n in lens]
    cap = [torch.randn(n, dim) for n in (5, 7)]
    cap_pos = [torch.randint(0, 8, (n, 3)) for n in (5, 7)]
    cap_pad = [torch.arange(n) >= n - 1 for n in (5, 7)]
    return x, pos, pad, cap, cap_pos, cap_pad


if __name__ == "__main__":
    torch.manual_seed(0)
    m = ZImageTransformer2DModel()
    mf = ZImageTransformer2DModel(fixed=True)
    mf.load_state_dict(m.state_dict())
    with torch.no_grad():
        for step in range(4):  # denoising steps
            args = _inputs()
            a, b = m(*args), mf(*args)
    print(torch.allclose(a, b))
