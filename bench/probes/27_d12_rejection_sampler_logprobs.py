# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/31336 — RejectionSampler._get_logprobs_tensors (run every spec-decode step when logprobs are requested) selected accepted tokens with `accepted_mask.nonzero(...)`, `cu_num_sampled_tokens.repeat_interleave(num_accepted_tokens)` and `sampled_token_ids[accepted_mask]` (data-dependent shapes -> CPU-GPU syncs that break async scheduling); the fix computes fixed-shape indices for all draft slots and filters rejected ones later on the host.
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch
import torch.nn as nn

PLACEHOLDER_TOKEN_ID = -1


class LogprobsTensors(NamedTuple):
    logprob_token_ids: torch.Tensor
    logprobs: torch.Tensor
    selected_token_ranks: torch.Tensor


@dataclass
class SpecDecodeMetadata:
    draft_token_ids: torch.Tensor
    num_draft_tokens: list[int]
    cu_num_draft_tokens: torch.Tensor
    cu_num_sampled_tokens: torch.Tensor
    target_logits_indices: torch.Tensor
    bonus_logits_indices: torch.Tensor
    logits_indices: torch.Tensor
    max_spec_len: int

    @classmethod
    def make_dummy(cls, draft_token_ids: list[list[int]], device: torch.device) -> "SpecDecodeMetadata":
        num_draft_tokens = [len(ids) for ids in draft_token_ids]
        num_sampled_tokens = [len(ids) + 1 for ids in draft_token_ids]
        flat = [t for ids in draft_token_ids for t in ids]
        cu_d = torch.tensor(num_draft_tokens, device=device).cumsum(0).to(torch.int32)
        cu_s = torch.tensor(num_sampled_tokens, device=device).cumsum(0).to(torch.int32)
        target_idx, bonus_idx, start = [], [], 0
        for n in num_sampled_tokens:
            target_idx.extend(range(start, start + n - 1))
            bonus_idx.append(start + n - 1)
            start += n
        return cls(
            draft_token_ids=torch.tensor(flat, dtype=torch.int32, device=device),
            num_draft_tokens=num_draft_tokens,
            cu_num_draft_tokens=cu_d,
            cu_num_sampled_tokens=cu_s,
            target_logits_indices=torch.tensor(target_idx, dtype=torch.int32, device=device),
            bonus_logits_indices=torch.tensor(bonus_idx, dtype=torch.int32, device=device),
            logits_indices=torch.arange(start, dtype=torch.int32, device=device),
            max_spec_len=max(num_draft_tokens),
        )


@dataclass
class SamplingMetadata:
    max_num_logprobs: Optional[int]
    all_greedy: bool = True


@dataclass
class SamplerOutput:
    sampled_token_ids: torch.Tensor
    logprobs_tensors: Optional[LogprobsTensors]


def batched_count_greater_than(x: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    return (x >= values).sum(-1)


class Sampler(nn.Module):
    def compute_logprobs(self, logits: torch.Tensor) -> torch.Tensor:
        return logits.log_softmax(dim=-1, dtype=torch.float32)

    @staticmethod
    def gather_logprobs(logprobs: torch.Tensor, num_logprobs: int, token_ids: torch.Tensor) -> LogprobsTensors:
        assert token_ids.dtype == torch.int64
        topk_logprobs, topk_indices = torch.topk(logprobs, num_logprobs, dim=-1)
        token_ids = token_ids.unsqueeze(-1)
        token_logprobs = logprobs.gather(-1, token_ids)
        token_ranks = batched_count_greater_than(logprobs, token_logprobs)
        indices = torch.cat((token_ids, topk_indices), dim=1)
        logprobs = torch.cat((token_logprobs, topk_logprobs), dim=1)
        indices = indices.to(torch.int32)
        return LogprobsTensors(indices, logprobs, token_ranks)

    def forward(self, logits: torch.Tensor, sampling_metadata: SamplingMetadata) -> SamplerOutput:
        return SamplerOutput(logits.argmax(dim=-1, keepdim=True).to(torch.int32), None)


def rejection_sample_greedy(metadata: SpecDecodeMetadata, target_logits: torch.Tensor, bonus_token_ids: torch.Tensor):
    """Stand-in for vLLM's Triton `rejection_greedy_sample_kernel` (sync-free tensor ops)."""
    batch_size = len(metadata.num_draft_tokens)
    output_token_ids = torch.full((batch_size, metadata.max_spec_len + 1), PLACEHOLDER_TOKEN_ID,
                                  dtype=torch.int32, device=target_logits.device)
    target_argmax = target_logits.argmax(dim=-1).to(torch.int32)
    start = 0
    for i, n in enumerate(metadata.num_draft_tokens):
        draft = metadata.draft_token_ids[start:start + n]
        target = target_argmax[start:start + n]
        keep = torch.cat([target.new_ones(1), torch.cumprod((draft == target).to(torch.int32), 0)]).bool()
        vals = torch.cat([target, bonus_token_ids[i]])
        output_token_ids[i, : n + 1] = torch.where(keep, vals, PLACEHOLDER_TOKEN_ID)
        start += n
    return output_token_ids


class RejectionSampler(nn.Module):
    def __init__(self, sampler: Sampler, fixed: bool = False):
        super().__init__()
        self.sampler = sampler
        self.is_logits_logprobs_mode = False
        self.fixed = fixed

    def forward(self, metadata: SpecDecodeMetadata, draft_probs, logits: torch.Tensor,
                sampling_metadata: SamplingMetadata) -> SamplerOutput:
        bonus_logits_indices = metadata.bonus_logits_indices
        target_logits_indices = metadata.target_logits_indices

        bonus_logits = logits[bonus_logits_indices]
        bonus_sampler_output = self.sampler(logits=bonus_logits, sampling_metadata=sampling_metadata)
        bonus_token_ids = bonus_sampler_output.sampled_token_ids

        raw_target_logits = logits[target_logits_indices]
        target_logits = raw_target_logits.to(torch.float32)

        output_token_ids = rejection_sample_greedy(metadata, target_logits, bonus_token_ids)

        logprobs_tensors = None
        if sampling_metadata.max_num_logprobs is not None:
            get = self._get_logprobs_tensors_fixed if self.fixed else self._get_logprobs_tensors
            logprobs_tensors = get(
                sampling_metadata.max_num_logprobs,
                metadata,
                logits,
                raw_target_logits,
                bonus_logits,
                output_token_ids,
            )
        return SamplerOutput(sampled_token_ids=output_token_ids, logprobs_tensors=logprobs_tensors)

    def _get_logprobs_tensors(
        self,
        max_num_logprobs: int,
        metadata: SpecDecodeMetadata,
        logits: torch.Tensor,
        target_logits: torch.Tensor,
        bonus_logits: torch.Tensor,
        sampled_token_ids: torch.Tensor,
    ) -> LogprobsTensors:
        cu_num_sampled_tokens = torch.zeros_like(metadata.cu_num_sampled_tokens)
        cu_num_sampled_tokens[1:] = metadata.cu_num_sampled_tokens[:-1]

        # Collect target and bonus logits.
        bonus_logits_indices = metadata.bonus_logits_indices
        target_logits_indices = metadata.target_logits_indices
        final_logits = torch.zeros_like(logits, dtype=torch.float32)
        final_logits[target_logits_indices] = target_logits.to(torch.float32)
        final_logits[bonus_logits_indices] = bonus_logits.to(torch.float32)

        # Compute accepted token indices.
        accepted_mask = sampled_token_ids != PLACEHOLDER_TOKEN_ID
        num_accepted_tokens = accepted_mask.sum(dim=-1)
        accepted_logit_indices = accepted_mask.nonzero(as_tuple=True)[1]  # want: D
        accepted_logit_indices += cu_num_sampled_tokens.repeat_interleave(  # want: D
            num_accepted_tokens
        )

        # Compute logprobs for accepted tokens.
        accepted_logits = final_logits[accepted_logit_indices]
        accepted_logprobs = (
            accepted_logits
            if self.is_logits_logprobs_mode
            else self.sampler.compute_logprobs(accepted_logits)
        )
        accepted_tokens = sampled_token_ids[accepted_mask]  # want: D
        return self.sampler.gather_logprobs(
            accepted_logprobs,
            max_num_logprobs,
            accepted_tokens.to(torch.int64),
        )

    def _get_logprobs_tensors_fixed(
        self,
        max_num_logprobs: int,
        metadata: SpecDecodeMetadata,
        logits: torch.Tensor,
        target_logits: torch.Tensor,
        bonus_logits: torch.Tensor,
        sampled_token_ids: torch.Tensor,
    ) -> LogprobsTensors:
        cu_num_sampled_tokens = torch.zeros_like(metadata.cu_num_sampled_tokens)
        cu_num_sampled_tokens[1:] = metadata.cu_num_sampled_tokens[:-1]

        bonus_logits_indices = metadata.bonus_logits_indices
        target_logits_indices = metadata.target_logits_indices
        final_logits = torch.zeros_like(logits, dtype=torch.float32)
        final_logits[target_logits_indices] = target_logits.to(torch.float32)
        final_logits[bonus_logits_indices] = bonus_logits.to(torch.float32)

        # NOTE: To avoid cpu-gpu synchronization, we now simply compute indices for
        # all draft tokens, including the rejected ones. The rejected tokens will
        # be filtered out in the `parse_output`.
        logit_start_indices = cu_num_sampled_tokens
        offsets = torch.arange(
            sampled_token_ids.shape[-1],
            device=logit_start_indices.device,
            dtype=logit_start_indices.dtype,
        )
        accepted_logit_indices = (
            logit_start_indices.unsqueeze(1) + offsets.unsqueeze(0)
        ).flatten()
        accepted_logit_indices.clamp_(max=final_logits.shape[0] - 1)
        accepted_tokens = sampled_token_ids.clone().flatten()
        # we replace rejected token ids with 0 to avoid gather_logprobs error
        accepted_tokens[accepted_tokens == PLACEHOLDER_TOKEN_ID] = 0

        accepted_logits = final_logits[accepted_logit_indices]
        accepted_logprobs = (
            accepted_logits
            if self.is_logits_logprobs_mode
            else self.sampler.compute_logprobs(accepted_logits)
        )
        return self.sampler.gather_logprobs(
            accepted_logprobs,
            max_num_logprobs,
            accepted_tokens.to(torch.int64),
        )


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cpu")
    vocab = 64
    sampler = Sampler()
    rs, rs_fixed = RejectionSampler(sampler), RejectionSampler(sampler, fixed=True)
    for step in range(4):  # decode steps
        drafts = [[int(t) for t in torch.randint(0, vocab, (n,))] for n in (2, 3)]
        md = SpecDecodeMetadata.make_dummy(drafts, device)
        logits = torch.randn(int(md.logits_indices.numel()), vocab, device=device)
        sm = SamplingMetadata(max_num_logprobs=3)
        out = rs(md, None, logits, sm)
        out_f = rs_fixed(md, None, logits, sm)
    print(out.sampled_token_ids.tolist(), out.logprobs_tensors.logprobs.shape, out_f.logprobs_tensors.logprobs.shape)
