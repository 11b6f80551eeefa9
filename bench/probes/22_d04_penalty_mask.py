# source: vllm-project/vllm PR #16436 (and sgl-project/sglang PR #28397) — repetition / min-new-tokens penalties used boolean-mask indexing (`logits[logits > 0] /= ...`, `logits[mask] += pen[mask]`), a nonzero() host sync on every decode step
import torch
from torch import nn


def bin_counts_and_mask(tokens: torch.Tensor, vocab_size: int):
    counts = torch.zeros((tokens.shape[0], vocab_size + 1), dtype=torch.long, device=tokens.device)
    counts.scatter_add_(1, tokens, torch.ones_like(tokens))
    counts = counts[:, :vocab_size]
    return counts, counts > 0


def apply_penalties(logits, prompt_ids, output_ids, presence, frequency, repetition):
    vocab = logits.shape[1]
    _, prompt_mask = bin_counts_and_mask(prompt_ids, vocab)
    out_counts, out_mask = bin_counts_and_mask(output_ids, vocab)
    seen = prompt_mask | out_mask
    rep = repetition.unsqueeze(1).expand(-1, vocab)
    logits[logits > 0] /= torch.where(seen, rep, 1.0)[logits > 0]  # want: D
    logits[logits <= 0] *= torch.where(seen, rep, 1.0)[logits <= 0]  # want: D
    logits -= frequency.unsqueeze(1) * out_counts
    logits -= presence.unsqueeze(1) * out_mask
    return logits


def apply_penalties_fixed(logits, prompt_ids, output_ids, presence, frequency, repetition):
    vocab = logits.shape[1]
    _, prompt_mask = bin_counts_and_mask(prompt_ids, vocab)
    out_counts, out_mask = bin_counts_and_mask(output_ids, vocab)
    pen = torch.where(prompt_mask | out_mask, repetition.unsqueeze(1), 1.0)
    logits *= torch.where(logits > 0, 1.0 / pen, pen)
    logits -= frequency.unsqueeze(1) * out_counts + presence.unsqueeze(1) * out_mask
    return logits


class MinNewTokensPenalizer:
    def __init__(self, min_new_tokens, stop_token_ids, vocab_size, device):
        n = len(min_new_tokens)
        self.min_new_tokens = torch.tensor(min_new_tokens, device=device).unsqueeze(1)
        pen = torch.zeros(n, vocab_size + 1, device=device)
        pen.scatter_(1, stop_token_ids, float("-inf"))
        self.stop_token_penalties = pen[:, :vocab_size]
        self.len_output_tokens = torch.zeros(n, 1, dtype=torch.long, device=device)
        # once, at setup: fine
        self.active = bool((self.min_new_tokens > 0).any())

    def cumulate_output_tokens(self, next_ids):
        self.len_output_tokens += 1

    def apply(self, logits):
        mask = (self.len_output_tokens < self.min_new_tokens).expand_as(logits)
        logits[mask] += self.stop_token_penalties[mask]  # want: D
        return logits

    def apply_fixed(self, logits):
        mask = self.len_output_tokens < self.min_new_tokens
        logits.add_(torch.where(mask, self.stop_token_penalties, 0.0))
        return logits


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(self.emb(ids).cumsum(1))


@torch.no_grad()
def generate(model, prompt_ids, max_new_tokens, min_new, stop_ids, presence, frequency, repetition):
    vocab = model.head.out_features
    penalizer = MinNewTokensPenalizer(min_new, stop_ids, vocab, prompt_ids.device)
    ids = prompt_ids
    out = prompt_ids[:, :0]
    streamed = [[] for _ in range(prompt_ids.shape[0])]
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :].clone()
        if penalizer.active:
            logits = penalizer.apply(logits)
        logits = apply_penalties(logits, prompt_ids, out if out.shape[1] else prompt_ids[:, :1], presence, frequency, repetition)
        next_ids = logits.argmax(-1)
        penalizer.cumulate_output_tokens(next_ids)
        ids = torch.cat([ids, next_ids[:, None]], 1)
        out = torch.cat([out, next_ids[:, None]], 1)
        for row, tok in zip(streamed, next_ids.tolist()):  # maybe: D (the host needs the ids to stream them; vLLM later overlapped this copy)
            row.append(tok)
    return streamed


if __name__ == "__main__":
    torch.manual_seed(0)
    lm = TinyLM()
    prompt = torch.randint(0, 64, (2, 5))
    n = prompt.shape[0]
    print(generate(lm, prompt, 4, [2, 0], torch.tensor([[1], [1]]), torch.zeros(n), torch.zeros(n), torch.full((n,), 1.2)))
