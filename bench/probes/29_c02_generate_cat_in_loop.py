# source: Lightning-AI/lit-llama https://github.com/Lightning-AI/lit-llama/pull/4 — generate() appended each sampled token with `idx = torch.cat((idx, idx_next), dim=1)`, re-allocating and copying the whole running sequence every step; the fix allocates an empty (B, T + max_new_tokens) buffer once and writes the new column in place.
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab_size=50, n_embd=16):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        x = self.wte(idx).cumsum(dim=1)
        return self.lm_head(x)


@torch.no_grad()
def generate(model, idx, max_new_tokens, max_seq_length, temperature=1.0, top_k=None):
    """Takes a conditioning sequence (prompt) as input and continues to generate as many tokens as requested."""
    seen_ptrs = set()
    for _ in range(max_new_tokens):
        # if the sequence context is growing too long we must crop it at max_seq_length
        idx_cond = idx if idx.size(1) <= max_seq_length else idx[:, -max_seq_length:]

        # forward
        logits = model(idx_cond)
        logits = logits[:, -1] / temperature

        # optionally crop the logits to only the top k options
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits = torch.where(logits < v[:, [-1]], -float("Inf"), logits)

        probs = torch.nn.functional.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)

        # append sampled index to the running sequence and continue
        idx = torch.cat((idx, idx_next), dim=1)  # want: C
        seen_ptrs.add(idx.data_ptr())

    return idx, len(seen_ptrs)


@torch.no_grad()
def generate_fixed(model, idx, max_new_tokens, max_seq_length, temperature=1.0, top_k=None):
    B, T = idx.shape
    T_new = T + max_new_tokens
    empty = torch.empty(B, T_new, dtype=idx.dtype, device=idx.device)
    empty[:, :T] = idx
    idx = empty
    seen_ptrs = set()

    # generate max_new_tokens tokens
    for t in range(T, T_new):
        # ignore the not-filled-yet tokens
        idx_cond = idx[:, :t]
        # if the sequence context is growing too long we must crop it at max_seq_length
        idx_cond = idx_cond if t <= max_seq_length else idx_cond[:, -max_seq_length:]

        # forward
        logits = model(idx_cond)
        logits = logits[:, -1] / temperature

        # optionally crop the logits to only the top k options
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits = torch.where(logits < v[:, [-1]], -float("Inf"), logits)

        probs = torch.nn.functional.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)

        # write the new column
        idx[:, t:t + 1] = idx_next
        seen_ptrs.add(idx.data_ptr())

    return idx, len(seen_ptrs)


if __name__ == "__main__":
    model = TinyLM().eval()
    prompt = torch.randint(0, 50, (2, 5))

    torch.manual_seed(1)
    out_a, n_buf_a = generate(model, prompt, max_new_tokens=20, max_seq_length=64, top_k=5)
    torch.manual_seed(1)
    out_b, n_buf_b = generate_fixed(model, prompt, max_new_tokens=20, max_seq_length=64, top_k=5)

    assert torch.equal(out_a, out_b), "same samples expected"
    print("distinct sequence buffers: buggy", n_buf_a, "fixed", n_buf_b)
    assert n_buf_a > 1 and n_buf_b == 1
