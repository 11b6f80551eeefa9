# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/9540 — LogitsProcessor._get_logits upcast the whole [num_pruned_tokens, vocab] logits matrix to fp32 before forward() sliced out the rows it actually needs (the sampled rows and the input-logprob rows), so a bf16 tensor was copied into a 2x larger fp32 one over every gathered row; in RL rollouts this caused occasional OOMs inside the logits processor. The PR keeps _get_logits in the model dtype and defers the fp32 cast until after the logits are sliced.
import dataclasses
from typing import Optional

import torch
import torch.nn as nn


@dataclasses.dataclass
class LogitsMetadata:
    extend_return_logprob: bool = False
    sample_indices: Optional[torch.Tensor] = None
    input_logprob_indices: Optional[torch.Tensor] = None


@dataclasses.dataclass
class LogitsProcessorOutput:
    next_token_logits: torch.Tensor
    input_token_logprobs: Optional[torch.Tensor] = None


class Config:
    vocab_size = 50
    final_logit_softcapping = None


class LogitsProcessor(nn.Module):
    def __init__(self, config, logit_scale: Optional[float] = None):
        super().__init__()
        self.config = config
        self.logit_scale = logit_scale
        self.final_logit_softcapping = getattr(config, "final_logit_softcapping", None)
        self.last_full = None

    def forward(self, input_ids, hidden_states, lm_head, logits_metadata: LogitsMetadata):
        logits = self._get_logits(hidden_states, lm_head, logits_metadata)
        self.last_full = logits
        sample_indices = logits_metadata.sample_indices
        sampled_logits = logits[sample_indices] if sample_indices is not None else logits
        if not logits_metadata.extend_return_logprob:
            return LogitsProcessorOutput(next_token_logits=sampled_logits)

        input_logits = logits[logits_metadata.input_logprob_indices]
        input_logprobs = torch.nn.functional.log_softmax(input_logits, dim=-1)
        return LogitsProcessorOutput(next_token_logits=sampled_logits, input_token_logprobs=input_logprobs)

    def _get_logits(self, hidden_states, lm_head, logits_metadata, embedding_bias=None):
        logits = torch.matmul(hidden_states.to(lm_head.weight.dtype), lm_head.weight.T)
        if self.logit_scale is not None:
            logits.mul_(self.logit_scale)
        logits = logits[:, : self.config.vocab_size].float()  # want: C
        if self.final_logit_softcapping:
            logits = torch.tanh(logits / self.final_logit_softcapping) * self.final_logit_softcapping
        return logits


class LogitsProcessorFixed(LogitsProcessor):
    def forward(self, input_ids, hidden_states, lm_head, logits_metadata: LogitsMetadata):
        logits = self._get_logits(hidden_states, lm_head, logits_metadata)
        self.last_full = logits
        sample_indices = logits_metadata.sample_indices
        sampled_logits = logits[sample_indices] if sample_indices is not None else logits
        sampled_logits = sampled_logits.float()
        if not logits_metadata.extend_return_logprob:
            return LogitsProcessorOutput(next_token_logits=sampled_logits)

        input_logits = logits[logits_metadata.input_logprob_indices].float()
        input_logprobs = torch.nn.functional.log_softmax(input_logits, dim=-1)
        return LogitsProcessorOutput(next_token_logits=sampled_logits, input_token_logprobs=input_logprobs)

    def _get_logits(self, hidden_states, lm_head, logits_metadata, embedding_bias=None):
        logits = torch.matmul(hidden_states.to(lm_head.weight.dtype), lm_head.weight.T)
        if self.logit_scale is not None:
            logits.mul_(self.logit_scale)
        logits = logits[:, : self.config.vocab_size]
        if self.final_logit_softcapping:
            logits = torch.tanh(logits / self.final_logit_softcapping) * self.final_logit_softcapping
        return logits


if __name__ == "__main__":
    torch.manual_seed(0)
    lm_head = nn.Linear(16, 64, bias=False).to(torch.bfloat16)
    hidden = torch.randn(40, 16, dtype=torch.bfloat16)
    meta = LogitsMetadata(
        extend_return_logprob=True,
        sample_indices=torch.tensor([9, 19, 39]),
        input_logprob_indices=torch.tensor([37, 38]),
    )
    with torch.no_grad():
        bug = LogitsProcessor(Config())
        fix = LogitsProcessorFixed(Config())
        out_bug = bug(None, hidden, lm_head, meta)
        out_fix = fix(None, hidden, lm_head, meta)
    assert torch.equal(out_bug.next_token_logits, out_fix.next_token_logits)
    assert torch.allclose(out_bug.input_token_logprobs, out_fix.input_token_logprobs)
    assert bug.last_full.dtype == torch.float32 and bug.last_full.shape == (40, 50)
    assert fix.last_full.dtype == torch.bfloat16
    assert bug.last_full.numel() * bug.last_full.element_size() > 2 * fix.last_full.numel() * fix.last_full.element_size() - 1
    print("ok")
