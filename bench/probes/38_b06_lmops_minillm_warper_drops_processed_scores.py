# source: microsoft/LMOps https://github.com/microsoft/LMOps/issues/272 — In MiniLLM's patched GenerationMixin.sample, the non-model-parallel branch computed `next_token_scores = logits_processor(input_ids, next_token_logits)` and then `next_token_scores = logits_warper(input_ids, next_token_logits)`, i.e. the warper was fed the raw logits again. Any processor that returns a new tensor instead of editing the logits in place (e.g. a bad-words ban built on masked_fill) therefore had its result thrown away, and sampling ignored it. Fixed in commit a2cdb362e33f9b3bba2968dca6d3f2845220b382 ("fix next_token_scores") by passing `next_token_scores` to the warper.
import torch
import torch.nn as nn


class NoBadWordsLogitsProcessor:
    def __init__(self, bad_words_ids):
        self.bad_words_ids = bad_words_ids

    def __call__(self, input_ids, scores):
        banned = torch.zeros_like(scores, dtype=torch.bool)
        banned[:, self.bad_words_ids] = True
        return scores.masked_fill(banned, -float("inf"))


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


class TemperatureLogitsWarper:
    def __init__(self, temperature):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class TinyLM(nn.Module):
    def __init__(self, vocab=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, 8)
        self.head = nn.Linear(8, vocab)
        with torch.no_grad():
            self.head.bias[0] = 4.0  # token 0 is the model's favourite

    def forward(self, input_ids):
        return self.head(self.emb(input_ids))


class GenerationMixin:
    def sample(self, input_ids, logits_processor, logits_warper, max_new_tokens):
        for _ in range(max_new_tokens):
            outputs = self.model(input_ids)
            next_token_logits = outputs[:, -1, :]
            next_token_scores = logits_processor(input_ids, next_token_logits)  # maybe: B (result is overwritten below)
            next_token_scores = logits_warper(input_ids, next_token_logits)  # want: B
            probs = nn.functional.softmax(next_token_scores.float(), dim=-1)
            next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        return input_ids


class GenerationMixinFixed(GenerationMixin):
    def sample(self, input_ids, logits_processor, logits_warper, max_new_tokens):
        for _ in range(max_new_tokens):
            outputs = self.model(input_ids)
            next_token_logits = outputs[:, -1, :]
            next_token_scores = logits_processor(input_ids, next_token_logits)
            next_token_scores = logits_warper(input_ids, next_token_scores)
            probs = nn.functional.softmax(next_token_scores.float(), dim=-1)
            next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        return input_ids


def _generate(mixin_cls):
    torch.manual_seed(0)
    gen = mixin_cls()
    gen.model = TinyLM()
    prompt = torch.tensor([[1, 2], [3, 4]])
    processors = LogitsProcessorList([NoBadWordsLogitsProcessor(bad_words_ids=[0])])
    return gen.sample(prompt, processors, TemperatureLogitsWarper(0.7), max_new_tokens=12)[:, 2:]


if __name__ == "__main__":
    out = _generate(GenerationMixin)
    assert (out == 0).any(), "buggy: the banned token is still sampled"
    out = _generate(GenerationMixinFixed)
    assert not (out == 0).any(), "fixed: processor output reaches the sampler"
    print("ok")
