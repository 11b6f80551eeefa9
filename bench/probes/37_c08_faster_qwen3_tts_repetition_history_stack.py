# source: andimarafioti/faster-qwen3-tts https://github.com/andimarafioti/faster-qwen3-tts/pull/111 — Both fast decode loops rebuilt the repetition-penalty history every step with `torch.stack` over a growing Python list of per-step token tensors (`all_first_tokens`), so each step re-copied the whole history: O(n) work per step and O(n^2) over a generation. The fix writes each consumed token once into a preallocated `[max_new_tokens]` device buffer and passes `apply_repetition_penalty` a slice view of it.
import torch
import torch.nn as nn
import torch.nn.functional as F


def apply_repetition_penalty(logits: torch.Tensor, history: torch.Tensor, repetition_penalty: float, window: int = 50) -> torch.Tensor:
    recent = history[-window:]
    unique_toks = recent.unique()
    tok_logits = logits[..., unique_toks]
    logits[..., unique_toks] = torch.where(tok_logits > 0, tok_logits / repetition_penalty, tok_logits * repetition_penalty)
    return logits


def _sample(logits, temperature, top_k, do_sample, suppress_mask):
    logits = logits.clone()
    logits[..., suppress_mask] = float("-inf")
    if not do_sample:
        return torch.argmax(logits, dim=-1)
    logits = logits / temperature
    if top_k > 0:
        topk_vals, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits[logits < topk_vals[..., -1:]] = float("-inf")
    return torch.multinomial(F.softmax(logits, dim=-1), 1).squeeze(-1)


def fast_generate(talker, codec_head, codec_embed, token, max_new_tokens, repetition_penalty=1.05,
                  temperature=0.9, top_k=50, do_sample=False, suppress_mask=None):
    all_first_tokens = []  # for repetition penalty across chunks
    tokens_out = []
    for step_idx in range(max_new_tokens):
        all_first_tokens.append(token.detach())
        hidden_states = talker(codec_embed(token))
        logits = codec_head(hidden_states)
        if repetition_penalty != 1.0 and all_first_tokens:
            history = torch.stack(all_first_tokens)  # want: C
            logits = apply_repetition_penalty(logits, history, repetition_penalty)
        token = _sample(logits, temperature, top_k, do_sample, suppress_mask)
        tokens_out.append(token)
    return torch.stack(tokens_out)


def fast_generate_fixed(talker, codec_head, codec_embed, token, max_new_tokens, repetition_penalty=1.05,
                        temperature=0.9, top_k=50, do_sample=False, suppress_mask=None):
    history_buf = torch.empty(max_new_tokens, dtype=token.dtype, device=token.device)
    tokens_out = []
    for step_idx in range(max_new_tokens):
        history_buf[step_idx : step_idx + 1].copy_(token.view(1), non_blocking=True)
        hidden_states = talker(codec_embed(token))
        logits = codec_head(hidden_states)
        if repetition_penalty != 1.0:
            logits = apply_repetition_penalty(logits, history_buf[: step_idx + 1], repetition_penalty)
        token = _sample(logits, temperature, top_k, do_sample, suppress_mask)
        tokens_out.append(token)
    return torch.stack(tokens_out)


if __name__ == "__main__":
    torch.manual_seed(0)
    vocab, hidden = 40, 16
    codec_embed = nn.Embedding(vocab, hidden)
    talker = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
    codec_head = nn.Linear(hidden, vocab)
    suppress_mask = torch.zeros(vocab, dtype=torch.bool)
    suppress_mask[-2:] = True
    start = torch.tensor(3)
    with torch.no_grad():
        a = fast_generate(talker, codec_head, codec_embed, start, 20, suppress_mask=suppress_mask)
        b = fast_generate_fixed(talker, codec_head, codec_embed, start, 20, suppress_mask=suppress_mask)
    assert torch.equal(a, b)
    hist = [torch.tensor(i) for i in range(5)]
    s1, s2 = torch.stack(hist), torch.stack(hist)
    assert s1.data_ptr() != s2.data_ptr()  # each step builds a fresh copy of the whole history
    buf = torch.arange(20)
    assert buf[:5].data_ptr() == buf.data_ptr()
    print("ok")
