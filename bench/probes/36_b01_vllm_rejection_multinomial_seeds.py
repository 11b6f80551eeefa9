# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/10863 — RejectionSampler's `_multinomial` drew exponential noise for requests without a seed via `q[non_seeded_indices].exponential_(1.0)`; indexing with a Python list makes a copy, so those rows of `q` stayed uninitialised and spec-decode output was garbage whenever a batch mixed seeded and unseeded requests. The fix fills every request's slice `q[start:end]` (a view), passing `generator=None` for unseeded ones.
from typing import Dict, List
from unittest import mock

import torch


def _multinomial(
    probs: torch.Tensor,
    num_samples: int,
    k: int,
    seeded_seqs: Dict[int, torch.Generator],
) -> torch.Tensor:
    if num_samples > 1:
        probs = probs[:, None, :].expand(probs.shape[0], num_samples,
                                         probs.shape[1]).contiguous().view(
                                             -1, probs.shape[1])
    q = torch.empty_like(probs)
    if not seeded_seqs:
        q.exponential_(1.0)
    else:
        non_seeded_indices: List[int] = []
        start = 0
        for idx in range(len(q) // k):
            end = start + k
            generator = seeded_seqs.get(idx)
            if generator is None:
                non_seeded_indices.extend(list(range(start, end)))
            else:
                q[start:end].exponential_(1.0, generator=generator)
            start = end
        q[non_seeded_indices].exponential_(1.0)  # want: B
    return probs.div_(q).argmax(dim=1).view(-1, num_samples)


def _multinomial_fixed(
    probs: torch.Tensor,
    num_samples: int,
    k: int,
    seeded_seqs: Dict[int, torch.Generator],
) -> torch.Tensor:
    if num_samples > 1:
        probs = probs[:, None, :].expand(probs.shape[0], num_samples,
                                         probs.shape[1]).contiguous().view(
                                             -1, probs.shape[1])
    q = torch.empty_like(probs)
    if not seeded_seqs:
        q.exponential_(1.0)
    else:
        start = 0
        for idx in range(len(q) // k):
            end = start + k
            generator = seeded_seqs.get(idx)
            # generator may be None for an unseeded request
            q[start:end].exponential_(1.0, generator=generator)
            start = end
    return probs.div_(q).argmax(dim=1).view(-1, num_samples)


if __name__ == "__main__":
    k, vocab = 2, 16
    seeded = {0: torch.Generator().manual_seed(0)}  # request 0 seeded, request 1 not
    # make "uninitialised" memory deterministic: zeros -> probs / 0 = inf -> argmax 0
    with mock.patch.object(torch, "empty_like", torch.zeros_like):
        bug_tokens, fix_tokens = set(), set()
        for _ in range(20):
            probs = torch.full((2 * k, vocab), 1.0 / vocab)
            bug_tokens.update(_multinomial(probs.clone(), 1, k, seeded)[k:].flatten().tolist())
            fix_tokens.update(_multinomial_fixed(probs.clone(), 1, k, seeded)[k:].flatten().tolist())
    print("unseeded request tokens, buggy:", sorted(bug_tokens))
    print("unseeded request tokens, fixed:", sorted(fix_tokens))
    assert bug_tokens == {0}, "noise never written: every unseeded sample collapses to token 0"
    assert len(fix_tokens) > 1
