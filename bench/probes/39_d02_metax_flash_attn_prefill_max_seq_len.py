# source: MetaX-MACA/vLLM-metax https://github.com/MetaX-MACA/vLLM-metax/pull/260 — The FlashAttention metadata builder's build() computed prefill_max_seq_len with int(prefill_seq_lens.max().item()) on the device seq_lens tensor, once per scheduler step. That .item() is a GPU-to-CPU sync in per-step metadata preparation that stalls async scheduling; the fix reads the host mirror common_attn_metadata.seq_lens_cpu instead.
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor
    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor
    num_reqs: int
    num_actual_tokens: int
    max_query_len: int
    max_seq_len: int


@dataclass
class MacaFlashAttentionMetadata:
    num_actual_tokens: int
    num_decodes: int
    num_prefills: int
    decode_seq_lens: Optional[torch.Tensor]
    prefill_query_start_loc: Optional[torch.Tensor]
    prefill_seq_lens: Optional[torch.Tensor]
    prefill_max_seq_len: int = 0


def split_decodes_and_prefills(common_attn_metadata, decode_threshold=1):
    max_query_len = common_attn_metadata.max_query_len
    num_reqs = common_attn_metadata.num_reqs
    if max_query_len <= decode_threshold:
        return num_reqs, 0
    query_start_loc = common_attn_metadata.query_start_loc_cpu
    query_lens = query_start_loc[1:] - query_start_loc[:-1]
    is_prefill = query_lens > decode_threshold
    first_prefill = is_prefill.int().argmax(dim=-1).item()
    return first_prefill, num_reqs - first_prefill


class MacaFlashAttentionMetadataBuilder:
    reorder_batch_threshold: int = 1

    def _prefill_max_seq_len(self, common_attn_metadata, num_decodes, num_reqs):
        prefill_seq_lens = common_attn_metadata.seq_lens[num_decodes:num_reqs]
        return int(prefill_seq_lens.max().item())  # want: D

    def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
        num_reqs = common_attn_metadata.num_reqs
        num_decodes, num_prefills = split_decodes_and_prefills(
            common_attn_metadata, decode_threshold=self.reorder_batch_threshold
        )
        decode_seq_lens = common_attn_metadata.seq_lens[:num_decodes] if num_decodes else None
        prefill_query_start_loc = prefill_seq_lens = None
        prefill_max_seq_len = 0
        if num_prefills > 0:
            prefill_query_start_loc = (
                common_attn_metadata.query_start_loc[num_decodes:num_reqs + 1]
                - common_attn_metadata.query_start_loc[num_decodes]
            )
            prefill_seq_lens = common_attn_metadata.seq_lens[num_decodes:num_reqs]
            prefill_max_seq_len = self._prefill_max_seq_len(
                common_attn_metadata, num_decodes, num_reqs
            )
        return MacaFlashAttentionMetadata(
            num_actual_tokens=common_attn_metadata.num_actual_tokens,
            num_decodes=num_decodes,
            num_prefills=num_prefills,
            decode_seq_lens=decode_seq_lens,
            prefill_query_start_loc=prefill_query_start_loc,
            prefill_seq_lens=prefill_seq_lens,
            prefill_max_seq_len=prefill_max_seq_len,
        )


class MacaFlashAttentionMetadataBuilderFixed(MacaFlashAttentionMetadataBuilder):
    def _prefill_max_seq_len(self, common_attn_metadata, num_decodes, num_reqs):
        prefill_seq_lens_cpu = common_attn_metadata.seq_lens_cpu[num_decodes:num_reqs]
        return int(prefill_seq_lens_cpu.max().item())


if __name__ == "__main__":
    query_lens = [1, 1, 7, 4]
    seq_lens = [20, 33, 7, 12]
    qsl = torch.tensor([0] + torch.tensor(query_lens).cumsum(0).tolist(), dtype=torch.int32)
    cam = CommonAttentionMetadata(
        query_start_loc=qsl.clone(),
        query_start_loc_cpu=qsl,
        seq_lens=torch.tensor(seq_lens, dtype=torch.int32),
        seq_lens_cpu=torch.tensor(seq_lens, dtype=torch.int32),
        num_reqs=4,
        num_actual_tokens=sum(query_lens),
        max_query_len=max(query_lens),
        max_seq_len=max(seq_lens),
    )
    a = MacaFlashAttentionMetadataBuilder().build(0, cam)
    b = MacaFlashAttentionMetadataBuilderFixed().build(0, cam)
    assert a.num_decodes == b.num_decodes == 2
    assert a.prefill_max_seq_len == b.prefill_max_seq_len == 12
    assert torch.equal(a.prefill_query_start_loc, b.prefill_query_start_loc)
    print("ok")
