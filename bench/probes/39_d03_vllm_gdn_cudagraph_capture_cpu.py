# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/55404 — GDNAttentionMetadataBuilder.build_for_cudagraph_capture derived the per-request draft-token counts from the device query_start_loc and then pulled them to the host with (num_accepted_tokens - 1).cpu(). That .cpu() is a device sync inside metadata building for every captured batch size; the fix computes the same counts from the host mirror, torch.diff(m.query_start_loc_cpu).sub_(1).
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor
    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    num_reqs: int
    num_actual_tokens: int


@dataclass
class GDNAttentionMetadata:
    num_prefills: int
    num_decodes: int
    num_spec_decodes: int
    num_spec_decode_tokens: int
    spec_query_start_loc: Optional[torch.Tensor]
    num_accepted_tokens: Optional[torch.Tensor]


class GDNAttentionMetadataBuilder:
    def __init__(self, num_spec=2, decode_cudagraph_max_bs=8):
        self.num_spec = num_spec
        self.decode_cudagraph_max_bs = decode_cudagraph_max_bs

    def build(self, common_prefix_len, common_attn_metadata, num_accepted_tokens=None,
              num_decode_draft_tokens_cpu=None, fast_build=False):
        m = common_attn_metadata
        if num_decode_draft_tokens_cpu is None or not bool(
            (num_decode_draft_tokens_cpu >= 0).any()
        ):
            return GDNAttentionMetadata(0, m.num_reqs, 0, 0, None, None)
        spec_sequence_masks_cpu = num_decode_draft_tokens_cpu >= 0
        num_spec_decodes = int(spec_sequence_masks_cpu.sum())
        num_spec_decode_tokens = int(num_decode_draft_tokens_cpu.clamp(min=0).sum()) + num_spec_decodes
        spec_query_start_loc = m.query_start_loc[: num_spec_decodes + 1]
        return GDNAttentionMetadata(
            num_prefills=0,
            num_decodes=m.num_reqs - num_spec_decodes,
            num_spec_decodes=num_spec_decodes,
            num_spec_decode_tokens=num_spec_decode_tokens,
            spec_query_start_loc=spec_query_start_loc,
            num_accepted_tokens=num_accepted_tokens,
        )

    def build_for_cudagraph_capture(self, common_attn_metadata):
        m = common_attn_metadata
        assert (
            m.num_reqs <= self.decode_cudagraph_max_bs
            and m.num_actual_tokens <= self.decode_cudagraph_max_bs * (self.num_spec + 1)
        ), "GDN only supports decode-only full CUDAGraph capture."
        num_accepted_tokens = torch.diff(m.query_start_loc)
        num_decode_draft_tokens_cpu = (num_accepted_tokens - 1).cpu()  # want: D
        return self.build(0, m, num_accepted_tokens, num_decode_draft_tokens_cpu)


class GDNAttentionMetadataBuilderFixed(GDNAttentionMetadataBuilder):
    def build_for_cudagraph_capture(self, common_attn_metadata):
        m = common_attn_metadata
        assert (
            m.num_reqs <= self.decode_cudagraph_max_bs
            and m.num_actual_tokens <= self.decode_cudagraph_max_bs * (self.num_spec + 1)
        ), "GDN only supports decode-only full CUDAGraph capture."
        num_accepted_tokens = torch.diff(m.query_start_loc)
        num_decode_draft_tokens_cpu = torch.diff(m.query_start_loc_cpu).sub_(1)
        assert num_decode_draft_tokens_cpu.shape == num_accepted_tokens.shape
        return self.build(0, m, num_accepted_tokens, num_decode_draft_tokens_cpu)


if __name__ == "__main__":
    num_reqs, num_spec = 4, 2
    qsl = torch.arange(0, (num_reqs + 1) * (num_spec + 1), num_spec + 1, dtype=torch.int32)
    m = CommonAttentionMetadata(
        query_start_loc=qsl.clone(),
        query_start_loc_cpu=qsl,
        seq_lens=torch.full((num_reqs,), 16, dtype=torch.int32),
        num_reqs=num_reqs,
        num_actual_tokens=num_reqs * (num_spec + 1),
    )
    a = GDNAttentionMetadataBuilder(num_spec).build_for_cudagraph_capture(m)
    b = GDNAttentionMetadataBuilderFixed(num_spec).build_for_cudagraph_capture(m)
    assert a.num_spec_decodes == b.num_spec_decodes == num_reqs
    assert a.num_spec_decode_tokens == b.num_spec_decode_tokens == num_reqs * (num_spec + 1)
    assert torch.equal(a.num_accepted_tokens, b.num_accepted_tokens)
    print("ok")
