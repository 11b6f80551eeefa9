# source: tenstorrent/tt-xla https://github.com/tenstorrent/tt-xla/issues/4631 — The modified DeepSeek V4 decode model updated its caches out of place, `self.kv_cache = self.kv_cache.index_copy(...)`, in both the Compressor and the Attention decode sites, so every decode step allocated and copied a whole new cache tensor (and changed its object id, retriggering a dynamo recompile). The workaround forces in-place updates with `self.kv_cache.index_copy_(...)` so the preallocated cache is written where it lives.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Compressor(nn.Module):
    def __init__(self, dim: int, head_dim: int, compress_ratio: int, max_batch_size: int, max_seq_len: int):
        super().__init__()
        self.compress_ratio = compress_ratio
        self.wkv = nn.Linear(dim, head_dim, bias=False)
        self.wgate = nn.Linear(dim, 1, bias=False)
        self.register_buffer("kv_cache", torch.zeros(max_batch_size, max_seq_len // compress_ratio, head_dim), persistent=False)

    def forward(self, x: torch.Tensor, start_pos: int) -> torch.Tensor:
        bsz, seqlen, _ = x.shape
        r = self.compress_ratio
        kv = self.wkv(x).view(bsz, seqlen // r, r, -1)
        score = self.wgate(x).view(bsz, seqlen // r, r, 1).softmax(dim=2)
        compressed = (kv * score).sum(dim=2)
        index = torch.arange(start_pos // r, (start_pos + seqlen) // r, device=x.device)
        self.kv_cache = self.kv_cache.index_copy(1, index, compressed)  # want: C
        return self.kv_cache[:bsz, : (start_pos + seqlen) // r]


class Attention(nn.Module):
    def __init__(self, dim: int, head_dim: int, max_batch_size: int, max_seq_len: int, compress_ratio: int = 4):
        super().__init__()
        self.wq = nn.Linear(dim, head_dim, bias=False)
        self.wkv = nn.Linear(dim, head_dim, bias=False)
        self.wo = nn.Linear(head_dim, dim, bias=False)
        self.softmax_scale = head_dim**-0.5
        self.compressor = self._make_compressor(dim, head_dim, compress_ratio, max_batch_size, max_seq_len)
        self.register_buffer("kv_cache", torch.zeros(max_batch_size, max_seq_len, head_dim), persistent=False)

    def _make_compressor(self, *args):
        return Compressor(*args)

    def _write_cache(self, index: torch.Tensor, kv: torch.Tensor) -> None:
        self.kv_cache = self.kv_cache.index_copy(1, index, kv)  # want: C

    def forward(self, x: torch.Tensor, start_pos: int) -> torch.Tensor:
        bsz, seqlen, _ = x.shape
        end_pos = start_pos + seqlen
        q = self.wq(x)
        index = torch.arange(start_pos, end_pos, device=x.device)
        self._write_cache(index, self.wkv(x))
        keys = self.kv_cache[:bsz, :end_pos]
        if seqlen % self.compressor.compress_ratio == 0:
            self.compressor(x, start_pos)
        compressed = self.compressor.kv_cache[:bsz, : end_pos // self.compressor.compress_ratio]
        keys = torch.cat([compressed, keys], dim=1)
        scores = torch.einsum("bsd,btd->bst", q, keys) * self.softmax_scale
        return self.wo(torch.einsum("bst,btd->bsd", scores.softmax(dim=-1), keys))


class CompressorFixed(Compressor):
    def forward(self, x: torch.Tensor, start_pos: int) -> torch.Tensor:
        bsz, seqlen, _ = x.shape
        r = self.compress_ratio
        kv = self.wkv(x).view(bsz, seqlen // r, r, -1)
        score = self.wgate(x).view(bsz, seqlen // r, r, 1).softmax(dim=2)
        compressed = (kv * score).sum(dim=2)
        index = torch.arange(start_pos // r, (start_pos + seqlen) // r, device=x.device)
        self.kv_cache.index_copy_(1, index, compressed)
        return self.kv_cache[:bsz, : (start_pos + seqlen) // r]


class AttentionFixed(Attention):
    def _make_compressor(self, *args):
        return CompressorFixed(*args)

    def _write_cache(self, index: torch.Tensor, kv: torch.Tensor) -> None:
        self.kv_cache.index_copy_(1, index, kv)


if __name__ == "__main__":
    torch.manual_seed(0)
    old = Attention(dim=16, head_dim=8, max_batch_size=2, max_seq_len=32)
    new = AttentionFixed(dim=16, head_dim=8, max_batch_size=2, max_seq_len=32)
    new.load_state_dict(old.state_dict())
    old_ptrs, new_ptrs = set(), set()
    comp_old, comp_new = set(), set()
    with torch.no_grad():
        prompt = torch.randn(2, 8, 16)
        assert torch.allclose(old(prompt, 0), new(prompt, 0), atol=1e-5)
        comp_old.add(old.compressor.kv_cache.data_ptr())
        comp_new.add(new.compressor.kv_cache.data_ptr())
        for pos in range(8, 16):
            x = torch.randn(2, 1, 16)
            a, b = old(x, pos), new(x, pos)
            assert torch.allclose(a, b, atol=1e-5)
            old_ptrs.add(old.kv_cache.data_ptr())
            new_ptrs.add(new.kv_cache.data_ptr())
            comp_old.add(old.compressor.kv_cache.data_ptr())
            comp_new.add(new.compressor.kv_cache.data_ptr())
    assert len(old_ptrs) == 8 and len(new_ptrs) == 1  # a new full cache every decode step
    assert len(comp_old) == 1 and len(comp_new) == 1
    before = old.compressor.kv_cache.data_ptr()
    with torch.no_grad():
        old.compressor(torch.randn(2, 4, 16), 16)
        new_before = new.compressor.kv_cache.data_ptr()
        new.compressor(torch.randn(2, 4, 16), 16)
    assert old.compressor.kv_cache.data_ptr() != before
    assert new.compressor.kv_cache.data_ptr() == new_before
    print("ok")
