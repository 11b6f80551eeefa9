# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/40654 — `EagleProposer.prepare_inputs`, run on every speculative-decoding step to build the drafter's attention metadata, computed `new_seq_lens_cpu = common_attn_metadata.seq_lens_cpu - num_rejected_tokens`; under async scheduling `seq_lens_cpu` is only materialised by copying the device `seq_lens` to the host, so this forced a GPU->CPU sync each step. The PR ("[Core] Avoid seq_lens_cpu GPU->CPU sync") subtracts the rejected tokens from `seq_lens_cpu_upper_bound`, the host-side value the runner already has (equal to the device seq_lens when all drafts are assumed accepted).
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor
    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    num_reqs: int
    num_actual_tokens: int
    max_query_len: int
    seq_lens_cpu_upper_bound: Optional[torch.Tensor] = None
    _seq_lens_cpu: Optional[torch.Tensor] = None

    @property
    def seq_lens_cpu(self) -> torch.Tensor:
        if self._seq_lens_cpu is None:
            self._seq_lens_cpu = self.seq_lens.to("cpu")  # want: D
        return self._seq_lens_cpu


class EagleProposer:
    def __init__(self, device):
        self.device = device

    def _host_seq_lens(self, common_attn_metadata):
        return common_attn_metadata.seq_lens_cpu  # maybe: D (property that copies device seq_lens to the host)

    def prepare_inputs(self, common_attn_metadata, sampled_token_ids, num_draft_tokens):
        num_rejected_tokens = [
            n + 1 - len(sampled_token_ids[i]) if n > 0 else 0 for i, n in enumerate(num_draft_tokens)
        ]
        num_rejected_tokens = torch.tensor(num_rejected_tokens, dtype=torch.int32)
        device = common_attn_metadata.query_start_loc.device
        query_start_loc_cpu = common_attn_metadata.query_start_loc_cpu
        new_seq_lens_cpu = self._host_seq_lens(common_attn_metadata) - num_rejected_tokens

        new_query_len_per_req = query_start_loc_cpu[1:] - query_start_loc_cpu[:-1]
        new_num_tokens_per_req = new_query_len_per_req - num_rejected_tokens
        new_num_tokens_per_req_np = new_num_tokens_per_req.numpy()
        new_query_start_loc_cpu = torch.zeros(query_start_loc_cpu.shape, dtype=torch.int32)
        new_query_start_loc_np = new_query_start_loc_cpu.numpy()
        np.cumsum(new_num_tokens_per_req_np, out=new_query_start_loc_np[1:])
        total_num_tokens = int(new_query_start_loc_np[-1])

        new_query_start_locs_expanded = np.repeat(new_query_start_loc_np[:-1], new_num_tokens_per_req_np)
        token_offsets = np.arange(total_num_tokens) - new_query_start_locs_expanded
        old_query_start_locs_expanded = np.repeat(query_start_loc_cpu[:-1].numpy(), new_num_tokens_per_req_np)
        token_indices_np = token_offsets + old_query_start_locs_expanded
        token_indices = torch.from_numpy(token_indices_np).to(device, non_blocking=True)

        spec_common_attn_metadata = CommonAttentionMetadata(
            query_start_loc=new_query_start_loc_cpu.to(device, non_blocking=True),
            query_start_loc_cpu=new_query_start_loc_cpu,
            seq_lens=new_seq_lens_cpu.to(device, non_blocking=True),
            num_reqs=common_attn_metadata.num_reqs,
            num_actual_tokens=total_num_tokens,
            max_query_len=int(new_query_len_per_req.max()),
            seq_lens_cpu_upper_bound=new_seq_lens_cpu,
            _seq_lens_cpu=new_seq_lens_cpu,
        )
        return spec_common_attn_metadata, token_indices


class EagleProposerFixed(EagleProposer):
    def _host_seq_lens(self, common_attn_metadata):
        assert common_attn_metadata.seq_lens_cpu_upper_bound is not None
        return common_attn_metadata.seq_lens_cpu_upper_bound


def make_metadata():
    query_lens = torch.tensor([3, 1, 3, 3], dtype=torch.int32)
    qsl = torch.zeros(5, dtype=torch.int32)
    qsl[1:] = torch.cumsum(query_lens, 0)
    seq_lens_host = torch.tensor([20, 9, 31, 14], dtype=torch.int32)
    return CommonAttentionMetadata(
        query_start_loc=qsl.clone(), query_start_loc_cpu=qsl, seq_lens=seq_lens_host.clone(),
        num_reqs=4, num_actual_tokens=int(qsl[-1]), max_query_len=3, seq_lens_cpu_upper_bound=seq_lens_host,
    )


if __name__ == "__main__":
    sampled = [[5, 6, 7], [8], [9], [1, 2]]
    num_draft = [2, 0, 2, 2]
    a, ia = EagleProposer("cpu").prepare_inputs(make_metadata(), sampled, num_draft)
    b, ib = EagleProposerFixed("cpu").prepare_inputs(make_metadata(), sampled, num_draft)
    assert torch.equal(a.seq_lens, b.seq_lens)
    assert torch.equal(a.query_start_loc, b.query_start_loc)
    assert torch.equal(ia, ib)
    print("ok", a.seq_lens, ia)
