# source: state-spaces/mamba https://github.com/state-spaces/mamba/pull/969 — `compute_dacs_segsum_triton_varlen` built its chunk-to-sequence mapping in a Python loop over packed sequences, reading `int(cu_seqlens[i].item())` and `int(chunks_per_seq[i].item())` from the GPU on every iteration, i.e. 2*num_sequences+1 device-to-host syncs per call, once per layer per prefill batch in varlen serving and training. The PR replaces the loop with a fully on-device construction (range starts + `searchsorted` to find each slot's owner, `torch.where` to blank padding slots), leaving zero syncs.
import torch


def _varlen_chunk_slots(total_tokens, num_sequences, chunk_size):
    # upper bound on the number of global chunk slots; static shape metadata only
    return total_tokens // chunk_size + num_sequences


def compute_dacs_segsum_triton_varlen(dt, cu_seqlens, chunk_size):
    """dt: (total_tokens, nheads). Returns per-chunk dt sums and the slot mappings."""
    total_tokens, nheads = dt.shape
    num_sequences = cu_seqlens.shape[0] - 1
    seqlens = cu_seqlens[1:] - cu_seqlens[:-1]
    chunks_per_seq = seqlens // chunk_size + 1
    nslots = _varlen_chunk_slots(total_tokens, num_sequences, chunk_size)

    state_seq_mapping = torch.full((nslots,), -1, dtype=torch.long, device=dt.device)
    state_chunk_in_seq = torch.full((nslots,), -1, dtype=torch.long, device=dt.device)
    for i in range(num_sequences):
        start = int(cu_seqlens[i].item())  # want: D
        n = int(chunks_per_seq[i].item())  # want: D
        chunk_start = start // chunk_size + i
        chunk_end = chunk_start + n
        state_seq_mapping[chunk_start:chunk_end] = i
        state_chunk_in_seq[chunk_start:chunk_end] = torch.arange(n, device=dt.device)

    return _dacs_segsum(dt, cu_seqlens, chunk_size, state_seq_mapping, state_chunk_in_seq)


def compute_dacs_segsum_triton_varlen_fixed(dt, cu_seqlens, chunk_size):
    total_tokens, nheads = dt.shape
    num_sequences = cu_seqlens.shape[0] - 1
    seqlens = cu_seqlens[1:] - cu_seqlens[:-1]
    chunks_per_seq = seqlens // chunk_size + 1
    nslots = _varlen_chunk_slots(total_tokens, num_sequences, chunk_size)

    # Sequence i owns the contiguous slots [cu[i]//C + i, cu[i]//C + i + len_i//C + 1)
    range_starts = cu_seqlens[:-1] // chunk_size + torch.arange(num_sequences, device=dt.device)
    range_ends = range_starts + chunks_per_seq
    g = torch.arange(nslots, device=dt.device)
    owner = torch.searchsorted(range_starts, g, right=True) - 1
    active = g < range_ends[owner]
    state_seq_mapping = torch.where(active, owner, torch.full_like(owner, -1))
    state_chunk_in_seq = torch.where(active, g - range_starts[owner], torch.full_like(owner, -1))

    return _dacs_segsum(dt, cu_seqlens, chunk_size, state_seq_mapping, state_chunk_in_seq)


def _dacs_segsum(dt, cu_seqlens, chunk_size, state_seq_mapping, state_chunk_in_seq):
    # stand-in for the Triton kernel: sum dt over each (sequence, chunk) slot
    total_tokens, nheads = dt.shape
    tok = torch.arange(total_tokens, device=dt.device)
    tok_seq = torch.searchsorted(cu_seqlens[1:], tok, right=True)
    tok_chunk = (tok - cu_seqlens[tok_seq]) // chunk_size
    tok_slot = cu_seqlens[tok_seq] // chunk_size + tok_seq + tok_chunk
    out = torch.zeros(state_seq_mapping.shape[0], nheads, dtype=dt.dtype, device=dt.device)
    out.index_add_(0, tok_slot, dt)
    return out, state_seq_mapping, state_chunk_in_seq


if __name__ == "__main__":
    torch.manual_seed(0)
    cu_seqlens = torch.tensor([0, 5, 5, 19, 27, 40])
    dt = torch.rand(40, 3)
    a = compute_dacs_segsum_triton_varlen(dt, cu_seqlens, chunk_size=4)
    b = compute_dacs_segsum_triton_varlen_fixed(dt, cu_seqlens, chunk_size=4)
    for x, y in zip(a, b):
        assert torch.equal(x, y), (x, y)
    print("ok", a[1].tolist())
