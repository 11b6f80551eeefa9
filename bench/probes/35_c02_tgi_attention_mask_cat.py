# source: huggingface/text-generation-inference https://github.com/huggingface/text-generation-inference/pull/75 — CausalLM.generate_token grew the batch attention mask with `torch.cat([mask, mask.new_ones(bs, 1)], dim=1)` on every decode step (a full re-allocation + copy per token, quadratic over a generation); the fix pre-allocates the mask with `padding_right_offset` extra columns in from_pb and just writes a 1 into the next column each step.
from dataclasses import dataclass
from typing import List

import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask):
        h = self.emb(input_ids) * attention_mask[:, -1:, None].to(torch.float32)
        return self.head(h)


@dataclass
class CausalLMBatch:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    all_input_ids: List[torch.Tensor]
    padding_right_offset: int = 0

    @classmethod
    def from_pb(cls, prompts, max_new_tokens, preallocate):
        input_ids = torch.tensor(prompts)
        mask = torch.ones_like(input_ids)
        if preallocate:
            bs, max_input_length = input_ids.shape
            attention_mask = input_ids.new_zeros((bs, max_input_length + max_new_tokens))
            attention_mask[:, :max_input_length] = mask
            return cls(input_ids, attention_mask, [r for r in input_ids], max_new_tokens)
        return cls(input_ids, mask, [r for r in input_ids])


class CausalLM:
    def __init__(self, model):
        self.model = model

    def generate_token(self, batch):
        with torch.no_grad():
            logits = self.model(batch.input_ids, batch.attention_mask)
        next_ids = logits[:, -1].argmax(-1)
        next_batch_all_input_ids = []
        for all_input_ids, next_id in zip(batch.all_input_ids, next_ids):
            next_batch_all_input_ids.append(torch.cat([all_input_ids, next_id.view(1)]))  # maybe: C (per-request history also regrown each token)
        next_batch_attention_mask = batch.attention_mask
        # Update attention_mask with padding as we added a new token to input_ids
        next_batch_attention_mask = torch.cat(  # want: C
            [next_batch_attention_mask, next_batch_attention_mask.new_ones(next_batch_attention_mask.shape[0], 1)],
            dim=1,
        )
        return CausalLMBatch(next_ids.view(-1, 1), next_batch_attention_mask, next_batch_all_input_ids)


class CausalLMFixed(CausalLM):
    def generate_token(self, batch):
        with torch.no_grad():
            logits = self.model(batch.input_ids, batch.attention_mask[:, : -batch.padding_right_offset])
        next_ids = logits[:, -1].argmax(-1)
        next_batch_all_input_ids = [torch.cat([a, n.view(1)]) for a, n in zip(batch.all_input_ids, next_ids)]
        next_batch_attention_mask = batch.attention_mask
        # Update attention_mask as we added a new token to input_ids
        next_batch_attention_mask[:, -batch.padding_right_offset] = 1
        return CausalLMBatch(next_ids.view(-1, 1), next_batch_attention_mask, next_batch_all_input_ids,
                             batch.padding_right_offset - 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLM()
    prompts = [[1, 2, 3, 4], [5, 6, 7, 8]]
    steps = 32
    b1 = CausalLMBatch.from_pb(prompts, steps, preallocate=False)
    b2 = CausalLMBatch.from_pb(prompts, steps, preallocate=True)
    realloc1 = realloc2 = 0
    for _ in range(steps):
        prev1, prev2 = b1.attention_mask, b2.attention_mask
        b1 = CausalLM(model).generate_token(b1)
        b2 = CausalLMFixed(model).generate_token(b2)
        realloc1 += b1.attention_mask.data_ptr() != prev1.data_ptr()
        realloc2 += b2.attention_mask.data_ptr() != prev2.data_ptr()
    assert torch.equal(torch.stack(b1.all_input_ids), torch.stack(b2.all_input_ids))
    assert torch.equal(b1.attention_mask, b2.attention_mask)
    print(f"attention_mask re-allocations over {steps} steps: buggy={realloc1} fixed={realloc2}")
    assert realloc1 == steps and realloc2 == 0
