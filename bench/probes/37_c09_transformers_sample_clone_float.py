# source: huggingface/transformers https://github.com/huggingface/transformers/pull/36748 — GenerationMixin._sample took the last-position logits with `outputs.logits[:, -1, :].clone().float()` followed by `.to(input_ids.device)`, so with bf16/fp16 models every decode step first cloned the slice and then made a second, upcast copy (plus a possible third for the device move). The PR ("Remove extra tensor clone in PyTorch code") folds these into a single `.to(copy=True, dtype=torch.float32, device=input_ids.device)`.
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode


class ModelOutput(dict):
    __getattr__ = dict.__getitem__


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=50, hidden=16, dtype=torch.bfloat16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden).to(dtype)
        self.lm_head = nn.Linear(hidden, vocab, bias=False).to(dtype)

    def forward(self, input_ids):
        return ModelOutput(logits=self.lm_head(torch.tanh(self.embed(input_ids))))


def greedy_processor(input_ids, scores):
    scores[:, 0] = -float("inf")
    return scores


def _sample(model, input_ids, logits_processor, max_new_tokens):
    for _ in range(max_new_tokens):
        outputs = model(input_ids)
        # Clone is needed to avoid keeping a hanging ref to outputs.logits which may be very large for first iteration
        # (the clone itself is always small)
        next_token_logits = outputs.logits[:, -1, :].clone().float()  # want: C
        next_token_logits = next_token_logits.to(input_ids.device)
        next_token_scores = logits_processor(input_ids, next_token_logits)
        next_tokens = torch.argmax(next_token_scores, dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        del outputs
    return input_ids


def _sample_fixed(model, input_ids, logits_processor, max_new_tokens):
    for _ in range(max_new_tokens):
        outputs = model(input_ids)
        # Copy is needed to avoid keeping a hanging ref to outputs.logits which may be very large for first iteration
        # (the clone itself is always small)
        next_token_logits = outputs.logits[:, -1, :].to(copy=True, dtype=torch.float32, device=input_ids.device)
        next_token_scores = logits_processor(input_ids, next_token_logits)
        next_tokens = torch.argmax(next_token_scores, dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        del outputs
    return input_ids


class CopyCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.copies = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten.clone.default, torch.ops.aten._to_copy.default):
            self.copies += 1
        return func(*args, **(kwargs or {}))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyCausalLM().eval()
    prompt = torch.randint(0, 50, (2, 6))
    with torch.no_grad():
        with CopyCounter() as old_count:
            a = _sample(model, prompt, greedy_processor, 4)
        with CopyCounter() as new_count:
            b = _sample_fixed(model, prompt, greedy_processor, 4)
    assert torch.equal(a, b)
    assert old_count.copies == new_count.copies + 4  # one extra full copy of the slice per decode step
    print("ok")
