# source: NVIDIA/NeMo https://github.com/NVIDIA/NeMo/pull/9198 — EncDecCTCModel._transcribe_output_processing set current_hypotheses[idx].y_sequence = logits_cpu[idx][: logits_len[idx]] (a row view of the whole batch's pinned/CPU logits) on Hypothesis objects returned from transcribe(return_hypotheses=True); fix: logits_cpu[idx, : logits_len[idx]].clone() ("we don't want references to the cudaMallocHost()-allocated tensor to be floating around")
from dataclasses import dataclass, field
from typing import List, Optional

import torch
from torch import nn


@dataclass
class Hypothesis:
    score: float
    y_sequence: torch.Tensor
    text: Optional[str] = None
    alignments: Optional[object] = None
    timestamp: List[int] = field(default_factory=list)


class GreedyCTCDecoding:
    def ctc_decoder_predictions_tensor(self, logits, decoder_lengths, return_hypotheses=False):
        hyps = []
        for b in range(logits.shape[0]):
            labels = logits[b, : decoder_lengths[b]].argmax(-1)
            hyps.append(Hypothesis(score=0.0, y_sequence=labels, text=" ".join(map(str, labels.tolist()))))
        return hyps, None


class EncDecCTCModel(nn.Module):
    def __init__(self, feat_dim=8, vocab=32):
        super().__init__()
        self.encoder = nn.Linear(feat_dim, 16)
        self.decoder = nn.Linear(16, vocab + 1)
        self.decoding = GreedyCTCDecoding()

    def forward(self, input_signal, input_signal_length):
        logits = self.decoder(torch.relu(self.encoder(input_signal))).log_softmax(-1)
        return logits, input_signal_length

    def _transcribe_output_processing(self, outputs, return_hypotheses=True):
        logits = outputs.pop("logits")
        logits_len = outputs.pop("logits_len")
        current_hypotheses, all_hyp = self.decoding.ctc_decoder_predictions_tensor(
            logits, decoder_lengths=logits_len, return_hypotheses=return_hypotheses
        )
        if return_hypotheses:
            if logits.is_cuda:
                logits_cpu = torch.empty(logits.shape, dtype=logits.dtype, device="cpu", pin_memory=True)
                logits_cpu.copy_(logits, non_blocking=True)
            else:
                logits_cpu = logits
            logits_len = logits_len.cpu()
            for idx in range(logits_cpu.shape[0]):
                current_hypotheses[idx].y_sequence = logits_cpu[idx][: logits_len[idx]]  # want: A
                if current_hypotheses[idx].alignments is None:
                    current_hypotheses[idx].alignments = current_hypotheses[idx].y_sequence
            del logits_cpu
        del logits, logits_len
        hypotheses = []
        if all_hyp is None:
            hypotheses += current_hypotheses
        else:
            hypotheses += all_hyp
        return hypotheses

    @torch.no_grad()
    def transcribe(self, batches, return_hypotheses=True):
        results = []
        for signal, lengths in batches:
            logits, logits_len = self.forward(signal, lengths)
            results += self._transcribe_output_processing(
                dict(logits=logits, logits_len=logits_len), return_hypotheses=return_hypotheses
            )
        return results


class EncDecCTCModelFixed(EncDecCTCModel):
    def _transcribe_output_processing(self, outputs, return_hypotheses=True):
        logits = outputs.pop("logits")
        logits_len = outputs.pop("logits_len").cpu()
        current_hypotheses, _ = self.decoding.ctc_decoder_predictions_tensor(logits, decoder_lengths=logits_len)
        if return_hypotheses:
            logits_cpu = logits.cpu()
            for idx in range(logits_cpu.shape[0]):
                current_hypotheses[idx].y_sequence = logits_cpu[idx, : logits_len[idx]].clone()
                if current_hypotheses[idx].alignments is None:
                    current_hypotheses[idx].alignments = current_hypotheses[idx].y_sequence
        return current_hypotheses


class EncDecHybridRNNTCTCModel(EncDecCTCModel):
    """hybrid_rnnt_ctc_models.py's CTC path has the same assignment and was not changed by the PR."""

    def _transcribe_output_processing(self, outputs, return_hypotheses=True):
        logits = outputs.pop("logits")
        encoded_len = outputs.pop("logits_len")
        hypotheses, _ = self.decoding.ctc_decoder_predictions_tensor(logits, encoded_len)
        logits = logits.cpu()
        if return_hypotheses:
            for idx in range(logits.shape[0]):
                hypotheses[idx].y_sequence = logits[idx][: encoded_len[idx]]  # maybe: A (same assignment, still unfixed upstream in the hybrid model)
                if hypotheses[idx].alignments is None:
                    hypotheses[idx].alignments = hypotheses[idx].y_sequence
        return hypotheses


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, F = 8, 50, 8
    batches = [(torch.randn(B, T, F), torch.randint(10, T, (B,))) for _ in range(3)]
    hyps = EncDecCTCModel().transcribe(batches)
    model_fixed = EncDecCTCModelFixed()
    model_fixed.load_state_dict(EncDecCTCModel().state_dict())
    for h in hyps:
        t = h.y_sequence
        assert t.untyped_storage().nbytes() == B * T * 33 * 4  # the whole batch's [B, T, V] logits
        assert t.untyped_storage().nbytes() > t.numel() * t.element_size()
    fixed = model_fixed.transcribe(batches)
    for h in fixed:
        assert h.y_sequence.untyped_storage().nbytes() == h.y_sequence.numel() * h.y_sequence.element_size()
    hybrid = EncDecHybridRNNTCTCModel().transcribe(batches)
    assert hybrid[0].y_sequence.untyped_storage().nbytes() == B * T * 33 * 4
    print("ok: every returned hypothesis pinned its batch's full logits")
