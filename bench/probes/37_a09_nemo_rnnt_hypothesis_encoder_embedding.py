# source: NVIDIA-NeMo/Speech https://github.com/NVIDIA-NeMo/Speech/pull/6370 — The PR wanted RNNT transcribe() to hand back encoder embeddings for n-gram/HAT rescoring; in review the maintainer asked that the batched greedy decoder "slice off the appropriate encoder embedding for each sample, call detach and CPU() and then set them into the hypothesis object". Storing the raw per-sample slice of the padded [B, D, T] encoder output on each Hypothesis would keep the whole batch encoder output alive for as long as the list of hypotheses returned by transcribe() lives.
from dataclasses import dataclass
from typing import List, Optional

import torch


@dataclass
class Hypothesis:
    score: float
    y_sequence: List[int]
    length: int = 0
    encoder_embedding: Optional[torch.Tensor] = None


class GreedyBatchedRNNTInfer:
    def __init__(self, blank_index: int, preserve_encoder_embedding: bool = False):
        self.blank_index = blank_index
        self.preserve_encoder_embedding = preserve_encoder_embedding

    def _greedy_decode(self, encoder_output: torch.Tensor, encoded_lengths: torch.Tensor) -> List[Hypothesis]:
        hyps = []
        for b in range(encoder_output.shape[0]):
            frames = encoder_output[b, :, : encoded_lengths[b]]
            labels = frames.argmax(dim=0)
            y = [int(t) for t in labels.tolist() if t != self.blank_index]
            hyps.append(Hypothesis(score=float(frames.max(dim=0).values.sum()), y_sequence=y, length=int(encoded_lengths[b])))
        return hyps

    def forward(self, encoder_output: torch.Tensor, encoded_lengths: torch.Tensor) -> List[Hypothesis]:
        with torch.inference_mode():
            hypotheses = self._greedy_decode(encoder_output, encoded_lengths)
            if self.preserve_encoder_embedding:
                for idx, hyp in enumerate(hypotheses):
                    hyp.encoder_embedding = encoder_output[idx, :, : encoded_lengths[idx]]  # want: A
        return hypotheses


class GreedyBatchedRNNTInferFixed(GreedyBatchedRNNTInfer):
    def forward(self, encoder_output: torch.Tensor, encoded_lengths: torch.Tensor) -> List[Hypothesis]:
        with torch.inference_mode():
            hypotheses = self._greedy_decode(encoder_output, encoded_lengths)
            if self.preserve_encoder_embedding:
                for idx, hyp in enumerate(hypotheses):
                    hyp.encoder_embedding = encoder_output[idx, :, : encoded_lengths[idx]].detach().cpu()
        return hypotheses


def transcribe(decoding: GreedyBatchedRNNTInfer, batches) -> List[Hypothesis]:
    all_hypotheses = []
    for encoder_output, encoded_len in batches:
        all_hypotheses += decoding.forward(encoder_output, encoded_len)
    return all_hypotheses


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.randn(8, 32, 200), torch.randint(20, 200, (8,))) for _ in range(3)]
    hyps = transcribe(GreedyBatchedRNNTInfer(blank_index=31, preserve_encoder_embedding=True), batches)
    emb = hyps[0].encoder_embedding
    assert emb.untyped_storage().nbytes() == 8 * 32 * 200 * emb.element_size()
    assert emb.untyped_storage().nbytes() > emb.numel() * emb.element_size()

    hyps_fixed = transcribe(GreedyBatchedRNNTInferFixed(blank_index=31, preserve_encoder_embedding=True), batches)
    for a, b in zip(hyps, hyps_fixed):
        assert a.y_sequence == b.y_sequence and torch.equal(a.encoder_embedding, b.encoder_embedding)
    print("ok")
