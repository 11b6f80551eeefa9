# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/51738 — `make_kv_sharing_fast_prefill_common_attn_metadata` (built every step for KV-sharing fast prefill) computed `int(num_decode_tokens.max().item())` and `int(num_decode_tokens.sum().item())` from a device tensor, two GPU->CPU syncs per step; the fix takes the total from the host-side `num_logits_indices` and the max from a new `CommonAttentionMetadata.max_logits_per_req` plumbed down from the runner. (Both look-alikes count per-request tokens with scatter_add_.)
from dataclasses import dataclass, replace
from typing import Optional

import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor
    seq_lens: torch.Tensor
    num_reqs: int
    num_actual_tokens: int
    max_query_len: int
    max_seq_len: int
    block_table_tensor: torch.Tensor
    slot_mapping: torch.Tensor
    causal: bool = True
    logits_indices_padded: Optional[torch.Tensor] = None
    num_logits_indices: Optional[int] = None
    max_logits_per_req: Optional[int] = None


def _decode_tokens_per_request(logits_indices, query_start_loc, num_reqs):
    # request_ids: [0, 1, 1, 2] for generation_indices [14, 18, 19, 27], query_start_loc [0, 15, 20, 28]
    request_ids = torch.bucketize(logits_indices, query_start_loc[1:], right=True)
    num_decode_tokens = torch.zeros(num_reqs, dtype=query_start_loc.dtype, device=query_start_loc.device)
    num_decode_tokens.scatter_add_(0, request_ids, torch.ones_like(request_ids, dtype=query_start_loc.dtype))
    return num_decode_tokens


def make_kv_sharing_fast_prefill_common_attn_metadata(common_attn_metadata):
    if common_attn_metadata.max_query_len == 1:
        # All requests are decode (assume 1 token for now)
        return common_attn_metadata

    logits_indices_padded = common_attn_metadata.logits_indices_padded
    num_logits_indices = common_attn_metadata.num_logits_indices
    # Get rid of CUDAGraph padding, if any
    logits_indices = logits_indices_padded[:num_logits_indices]
    num_reqs = common_attn_metadata.num_reqs
    query_start_loc = common_attn_metadata.query_start_loc

    num_decode_tokens = _decode_tokens_per_request(logits_indices, query_start_loc, num_reqs)
    decode_query_start_loc = torch.empty(num_reqs + 1, device=query_start_loc.device, dtype=query_start_loc.dtype)
    decode_query_start_loc[0] = 0
    decode_query_start_loc[1:] = torch.cumsum(num_decode_tokens, dim=0)
    decode_max_query_len = int(num_decode_tokens.max().item())  # want: D
    total_num_decode_tokens = int(num_decode_tokens.sum().item())  # want: D

    return replace(
        common_attn_metadata,
        query_start_loc=decode_query_start_loc,
        num_actual_tokens=total_num_decode_tokens,
        max_query_len=decode_max_query_len,
    )


def make_kv_sharing_fast_prefill_common_attn_metadata_fixed(common_attn_metadata):
    if common_attn_metadata.max_query_len == 1:
        return common_attn_metadata

    logits_indices_padded = common_attn_metadata.logits_indices_padded
    num_logits_indices = common_attn_metadata.num_logits_indices
    logits_indices = logits_indices_padded[:num_logits_indices]
    num_reqs = common_attn_metadata.num_reqs
    query_start_loc = common_attn_metadata.query_start_loc

    num_decode_tokens = _decode_tokens_per_request(logits_indices, query_start_loc, num_reqs)
    decode_query_start_loc = torch.empty(num_reqs + 1, device=query_start_loc.device, dtype=query_start_loc.dtype)
    decode_query_start_loc[0] = 0
    decode_query_start_loc[1:] = torch.cumsum(num_decode_tokens, dim=0)
    # Both scalars are already known on the host: the runner passes the per-request
    # logits count it sampled with, and the total is just the number of logits indices.
    decode_max_query_len = common_attn_metadata.max_logits_per_req
    total_num_decode_tokens = num_logits_indices

    return replace(
        common_attn_metadata,
        query_start_loc=decode_query_start_loc,
        num_actual_tokens=total_num_decode_tokens,
        max_query_len=decode_max_query_len,
    )


class FastPrefillAttentionBuilder:
    def __init__(self, make_fn):
        self.make_fn = make_fn

    def build(self, common_prefix_len, common_attn_metadata):
        new_meta = self.make_fn(common_attn_metadata)
        return {"max_query_len": new_meta.max_query_len, "num_actual_tokens": new_meta.num_actual_tokens,
                "query_start_loc": new_meta.query_start_loc}


if __name__ == "__main__":
    qsl = torch.tensor([0, 15, 20, 28], dtype=torch.int64)
    logits_padded = torch.tensor([14, 18, 19, 27, 0, 0], dtype=torch.int64)
    meta = CommonAttentionMetadata(
        query_start_loc=qsl, seq_lens=torch.tensor([41, 31, 40]), num_reqs=3, num_actual_tokens=28,
        max_query_len=15, max_seq_len=41, block_table_tensor=torch.zeros(3, 4, dtype=torch.int32),
        slot_mapping=torch.arange(28), logits_indices_padded=logits_padded, num_logits_indices=4,
        max_logits_per_req=2,
    )
    a = FastPrefillAttentionBuilder(make_kv_sharing_fast_prefill_common_attn_metadata).build(0, meta)
    b = FastPrefillAttentionBuilder(make_kv_sharing_fast_prefill_common_attn_metadata_fixed).build(0, meta)
    assert a["max_query_len"] == b["max_query_len"] == 2
    assert a["num_actual_tokens"] == b["num_actual_tokens"] == 4
    assert torch.equal(a["query_start_loc"], b["query_start_loc"])
    print("decode query_start_loc:", b["query_start_loc"].tolist())
