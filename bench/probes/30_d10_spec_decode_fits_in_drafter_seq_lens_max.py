# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/25884 — GPUModelRunner.execute_model decided whether EAGLE/MTP drafts fit the drafter with `spec_decode_common_attn_metadata.seq_lens.max() + num_spec_tokens <= effective_drafter_max_model_len`, a 0-d GPU tensor then used in a Python `if`: one GPU->CPU sync per decode step that breaks async scheduling + MTP. The fix uses the host mirror `seq_lens_cpu` instead.
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor
    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor
    num_reqs: int
    max_query_len: int


@dataclass
class SpeculativeConfig:
    method: str = "eagle"
    num_speculative_tokens: int = 2
    draft_max_model_len: Optional[int] = None
    disable_padded_drafter_batch: bool = False

    def use_eagle(self):
        return self.method in ("eagle", "eagle3", "mtp")


class EagleProposer(nn.Module):
    def __init__(self, hidden, vocab, k):
        super().__init__()
        self.k = k
        self.fc = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def propose(self, next_token_ids, hidden_states):
        drafts, h = [], hidden_states
        for _ in range(self.k):
            h = torch.tanh(self.fc(h))
            drafts.append(self.lm_head(h).argmax(-1))
        return torch.stack(drafts, dim=1)


class GPUModelRunner:
    def __init__(self, max_model_len, speculative_config, drafter):
        self.max_model_len = max_model_len
        self.speculative_config = speculative_config
        self.drafter = drafter
        self._draft_token_ids = None

    def _drafter_fits(self, spec_decode_common_attn_metadata, effective_drafter_max_model_len):
        return spec_decode_common_attn_metadata and (spec_decode_common_attn_metadata.seq_lens.max() + self.speculative_config.num_speculative_tokens <= effective_drafter_max_model_len)  # want: D

    @torch.inference_mode()
    def execute_model(self, sampled_token_ids, hidden_states, spec_decode_common_attn_metadata):
        def propose_draft_token_ids(sampled_token_ids):
            self._draft_token_ids = self.drafter.propose(sampled_token_ids, hidden_states)

        use_padded_batch_for_eagle = (
            self.speculative_config
            and self.speculative_config.use_eagle()
            and not self.speculative_config.disable_padded_drafter_batch
        )
        effective_drafter_max_model_len = self.max_model_len
        if self.speculative_config and self.speculative_config.draft_max_model_len is not None:
            effective_drafter_max_model_len = self.speculative_config.draft_max_model_len
        input_fits_in_drafter = self._drafter_fits(spec_decode_common_attn_metadata, effective_drafter_max_model_len)
        if use_padded_batch_for_eagle and input_fits_in_drafter:  # maybe: D (bool() of the 0-d GPU tensor is where the host actually blocks)
            # EAGLE speculative decoding can use the GPU sampled tokens
            # as inputs, and does not need to wait for bookkeeping to finish.
            propose_draft_token_ids(sampled_token_ids)
        else:
            self._draft_token_ids = None
        return self._draft_token_ids


class GPUModelRunnerFixed(GPUModelRunner):
    def _drafter_fits(self, spec_decode_common_attn_metadata, effective_drafter_max_model_len):
        return spec_decode_common_attn_metadata and (
            spec_decode_common_attn_metadata.seq_lens_cpu.max() + self.speculative_config.num_speculative_tokens
            <= effective_drafter_max_model_len
        )


def decode(runner_cls, steps, device):
    torch.manual_seed(0)
    runner = runner_cls(64, SpeculativeConfig(), EagleProposer(16, 50, 2).to(device))
    seq_lens_cpu = torch.tensor([5, 9, 30], dtype=torch.int32)
    drafts = []
    for _ in range(steps):
        md = CommonAttentionMetadata(
            query_start_loc=torch.arange(4, dtype=torch.int32, device=device),
            query_start_loc_cpu=torch.arange(4, dtype=torch.int32),
            seq_lens=seq_lens_cpu.to(device, non_blocking=True),
            seq_lens_cpu=seq_lens_cpu,
            num_reqs=3,
            max_query_len=1,
        )
        sampled = torch.randint(0, 50, (3, 1), device=device)
        drafts.append(runner.execute_model(sampled, torch.randn(3, 16, device=device), md))
        seq_lens_cpu = seq_lens_cpu + 3
    return drafts


if __name__ == "__main__":
    dev = torch.device("cpu")
    a, b = decode(GPUModelRunner, 12, dev), decode(GPUModelRunnerFixed, 12, dev)
    assert [x is None for x in a] == [x is None for x in b]
    assert all(torch.equal(x, y) for x, y in zip(a, b) if x is not None)
    print("steps with drafts:", sum(x is not None for x in a), "of", len(a))
