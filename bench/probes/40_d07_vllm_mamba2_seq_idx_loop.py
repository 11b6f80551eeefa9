# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/16743 — `prepare_mamba2_metadata`, run once per model forward for Mamba2/Bamba prefills, built `seq_idx` by iterating over the device `query_start_loc` tensor (`for i, (srt, end) in enumerate(zip(query_start_loc, query_start_loc[1:]))`) and slicing `seq_idx[srt:end] = i` with the resulting 0-d tensors, so every request in the batch cost host reads of device values (the number of CPU-GPU syncs grows with batch size). The PR replaces the sequential loop with `torch.repeat_interleave(arange(num_prefills), query_start_loc.diff(), output_size=num_prefill_tokens)`, computed on device.
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class AttentionMetadata:
    num_prefills: int
    num_prefill_tokens: int
    query_start_loc: torch.Tensor
    context_lens_tensor: Optional[torch.Tensor] = None


@dataclass
class Mamba2Metadata:
    has_initial_states: Optional[torch.Tensor]
    seq_idx: torch.Tensor


def prepare_mamba2_metadata(chunk_size: int, input_ids: torch.Tensor, attn_metadata: AttentionMetadata) -> Mamba2Metadata:
    # compute number of prefill and decode requests
    # NOTE: in V0 we assume prefills are before decodes
    num_prefills = attn_metadata.num_prefills

    has_initial_states = None
    if attn_metadata.context_lens_tensor is not None:
        has_initial_states = attn_metadata.context_lens_tensor[:num_prefills] > 0  # [batch,]

    query_start_loc = attn_metadata.query_start_loc[: num_prefills + 1]
    seq_idx = torch.zeros_like(input_ids, dtype=torch.int32)
    for i, (srt, end) in enumerate(zip(query_start_loc, query_start_loc[1:])):  # maybe: D (iterating the device tensor yields 0-d tensors)
        seq_idx[srt:end] = i  # want: D
    seq_idx.unsqueeze_(0)

    return Mamba2Metadata(has_initial_states=has_initial_states, seq_idx=seq_idx)


def prepare_mamba2_metadata_fixed(
    chunk_size: int, input_ids: torch.Tensor, attn_metadata: AttentionMetadata
) -> Mamba2Metadata:
    num_prefills = attn_metadata.num_prefills
    num_prefill_tokens = attn_metadata.num_prefill_tokens

    has_initial_states = None
    if attn_metadata.context_lens_tensor is not None:
        has_initial_states = attn_metadata.context_lens_tensor[:num_prefills] > 0  # [batch,]

    query_start_loc = attn_metadata.query_start_loc[: num_prefills + 1]
    seq_idx = torch.repeat_interleave(
        torch.arange(num_prefills, dtype=torch.int32, device=query_start_loc.device),
        query_start_loc.diff(),
        output_size=num_prefill_tokens,
    )
    seq_idx.unsqueeze_(0)

    return Mamba2Metadata(has_initial_states=has_initial_states, seq_idx=seq_idx)


if __name__ == "__main__":
    input_ids = torch.randint(0, 100, (17,))
    meta = AttentionMetadata(
        num_prefills=4,
        num_prefill_tokens=17,
        query_start_loc=torch.tensor([0, 3, 9, 10, 17], dtype=torch.int32),
        context_lens_tensor=torch.tensor([0, 4, 0, 2]),
    )
    a = prepare_mamba2_metadata(256, input_ids, meta)
    b = prepare_mamba2_metadata_fixed(256, input_ids, meta)
    assert torch.equal(a.seq_idx, b.seq_idx) and torch.equal(a.has_initial_states, b.has_initial_states)
    print("ok", a.seq_idx.tolist())
