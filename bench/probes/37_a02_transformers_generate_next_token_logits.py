# source: huggingface/transformers https://github.com/huggingface/transformers/pull/31292 — In GenerationMixin._sample, `next_token_logits = outputs.logits[:, -1, :]` is a view of the full [batch, seq, vocab] logits, and with output_logits it is pushed into the raw_logits tuple that lives for the whole decode loop, so the first (prefill) iteration's full-prompt logits are never freed. The PR clones the last-position slice ("Clone is needed to avoid keeping a hanging ref to outputs.logits which may be very large for first iteration") and drops `outputs`.
import torch
from torch import nn


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=512, hidden=32):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids, past_length=0):
        hidden_states = torch.cumsum(self.embed_tokens(input_ids), dim=1)
        return {"logits": self.lm_head(hidden_states), "past_length": past_length + input_ids.shape[1]}


class GenerationMixin:
    def prepare_inputs_for_generation(self, input_ids, past_length):
        if past_length:
            return {"input_ids": input_ids[:, past_length:], "past_length": past_length}
        return {"input_ids": input_ids, "past_length": 0}

    def _sample(self, model, input_ids, max_new_tokens, output_logits=True):
        raw_logits = () if output_logits else None
        past_length = 0
        for _ in range(max_new_tokens):
            model_inputs = self.prepare_inputs_for_generation(input_ids, past_length)
            outputs = model(**model_inputs)
            next_token_logits = outputs["logits"][:, -1, :]  # want: A
            if output_logits:
                raw_logits += (next_token_logits,)  # want: A
            next_tokens = torch.argmax(next_token_logits, dim=-1)
            past_length = outputs["past_length"]
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        return input_ids, raw_logits


class GenerationMixinFixed(GenerationMixin):
    def _sample(self, model, input_ids, max_new_tokens, output_logits=True):
        raw_logits = () if output_logits else None
        past_length = 0
        for _ in range(max_new_tokens):
            model_inputs = self.prepare_inputs_for_generation(input_ids, past_length)
            outputs = model(**model_inputs)
            # Clone is needed to avoid keeping a hanging ref to outputs.logits which may be very large for first iteration
            # (the clone itself is always small)
            next_token_logits = outputs["logits"][:, -1, :].clone()
            if output_logits:
                raw_logits += (next_token_logits,)
            next_tokens = torch.argmax(next_token_logits, dim=-1)
            past_length = outputs["past_length"]
            del outputs
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        return input_ids, raw_logits


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyCausalLM().eval()
    prompt = torch.randint(0, 512, (2, 96))
    with torch.no_grad():
        ids, logits = GenerationMixin()._sample(model, prompt, max_new_tokens=4)
        ids_fixed, logits_fixed = GenerationMixinFixed()._sample(model, prompt, max_new_tokens=4)
    first = logits[0]
    assert first.untyped_storage().nbytes() == 2 * 96 * 512 * first.element_size()
    assert first.untyped_storage().nbytes() > first.numel() * first.element_size()
    assert logits_fixed[0].untyped_storage().nbytes() == logits_fixed[0].numel() * logits_fixed[0].element_size()
    assert torch.equal(ids, ids_fixed)
    assert all(torch.equal(a, b) for a, b in zip(logits, logits_fixed))
    print("ok")
