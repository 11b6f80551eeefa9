# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/5318 — MiniCPM-o's Resampler._adjust_pos_cache, run on every vision forward, compared the GPU scalars max(tgt_sizes[:, 0]) / max(tgt_sizes[:, 1]) against the cached host sizes in a Python if, which calls aten::item and drains the stream right after SigLIP (~900 ms of cudaStreamSynchronize in profiles). The PR passes host int max height/width into _adjust_pos_cache and builds the patch geometry from a CPU copy of tgt_sizes made before the encoder launches.
import numpy as np
import torch
from torch import nn


def get_2d_sincos_pos_embed(embed_dim, image_size):
    grid_h_size, grid_w_size = image_size
    grid = np.meshgrid(np.arange(grid_w_size, dtype=np.float32), np.arange(grid_h_size, dtype=np.float32))
    omega = 1.0 / 10000 ** (np.arange(embed_dim // 4, dtype=np.float32) / (embed_dim / 4.0))
    out_w = np.einsum("hw,d->hwd", grid[0], omega)
    out_h = np.einsum("hw,d->hwd", grid[1], omega)
    return np.concatenate([np.sin(out_h), np.cos(out_h), np.sin(out_w), np.cos(out_w)], axis=-1)


class Resampler(nn.Module):
    def __init__(self, num_queries=4, embed_dim=16, num_heads=2, kv_dim=12, max_size=(4, 4)):
        super().__init__()
        self.embed_dim = embed_dim
        self.query = nn.Parameter(torch.randn(num_queries, embed_dim) * 0.02)
        self.kv_proj = nn.Linear(kv_dim, embed_dim, bias=False)
        self.attn = nn.MultiheadAttention(embed_dim, num_heads)
        self.ln_q, self.ln_kv, self.ln_post = (nn.LayerNorm(embed_dim) for _ in range(3))
        self.max_size = list(max_size)
        self._set_2d_pos_cache(self.max_size)

    def _set_2d_pos_cache(self, max_size, device="cpu"):
        pos_embed = torch.from_numpy(get_2d_sincos_pos_embed(self.embed_dim, max_size)).float().to(device)
        self.register_buffer("pos_embed", pos_embed, persistent=False)

    def _adjust_pos_cache(self, tgt_sizes, device):
        max_h = torch.max(tgt_sizes[:, 0])
        max_w = torch.max(tgt_sizes[:, 1])
        if max_h > self.max_size[0] or max_w > self.max_size[1]:  # want: D
            self.max_size = [max(int(max_h), self.max_size[0]), max(int(max_w), self.max_size[1])]
            self._set_2d_pos_cache(self.max_size, device)

    def _attend(self, x, pos_embed, key_padding_mask):
        bs = x.shape[0]
        x = self.ln_kv(self.kv_proj(x)).permute(1, 0, 2)
        q = self.ln_q(self.query).unsqueeze(1).repeat(1, bs, 1)
        out = self.attn(q, x + pos_embed, x, key_padding_mask=key_padding_mask)[0]
        return self.ln_post(out.permute(1, 0, 2))

    def forward(self, x, tgt_sizes):
        bs, device, dtype = x.shape[0], x.device, x.dtype
        patch_len = tgt_sizes[:, 0] * tgt_sizes[:, 1]
        self._adjust_pos_cache(tgt_sizes, device=device)
        max_patch_len = torch.max(patch_len)
        key_padding_mask = torch.zeros((bs, max_patch_len), dtype=torch.bool, device=device)  # maybe: D (tensor used as a shape is read back to host)
        pos_embed = []
        for i in range(bs):
            tgt_h, tgt_w = tgt_sizes[i]
            pos_embed.append(self.pos_embed[:tgt_h, :tgt_w, :].reshape((tgt_h * tgt_w, -1)).to(dtype))
            key_padding_mask[i, patch_len[i]:] = True
        pos_embed = nn.utils.rnn.pad_sequence(pos_embed, batch_first=True).permute(1, 0, 2)
        return self._attend(x, pos_embed, key_padding_mask)


class ResamplerFixed(Resampler):
    def _adjust_pos_cache(self, max_h: int, max_w: int, device):
        if max_h > self.max_size[0] or max_w > self.max_size[1]:
            self.max_size = [max(max_h, self.max_size[0]), max(max_w, self.max_size[1])]
            self._set_2d_pos_cache(self.max_size, device)

    @staticmethod
    def _tgt_size_lists(tgt_sizes_cpu):
        hs = [int(h) for h in tgt_sizes_cpu[:, 0].tolist()]
        ws = [int(w) for w in tgt_sizes_cpu[:, 1].tolist()]
        return hs, ws, [h * w for h, w in zip(hs, ws)]

    def forward(self, x, tgt_sizes_cpu):
        bs, device, dtype = x.shape[0], x.device, x.dtype
        hs, ws, patch_lens = self._tgt_size_lists(tgt_sizes_cpu)
        self._adjust_pos_cache(max(hs), max(ws), device=device)
        key_padding_mask = torch.zeros((bs, max(patch_lens)), dtype=torch.bool, device=device)
        pos_embed = []
        for i in range(bs):
            pos_embed.append(self.pos_embed[: hs[i], : ws[i], :].reshape((patch_lens[i], -1)).to(dtype))
            key_padding_mask[i, patch_lens[i]:] = True
        pos_embed = nn.utils.rnn.pad_sequence(pos_embed, batch_first=True).permute(1, 0, 2)
        return self._attend(x, pos_embed, key_padding_mask)


if __name__ == "__main__":
    torch.manual_seed(0)
    ref, fixed = Resampler(), ResamplerFixed()
    fixed.load_state_dict(ref.state_dict())
    tgt_sizes_cpu = torch.tensor([[5, 3], [2, 6]], dtype=torch.int32)
    x = torch.randn(2, 15, 12)
    with torch.no_grad():
        a = ref(x, tgt_sizes_cpu.clone())
        b = fixed(x, tgt_sizes_cpu)
    assert ref.max_size == fixed.max_size == [5, 6]
    assert torch.allclose(a, b, atol=1e-6)
    print("ok")
