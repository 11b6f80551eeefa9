# source: NVIDIA/NeMo https://github.com/NVIDIA/NeMo/pull/12808 ("clone timestams and y_sequence") — rnnt_utils.batched_hyps_to_hypotheses built Hypothesis(y_sequence=batched_hyps.transcript[i, :len], timestamp=batched_hyps.timestamps[i, :len]) in a list comprehension, so every returned hypothesis referenced the label-looping decoder's preallocated [B, max_time * max_symbols] buffers (reused across batches under CUDA graphs); fix: .clone() both slices
from dataclasses import dataclass
from typing import List, Optional

import torch


@dataclass
class Hypothesis:
    score: float
    y_sequence: torch.Tensor
    timestamp: torch.Tensor
    token_duration: object = None
    alignments: Optional[list] = None
    dec_state: Optional[object] = None


class BatchedHyps:
    """Fixed-capacity per-batch storage, allocated once and refilled for every batch."""

    def __init__(self, batch_size: int, init_length: int):
        self.current_lengths = torch.zeros(batch_size, dtype=torch.long)
        self.transcript = torch.zeros((batch_size, init_length), dtype=torch.long)
        self.timestamps = torch.zeros((batch_size, init_length), dtype=torch.long)
        self.token_durations = torch.zeros((batch_size, init_length), dtype=torch.long)
        self.scores = torch.zeros(batch_size)

    def fill_(self, lengths, seed):
        g = torch.Generator().manual_seed(seed)
        self.current_lengths.copy_(lengths)
        self.transcript.copy_(torch.randint(0, 128, self.transcript.shape, generator=g))
        self.timestamps.copy_(torch.arange(self.timestamps.shape[1]).expand_as(self.timestamps))
        self.scores.copy_(torch.randn(self.scores.shape, generator=g))


def batched_hyps_to_hypotheses(batched_hyps: BatchedHyps, batch_size=None) -> List[Hypothesis]:
    num_hyps = batched_hyps.scores.shape[0] if batch_size is None else batch_size
    hypotheses = [
        Hypothesis(
            score=batched_hyps.scores[i].item(),
            y_sequence=batched_hyps.transcript[i, : batched_hyps.current_lengths[i]],  # want: A
            timestamp=batched_hyps.timestamps[i, : batched_hyps.current_lengths[i]],  # want: A
            token_duration=(
                durations
                if not torch.all((durations := batched_hyps.token_durations[i, : batched_hyps.current_lengths[i]]) == 0)  # maybe: A (walrus slice kept in the Hypothesis when non-zero; not cloned by the PR)
                else []
            ),
        )
        for i in range(num_hyps)
    ]
    return hypotheses


def batched_hyps_to_hypotheses_fixed(batched_hyps: BatchedHyps, batch_size=None) -> List[Hypothesis]:
    num_hyps = batched_hyps.scores.shape[0] if batch_size is None else batch_size
    return [
        Hypothesis(
            score=batched_hyps.scores[i].item(),
            y_sequence=batched_hyps.transcript[i, : batched_hyps.current_lengths[i]].clone(),
            timestamp=batched_hyps.timestamps[i, : batched_hyps.current_lengths[i]].clone(),
        )
        for i in range(num_hyps)
    ]


def hypotheses_to_text(batched_hyps: BatchedHyps) -> List[str]:
    # views used and dropped inside the comprehension: nothing outlives the call
    return [
        " ".join(str(t) for t in batched_hyps.transcript[i, : batched_hyps.current_lengths[i]].tolist())
        for i in range(batched_hyps.scores.shape[0])
    ]


if __name__ == "__main__":
    B, L = 4, 4096
    state = BatchedHyps(B, L)
    state.fill_(torch.tensor([5, 9, 3, 7]), seed=0)
    hyps = batched_hyps_to_hypotheses(state)
    fixed = batched_hyps_to_hypotheses_fixed(state)
    expected = [h.y_sequence.tolist() for h in fixed]
    for h in hyps:
        assert h.y_sequence.untyped_storage().nbytes() == B * L * 8
        assert h.y_sequence.untyped_storage().nbytes() > h.y_sequence.numel() * h.y_sequence.element_size()
    for h in fixed:
        assert h.y_sequence.untyped_storage().nbytes() == h.y_sequence.numel() * 8
    # the buffer is refilled for the next batch: the first batch's hypotheses silently change too
    state.fill_(torch.tensor([5, 9, 3, 7]), seed=1)
    assert [h.y_sequence.tolist() for h in hyps] != expected
    assert [h.y_sequence.tolist() for h in fixed] == expected
    assert len(hypotheses_to_text(state)) == B
    print("ok: hypotheses referenced the whole preallocated decoder buffers")
