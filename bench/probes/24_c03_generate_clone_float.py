# source: huggingface/transformers PR #36748 ("Remove extra tensor clone", shipped in v4.51) — _sample()/_beam_search() did `outputs.logits[:, -1, :].clone().float()` and then `.to(input_ids.device)` every decode step: for bf16/fp16 logits the clone is a throwaway copy, since .float() copies again; the fix is one `.to(copy=True, dtype=torch.float32, device=...)`
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class CausalLMOutput:
    logits: torch.Tensor


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=16, dtype=torch.bfloat16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, dtype=dtype)
        self.head = nn.Linear(dim, vocab, bias=False, dtype=dtype)

    def forward(self, input_ids):
        h = self.emb(input_ids).cumsum(1)
        return CausalLMOutput(logits=self.head(h))


class TemperatureWarper:
    def __init__(self, t):
        self.t = t

    def __call__(self, input_ids, scores):
        return scores / self.t


@torch.no_grad()
def sample(model, input_ids, max_new_tokens, logits_processor, eos_token_id=None):
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
    scores = ()
    for _ in range(max_new_tokens):
        outputs = model(input_ids)
        # Clone is needed to avoid keeping a hanging ref to outputs.logits which may be very large for first iteration
        # (the clone itself is always small)
        next_token_logits = outputs.logits[:, -1, :].clone().float()  # want: C
        next_token_logits = next_token_logits.to(input_ids.device)  # maybe: C (a third copy when the model sits on another device than input_ids)
        next_token_scores = logits_processor(input_ids, next_token_logits)
        scores += (next_token_scores,)
        next_tokens = torch.argmax(next_token_scores, dim=-1)
        if eos_token_id is not None:
            next_tokens = next_tokens * unfinished + eos_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        if eos_token_id is not None:
            unfinished = unfinished & (next_tokens != eos_token_id).long()
        del outputs
    return input_ids, scores


@torch.no_grad()
def sample_fixed(model, input_ids, max_new_tokens, logits_processor):
    for _ in range(max_new_tokens):
        outputs = model(input_ids)
        # one copy that also upcasts and lands on the right device; still releases outputs.logits
        next_token_logits = outputs.logits[:, -1, :].to(copy=True, dtype=torch.float32, device=input_ids.device)
        next_token_scores = logits_processor(input_ids, next_token_logits)
        next_tokens = torch.argmax(next_token_scores, dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
    return input_ids


@torch.no_grad()
def score_prompt(model, input_ids):
    logits = model(input_ids).logits
    # a one-off upcast of a slice: .float() is the single copy here
    return torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, input_ids[:, 1:, None]).sum()


if __name__ == "__main__":
    torch.manual_seed(0)
    lm = TinyLM()
    prompt = torch.randint(0, 50, (2, 4))
    warp = TemperatureWarper(0.7)
    a, sc = sample(lm, prompt, 5, warp)
    b = sample_fixed(lm, prompt, 5, warp)
    assert torch.equal(a, b) and sc[0].dtype == torch.float32
    x = lm(prompt).logits[:, -1, :]
    c = x.clone()
    assert c.float().data_ptr() != c.data_ptr()  # bf16 -> fp32 copies again after the clone
    print("ok:", a.tolist(), float(score_prompt(lm, prompt)))
