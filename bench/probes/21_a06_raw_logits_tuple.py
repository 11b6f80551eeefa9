# source: huggingface/transformers https://github.com/huggingface/transformers/pull/30536 — generate() kept next_token_logits = outputs.logits[:, -1, :] (in the raw_logits tuple with output_logits=True, and past the step), a view of the prefill logits [B, L, V]; fix: outputs.logits[:, -1, :].clone() ("avoid keeping a hanging ref to outputs.logits")
import torch
from torch import nn


@torch.no_grad()
def greedy_decode(model: nn.Module, input_ids: torch.Tensor, max_new_tokens: int, output_logits: bool = False):
    raw_logits = ()
    past_key_values = None
    step_input = input_ids
    for _ in range(max_new_tokens):
        outputs = model(step_input, past_key_values=past_key_values)
        past_key_values = outputs["past_key_values"]
        next_token_logits = outputs["logits"][:, -1, :]
        if output_logits:
            raw_logits += (next_token_logits,)  # want: A
        next_tokens = next_token_logits.argmax(dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        step_input = next_tokens[:, None]
    return {"sequences": input_ids, "logits": raw_logits if output_logits else None}


@torch.no_grad()
def greedy_decode_fixed(model: nn.Module, input_ids: torch.Tensor, max_new_tokens: int, output_logits: bool = False):
    raw_logits = ()
    past_key_values = None
    step_input = input_ids
    for _ in range(max_new_tokens):
        outputs = model(step_input, past_key_values=past_key_values)
        past_key_values = outputs["past_key_values"]
        next_token_logits = outputs["logits"][:, -1, :].clone()
        if output_logits:
            raw_logits += (next_token_logits,)
        next_tokens = next_token_logits.argmax(dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        step_input = next_tokens[:, None]
    return {"sequences": input_ids, "logits": raw_logits if output_logits else None}


class TinyLM(nn.Module):
    def __init__(self, vocab=512, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids, past_key_values=None):
        hidden = self.embed(ids)
        return {"logits": self.lm_head(hidden), "past_key_values": past_key_values}


if __name__ == "__main__":
    lm = TinyLM()
    prompt = torch.randint(0, 512, (2, 64))
    out = greedy_decode(lm, prompt, 4, output_logits=True)
    first = out["logits"][0]
    assert first.untyped_storage().nbytes() == 2 * 64 * 512 * 4  # the whole prefill logits
    fixed = greedy_decode_fixed(lm, prompt, 4, output_logits=True)["logits"][0]
    assert fixed.untyped_storage().nbytes() == 2 * 512 * 4
    assert torch.equal(out["sequences"], greedy_decode_fixed(lm, prompt, 4)["sequences"])
    print("ok")
