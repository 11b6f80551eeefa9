# source: NVIDIA/NeMo https://github.com/NVIDIA/NeMo/pull/12808 — batched_hyps_to_hypotheses stored batched_hyps.transcript[i, :len] / timestamps[i, :len] row views of the (CUDA-graph-allocated, max-length) batch buffers in every returned Hypothesis, keeping references to those buffers after decoding; the fix .clone()s y_sequence and timestamp.
from dataclasses import dataclass, field
from typing import List, Optional, Union

import torch


@dataclass
class Hypothesis:
    score: float
    y_sequence: Union[List[int], torch.Tensor]
    text: Optional[str] = None
    dec_out: Optional[List[torch.Tensor]] = None
    dec_state: Optional[object] = None
    timestamp: Union[List[int], torch.Tensor] = field(default_factory=list)
    alignments: Optional[list] = None
    token_duration: Union[List[int], torch.Tensor] = field(default_factory=list)


class BatchedHyps:
    """Class to store batched hypotheses (labels, time_indices, scores) for efficient RNNT decoding"""

    def __init__(self, batch_size: int, init_length: int, device=None, float_dtype=None):
        if init_length <= 0:
            raise ValueError(f"init_length must be > 0, got {init_length}")
        self._max_length = init_length
        self.current_lengths = torch.zeros(batch_size, device=device, dtype=torch.long)
        self.transcript = torch.zeros((batch_size, self._max_length), device=device, dtype=torch.long)
        self.timestamps = torch.zeros((batch_size, self._max_length), device=device, dtype=torch.long)
        self.token_durations = torch.zeros((batch_size, self._max_length), device=device, dtype=torch.long)
        self.scores = torch.zeros(batch_size, device=device, dtype=float_dtype)
        self._batch_indices = torch.arange(batch_size, device=device)

    def add_results_masked_(self, active_mask, labels, time_indices, scores, token_durations=None):
        self.scores += torch.where(active_mask, scores, torch.zeros_like(scores))
        self.transcript[self._batch_indices, self.current_lengths] = labels
        self.timestamps[self._batch_indices, self.current_lengths] = time_indices
        if token_durations is not None:
            self.token_durations[self._batch_indices, self.current_lengths] = token_durations
        self.current_lengths += active_mask


def batched_hyps_to_hypotheses(batched_hyps: BatchedHyps, alignments=None, batch_size=None) -> List[Hypothesis]:
    """
    Convert batched hypotheses to a list of Hypothesis objects.
    """
    assert batch_size is None or batch_size <= batched_hyps.scores.shape[0]
    num_hyps = batched_hyps.scores.shape[0] if batch_size is None else batch_size
    hypotheses = [
        Hypothesis(
            score=batched_hyps.scores[i].item(),
            y_sequence=batched_hyps.transcript[i, : batched_hyps.current_lengths[i]],  # maybe: A (fix rationale is CUDA-graph buffers being reused/overwritten via shared references, not memory size)
            timestamp=batched_hyps.timestamps[i, : batched_hyps.current_lengths[i]],  # maybe: A (same as above)
            token_duration=(
                durations
                if not torch.all(
                    (durations := batched_hyps.token_durations[i, : batched_hyps.current_lengths[i]]) == 0
                )
                else []
            ),
            alignments=None,
            dec_state=None,
        )
        for i in range(num_hyps)
    ]
    return hypotheses


def batched_hyps_to_hypotheses_fixed(batched_hyps: BatchedHyps, batch_size=None) -> List[Hypothesis]:
    """Post-fix version (look-alike, correct)."""
    num_hyps = batched_hyps.scores.shape[0] if batch_size is None else batch_size
    # We clone `timestamps` and `y_sequence` to avoid keeping references
    # to the tensors that can be allocated by CUDA graphs.
    return [
        Hypothesis(
            score=batched_hyps.scores[i].item(),
            y_sequence=batched_hyps.transcript[i, : batched_hyps.current_lengths[i]].clone(),
            timestamp=batched_hyps.timestamps[i, : batched_hyps.current_lengths[i]].clone(),
            alignments=None,
            dec_state=None,
        )
        for i in range(num_hyps)
    ]


class GreedyBatchedRNNTLabelLoopingComputer:
    """Keeps its decoding buffers between calls (as the CUDA-graphs computer does)."""

    def __init__(self, max_batch, max_len):
        self.state_hyps = BatchedHyps(max_batch, max_len)

    def __call__(self, encoder_output, encoder_output_length):
        hyps = self.state_hyps
        hyps.current_lengths.zero_()
        batch_size = encoder_output.shape[0]
        for t in range(encoder_output.shape[1]):
            active = torch.zeros(hyps.scores.shape[0], dtype=torch.bool)
            active[:batch_size] = t < encoder_output_length
            labels = torch.zeros(hyps.scores.shape[0], dtype=torch.long)
            labels[:batch_size] = encoder_output[:, t].argmax(-1)
            hyps.add_results_masked_(active, labels, torch.full_like(labels, t), torch.ones(hyps.scores.shape[0]))
        return hyps, batch_size


if __name__ == "__main__":
    torch.manual_seed(0)
    computer = GreedyBatchedRNNTLabelLoopingComputer(max_batch=16, max_len=4096)
    all_hyps = []
    for _ in range(3):
        enc = torch.randn(4, 20, 10)
        lengths = torch.randint(5, 20, (4,))
        batched, bs = computer(enc, lengths)
        all_hyps.extend(batched_hyps_to_hypotheses(batched, batch_size=bs))
    h = all_hyps[0]
    print("hyp tokens", h.y_sequence.numel(), "storage kept", h.y_sequence.untyped_storage().nbytes())
    print("first hyp (now overwritten by later batches):", all_hyps[0].y_sequence[:5].tolist())
    fixed = batched_hyps_to_hypotheses_fixed(computer.state_hyps, batch_size=4)
    assert fixed[0].y_sequence.untyped_storage().nbytes() == fixed[0].y_sequence.numel() * 8
