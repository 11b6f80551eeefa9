# source: state-spaces/mamba PR #969 ("Remove host syncs from compute_dacs_segsum_triton_varlen") — the packed-varlen chunk map was built in a python loop that read `int(cu_seqlens[i].item())` and `int(chunks_per_seq[i].item())` per sequence to get slice bounds: 2*num_sequences + 1 device->host syncs per layer per prefill batch
import torch
import torch.nn.functional as F
from torch import nn


def build_chunk_mapping_loop(cu_seqlens: torch.Tensor, chunk_size: int):
    """Sequence i owns global chunk slots [cu[i]//C + i, cu[i]//C + i + len_i//C + 1)."""
    num_sequences = cu_seqlens.numel() - 1
    device = cu_seqlens.device
    seqlens = cu_seqlens[1:] - cu_seqlens[:-1]
    chunks_per_seq = seqlens // chunk_size + 1
    total_slots = int(cu_seqlens[-1].item()) // chunk_size + num_sequences  # want: D
    state_seq_mapping = torch.full((total_slots,), -1, dtype=torch.int32, device=device)
    state_chunk_in_seq = torch.full((total_slots,), -1, dtype=torch.int32, device=device)
    for i in range(num_sequences):
        start = int(cu_seqlens[i].item())  # want: D
        n = int(chunks_per_seq[i].item())  # want: D
        chunk_start = start // chunk_size + i
        chunk_end = chunk_start + n
        state_seq_mapping[chunk_start:chunk_end] = i
        state_chunk_in_seq[chunk_start:chunk_end] = torch.arange(n, dtype=torch.int32, device=device)
    return state_seq_mapping, state_chunk_in_seq


def build_chunk_mapping_vectorized(cu_seqlens: torch.Tensor, chunk_size: int, total_tokens: int):
    """The fix: slot starts are increasing, so the owner of slot g is searchsorted(range_starts, g) - 1."""
    num_sequences = cu_seqlens.numel() - 1  # host int from the shape
    total_slots = total_tokens // chunk_size + num_sequences  # host ints from shapes
    device = cu_seqlens.device
    seq = torch.arange(num_sequences, device=device)
    range_starts = cu_seqlens[:-1] // chunk_size + seq
    range_ends = range_starts + (cu_seqlens[1:] - cu_seqlens[:-1]) // chunk_size + 1
    g = torch.arange(total_slots, device=device)
    owner = torch.searchsorted(range_starts, g, right=True) - 1
    active = g < range_ends[owner]
    mapping = torch.where(active, owner, -1).to(torch.int32)
    chunk_in_seq = torch.where(active, g - range_starts[owner], -1).to(torch.int32)
    return mapping, chunk_in_seq


def compute_dacs_segsum_varlen(dA: torch.Tensor, cu_seqlens: torch.Tensor, chunk_size: int, vectorized=False):
    """Per-chunk cumulative decay sums for a packed (1, T, H) batch; empty padding slots stay zero."""
    total_tokens = dA.shape[1]
    if vectorized:
        mapping, chunk_in_seq = build_chunk_mapping_vectorized(cu_seqlens, chunk_size, total_tokens)
    else:
        mapping, chunk_in_seq = build_chunk_mapping_loop(cu_seqlens, chunk_size)
    pos = torch.arange(total_tokens, device=dA.device)
    seq_of_tok = torch.searchsorted(cu_seqlens[1:], pos, right=True)
    local = pos - cu_seqlens[seq_of_tok]
    slot_of_tok = cu_seqlens[seq_of_tok] // chunk_size + seq_of_tok + local // chunk_size
    sums = torch.zeros(mapping.numel(), dA.shape[-1], dtype=dA.dtype, device=dA.device)
    sums.index_add_(0, slot_of_tok, dA[0])
    return sums, mapping, chunk_in_seq


class Mamba3Mixer(nn.Module):
    def __init__(self, d_model=16, nheads=4, chunk_size=4):
        super().__init__()
        self.in_proj = nn.Linear(d_model, d_model + nheads)
        self.A_log = nn.Parameter(torch.zeros(nheads))
        self.out_proj = nn.Linear(d_model, d_model)
        self.nheads, self.chunk_size = nheads, chunk_size

    def forward(self, u, cu_seqlens=None, vectorized=False):
        x, dt = self.in_proj(u).split([u.shape[-1], self.nheads], dim=-1)
        dA = F.softplus(dt) * -torch.exp(self.A_log)
        seg, mapping, _ = compute_dacs_segsum_varlen(dA, cu_seqlens, self.chunk_size, vectorized)
        pos = torch.arange(u.shape[1], device=u.device)
        seq_of_tok = torch.searchsorted(cu_seqlens[1:], pos, right=True)
        local = pos - cu_seqlens[seq_of_tok]
        slot = cu_seqlens[seq_of_tok] // self.chunk_size + seq_of_tok + local // self.chunk_size
        decay = seg[slot].mean(-1, keepdim=True).exp()
        return self.out_proj(x * decay)


if __name__ == "__main__":
    torch.manual_seed(0)
    lengths = [5, 9, 3, 8]
    cu = F.pad(torch.tensor(lengths).cumsum(0), (1, 0))
    u = torch.randn(1, sum(lengths), 16)
    mixer = Mamba3Mixer()
    with torch.no_grad():
        a = mixer(u, cu)
        b = mixer(u, cu, vectorized=True)
    m1, c1 = build_chunk_mapping_loop(cu, 4)
    m2, c2 = build_chunk_mapping_vectorized(cu, 4, sum(lengths))
    assert torch.equal(m1, m2) and torch.equal(c1, c2) and torch.allclose(a, b)
    print("ok:", m1.tolist())
