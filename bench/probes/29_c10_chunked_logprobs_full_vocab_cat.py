# source: NVIDIA-NeMo/RL https://github.com/NVIDIA-NeMo/RL/pull/3124 — the chunked local logprob path upcast each sequence chunk to fp32, took log_softmax, then `torch.cat(chunked_log_probs, dim=1)` rebuilt the full fp32 [batch, seq, vocab] tensor before gathering one logprob per token; the fix slices to the target length, gathers inside each chunk and concatenates only the compact [batch, chunk] results.
import torch


def get_logprobs_from_logits(input_ids, next_token_logits, chunk_size):
    """Per-token log-probabilities of input_ids[:, 1:] under next_token_logits[:, :-1]."""
    seq_len = next_token_logits.shape[1]
    num_chunks = (seq_len + chunk_size - 1) // chunk_size
    chunked_log_probs = []
    for chunk_idx in range(num_chunks):
        chunk_start = chunk_idx * chunk_size
        chunk_end = min(seq_len, (chunk_idx + 1) * chunk_size)
        chunk_logits = next_token_logits[:, chunk_start:chunk_end, :].to(torch.float32)
        log_probs = torch.nn.functional.log_softmax(chunk_logits, dim=-1)
        chunked_log_probs.append(log_probs)
    next_token_logprobs = torch.cat(chunked_log_probs, dim=1)  # want: C

    next_token_logprobs = next_token_logprobs[:, :-1]  # Remove last position's logits
    next_tokens = input_ids[:, 1:]
    token_logprobs = next_token_logprobs.gather(dim=-1, index=next_tokens.unsqueeze(-1)).squeeze(-1)
    return token_logprobs


def get_logprobs_from_logits_fixed(input_ids, next_token_logits, chunk_size):
    """Per-token log-probabilities of input_ids[:, 1:] under next_token_logits[:, :-1]."""
    next_tokens = input_ids[:, 1:]
    target_len = next_tokens.shape[1]
    next_token_logits = next_token_logits[:, :target_len]
    if target_len == 0:
        return next_token_logits.new_zeros((next_token_logits.shape[0], 0), dtype=torch.float32)

    token_logprob_chunks = []
    for chunk_start in range(0, target_len, chunk_size):
        chunk_end = min(target_len, chunk_start + chunk_size)
        chunk_logits = next_token_logits[:, chunk_start:chunk_end, :].to(torch.float32)
        log_probs = torch.nn.functional.log_softmax(chunk_logits, dim=-1)
        chunk_tokens = next_tokens[:, chunk_start:chunk_end]
        token_logprob_chunks.append(log_probs.gather(dim=-1, index=chunk_tokens.unsqueeze(-1)).squeeze(-1))
    return torch.cat(token_logprob_chunks, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    B, S, V = 2, 48, 1024
    logits = torch.randn(B, S, V, dtype=torch.bfloat16)
    ids = torch.randint(0, V, (B, S))

    from torch.utils._python_dispatch import TorchDispatchMode

    class CatBytes(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.bytes = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func is torch.ops.aten.cat.default:
                self.bytes += out.numel() * out.element_size()
            return out

    with CatBytes() as ca:
        lp_a = get_logprobs_from_logits(ids, logits, chunk_size=8)
    with CatBytes() as cb:
        lp_b = get_logprobs_from_logits_fixed(ids, logits, chunk_size=8)
    assert torch.allclose(lp_a, lp_b)
    print("bytes materialised by torch.cat: buggy", ca.bytes, "(full fp32 B*S*V) | fixed", cb.bytes)
    assert ca.bytes == B * S * V * 4 and cb.bytes == B * (S - 1) * 4
