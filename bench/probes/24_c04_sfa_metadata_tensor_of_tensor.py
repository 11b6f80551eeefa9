# source: vllm-project/vllm-ascend issue #3927 (v0.11.0rc1 release checklist log) — AscendSFAMetadataBuilder.build() ran `torch.tensor(query_lens[reqs_start:], dtype=torch.int32).npu()` on every scheduler step; query_lens is already a tensor, so torch.tensor copies it (with the "To copy construct from a tensor" warning) before the device copy
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor  # device
    query_start_loc_cpu: torch.Tensor
    seq_lens_cpu: torch.Tensor
    positions: torch.Tensor
    block_table_tensor: torch.Tensor
    num_actual_tokens: int


@dataclass
class PrefillMetadata:
    query_lens: torch.Tensor
    seq_lens: torch.Tensor
    input_positions: torch.Tensor
    block_table: torch.Tensor
    max_query_len: int
    max_seq_lens: int


@dataclass
class DecodeMetadata:
    seq_lens: torch.Tensor
    seq_lens_list: list
    actual_seq_lengths_q: torch.Tensor
    max_seq_lens: int


@dataclass
class SFAMetadata:
    num_decodes: int
    num_prefills: int
    query_lens: list
    prefill: Optional[PrefillMetadata]
    decode: Optional[DecodeMetadata]


class SFAMetadataBuilder:
    def __init__(self, device):
        self.device = torch.device(device)

    def build(self, num_decodes: int, num_decode_tokens: int, common: CommonAttentionMetadata) -> SFAMetadata:
        num_reqs = common.seq_lens_cpu.shape[0]
        num_prefills = num_reqs - num_decodes
        device = self.device
        input_positions = common.positions[:common.num_actual_tokens].long()
        block_table = common.block_table_tensor[:num_reqs]

        query_start_loc_cpu = common.query_start_loc_cpu
        query_seq_lens_cpu = query_start_loc_cpu[1:] - query_start_loc_cpu[:-1]
        query_lens = query_seq_lens_cpu[:num_reqs]
        seq_lens = common.seq_lens_cpu[:num_reqs]

        prefill_metadata = None
        if num_prefills > 0:
            reqs_start = num_decodes
            tokens_start = num_decode_tokens
            max_query_len = query_lens[reqs_start:].max().item()  # host tensor: no device sync
            max_seq_lens = seq_lens[reqs_start:].max().item()
            actual_query_lens = torch.tensor(query_lens[reqs_start:], dtype=torch.int32).to(device)  # want: C
            query_lens_prefill = torch.cumsum(actual_query_lens, dim=0).to(torch.int32)
            seq_lens_prefill = seq_lens[reqs_start:].to(torch.int32).to(device)  # int64 -> int32 narrows: cast before the copy is right
            prefill_metadata = PrefillMetadata(
                query_lens=query_lens_prefill,
                seq_lens=seq_lens_prefill,
                input_positions=input_positions[tokens_start:],
                block_table=block_table[reqs_start:, ...],
                max_query_len=max_query_len,
                max_seq_lens=max_seq_lens,
            )

        decode_metadata = None
        if num_decodes > 0:
            actual_seq_lengths_q = common.query_start_loc[1:num_decodes + 1].to(torch.int32).to(device)
            max_seq_lens = seq_lens[:num_decodes].max().item()
            dec_seq_lens = seq_lens[:num_decodes].to(torch.int32)
            seq_lens_list = dec_seq_lens.tolist()  # host tensor
            decode_metadata = DecodeMetadata(
                seq_lens=dec_seq_lens.to(device),
                seq_lens_list=seq_lens_list,
                actual_seq_lengths_q=actual_seq_lengths_q,
                max_seq_lens=max_seq_lens,
            )

        return SFAMetadata(
            num_decodes=num_decodes,
            num_prefills=num_prefills,
            query_lens=query_lens.tolist(),
            prefill=prefill_metadata,
            decode=decode_metadata,
        )


def build_fixed_prefill_lens(query_lens: torch.Tensor, reqs_start: int, device):
    return query_lens[reqs_start:].to(device=device, dtype=torch.int32)


if __name__ == "__main__":
    import warnings

    builder = SFAMetadataBuilder("cpu")
    q_lens = torch.tensor([1, 1, 5, 7])
    qsl = torch.cat([torch.zeros(1, dtype=torch.long), q_lens.cumsum(0)])
    common = CommonAttentionMetadata(
        query_start_loc=qsl.clone(), query_start_loc_cpu=qsl, seq_lens_cpu=torch.tensor([9, 4, 5, 12]),
        positions=torch.arange(int(qsl[-1])), block_table_tensor=torch.zeros(4, 8, dtype=torch.int32),
        num_actual_tokens=int(qsl[-1]),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):  # one build per scheduler step
            md = builder.build(num_decodes=2, num_decode_tokens=2, common=common)
    assert any("copy construct" in str(w.message) for w in caught)
    assert md.prefill.query_lens.tolist() == [5, 12]
    assert torch.equal(build_fixed_prefill_lens(q_lens, 2, "cpu").cumsum(0).int(), md.prefill.query_lens)
    print("ok: torch.tensor(tensor) copies the lengths before the device copy, every step")
