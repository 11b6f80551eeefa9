# source: huggingface/transformers https://github.com/huggingface/transformers/issues/34796 (fix PR #34813) — from v4.45 _sample() did next_token_logits = outputs.logits.clone()[:, -1, :].float(): the clone copies the whole [B, L, V] prefill logits and the [:, -1, :] slice is a view of that copy (.float() is a no-op on the fp32 logits the models return), so the step's logits, and raw_logits with output_logits=True, pinned a full extra copy; fix: outputs.logits[:, -1, :].clone().float()
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
from torch import nn


@dataclass
class CausalLMOutput:
    logits: torch.Tensor
    past_key_values: Optional[torch.Tensor] = None


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, past_key_values=None):
        h = self.embed(input_ids)
        if past_key_values is not None:
            h = h + past_key_values.mean(dim=1, keepdim=True)
        past = h if past_key_values is None else torch.cat([past_key_values, h], dim=1)
        return CausalLMOutput(logits=self.lm_head(h).float(), past_key_values=past)


@torch.no_grad()
def sample(model, input_ids, max_new_tokens, output_logits=False) -> Tuple[torch.Tensor, Optional[tuple]]:
    raw_logits = () if output_logits else None
    past = None
    for _ in range(max_new_tokens):
        model_inputs = input_ids if past is None else input_ids[:, -1:]
        outputs = model(model_inputs, past_key_values=past)
        past = outputs.past_key_values
        next_token_logits = outputs.logits.clone()[:, -1, :].float()
        if output_logits:
            raw_logits += (next_token_logits,)  # want: A
        next_tokens = torch.argmax(next_token_logits, dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
    return input_ids, raw_logits


@torch.no_grad()
def sample_fixed(model, input_ids, max_new_tokens, output_logits=False):
    raw_logits = () if output_logits else None
    past = None
    for _ in range(max_new_tokens):
        outputs = model(input_ids if past is None else input_ids[:, -1:], past_key_values=past)
        past = outputs.past_key_values
        next_token_logits = outputs.logits[:, -1, :].clone().float()
        if output_logits:
            raw_logits += (next_token_logits,)
        input_ids = torch.cat([input_ids, next_token_logits.argmax(-1)[:, None]], dim=-1)
    return input_ids, raw_logits


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyCausalLM()
    prompt = torch.randint(0, 50, (2, 40))
    ids_bug, raw_bug = sample(model, prompt, 4, output_logits=True)
    ids_fix, raw_fix = sample_fixed(model, prompt, 4, output_logits=True)
    assert torch.equal(ids_bug, ids_fix)
    assert all(torch.equal(a, b) for a, b in zip(raw_bug, raw_fix))
    step_bytes = 2 * 50 * 4
    assert raw_bug[0].untyped_storage().nbytes() == 40 * step_bytes  # the whole cloned prefill logits
    assert raw_fix[0].untyped_storage().nbytes() == step_bytes
    print("ok: the kept prefill logits were a slice of a full-size clone")
