# source: BlinkDL/ChatRWKV https://github.com/BlinkDL/ChatRWKV/commit/8c1d57cfd03ddbd0ee8d9c3e3e5d80ce5ef5b4ce — In the rwkv pip package, `PIPELINE.sample_logits` applied top-k on the torch (GPU) path with `probs[sorted_ids][:-int(top_k)] = 0`. `probs[sorted_ids]` is an advanced-indexing copy, so the zeros were written into a temporary and top-k was silently never applied (only the numpy CPU path did it right). The "bug fix" commit (rwkv 0.1.0) indexes once: `probs[sorted_ids[:-top_k]] = 0`.
import numpy as np
import torch
from torch.nn import functional as F


class PIPELINE_ARGS():
    def __init__(self, temperature=1.0, top_p=1.0, top_k=50, alpha_frequency=0, alpha_presence=0, token_ban=[], token_stop=[]):
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.alpha_frequency = alpha_frequency  # Frequency Penalty (as in GPT-3)
        self.alpha_presence = alpha_presence  # Presence Penalty (as in GPT-3)
        self.token_ban = token_ban  # ban the generation of some tokens
        self.token_stop = token_stop  # stop generation whenever you see any token here


class PIPELINE():
    def __init__(self, model):
        self.model = model

    def sample_logits(self, logits, temperature=1.0, top_p=1.0, top_k=50):
        probs = F.softmax(logits.float(), dim=-1)

        sorted_ids = torch.argsort(probs)
        sorted_probs = probs[sorted_ids]
        sorted_probs = torch.flip(sorted_probs, dims=(0,))
        cumulative_probs = torch.cumsum(sorted_probs, dim=-1).cpu().numpy()
        cutoff = float(sorted_probs[np.argmax(cumulative_probs > top_p)])
        probs[probs < cutoff] = 0
        if top_k < len(probs):
            probs[sorted_ids][:-int(top_k)] = 0  # want: B
        if temperature != 1.0:
            probs = probs ** (1.0 / temperature)
        out = torch.multinomial(probs, num_samples=1)[0]
        return int(out)

    def generate(self, logits_fn, token_count=100, args=PIPELINE_ARGS()):
        all_tokens = []
        for i in range(token_count):
            out = logits_fn(all_tokens)
            for n in args.token_ban:
                out[n] = -float('inf')
            token = self.sample_logits(out, temperature=args.temperature, top_p=args.top_p, top_k=args.top_k)
            if token in args.token_stop:
                break
            all_tokens += [token]
        return all_tokens


class PIPELINE_fixed(PIPELINE):
    def sample_logits(self, logits, temperature=1.0, top_p=1.0, top_k=0):
        probs = F.softmax(logits.float(), dim=-1)
        top_k = int(top_k)
        sorted_ids = torch.argsort(probs)
        sorted_probs = probs[sorted_ids]
        sorted_probs = torch.flip(sorted_probs, dims=(0,))
        cumulative_probs = torch.cumsum(sorted_probs, dim=-1).cpu().numpy()
        cutoff = float(sorted_probs[np.argmax(cumulative_probs > top_p)])
        probs[probs < cutoff] = 0
        if top_k < len(probs) and top_k > 0:
            probs[sorted_ids[:-top_k]] = 0
        if temperature != 1.0:
            probs = probs ** (1.0 / temperature)
        out = torch.multinomial(probs, num_samples=1)[0]
        return int(out)


if __name__ == "__main__":
    base = torch.log(torch.tensor([0.30, 0.25, 0.20, 0.15, 0.10]))
    logits_fn = lambda tokens: base.clone()
    args = PIPELINE_ARGS(temperature=1.0, top_p=0.99, top_k=2)

    torch.manual_seed(0)
    buggy_tokens = PIPELINE(None).generate(logits_fn, token_count=200, args=args)
    torch.manual_seed(0)
    fixed_tokens = PIPELINE_fixed(None).generate(logits_fn, token_count=200, args=args)

    assert set(fixed_tokens) <= {0, 1}
    assert len(set(buggy_tokens) - {0, 1}) > 0
    print("ok")
