# source: NVIDIA-NeMo/Speech https://github.com/NVIDIA-NeMo/Speech/pull/7249 — transcribe_partial_audio stored `logits[idx][: logits_len[idx]]` in each returned Hypothesis.y_sequence, a view of the whole padded GPU batch of logits, and kept every batch's hypotheses in a list until the end (GPU memory leak); the fix moved the stored logits off the device (an owning copy of just the slice — reconstructed below as .clone() so it also holds on CPU).
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn


@dataclass
class Hypothesis:
    score: float
    y_sequence: object
    text: Optional[str] = None
    alignments: Optional[object] = None


class GreedyCTCDecoding:
    def ctc_decoder_predictions_tensor(self, logits, decoder_lengths=None, return_hypotheses=False):
        preds = logits.argmax(dim=-1)
        hyps = [Hypothesis(score=0.0, y_sequence=preds[i, : decoder_lengths[i]].tolist()) for i in range(len(preds))]
        return hyps, None


class TinyCTCModel(nn.Module):
    def __init__(self, feat=16, vocab=129):
        super().__init__()
        self.encoder = nn.Conv1d(feat, 64, 3, padding=1)
        self.decoder = nn.Linear(64, vocab)
        self.decoding = GreedyCTCDecoding()

    def forward(self, input_signal, input_signal_length):
        h = self.encoder(input_signal.transpose(1, 2)).transpose(1, 2)
        log_probs = self.decoder(h).log_softmax(-1)
        return log_probs, input_signal_length, log_probs.argmax(-1)


def transcribe_partial_audio(asr_model, dataloader, logprobs=False, return_hypotheses=False):
    if return_hypotheses and logprobs:
        raise ValueError("Either `return_hypotheses` or `logprobs` can be True at any given time.")
    hypotheses = []
    mode = asr_model.training
    device = next(asr_model.parameters()).device
    try:
        asr_model.eval()
        with torch.no_grad():
            for test_batch in dataloader:
                logits, logits_len, greedy_predictions = asr_model.forward(
                    input_signal=test_batch[0].to(device), input_signal_length=test_batch[1].to(device)
                )
                if logprobs:
                    # dump log probs per file
                    for idx in range(logits.shape[0]):
                        lg = logits[idx][: logits_len[idx]]
                        hypotheses.append(lg.cpu().numpy())  # maybe: A (a copy on GPU, but on CPU .cpu() is a no-op and the array pins the batch)
                else:
                    current_hypotheses, all_hyp = asr_model.decoding.ctc_decoder_predictions_tensor(
                        logits, decoder_lengths=logits_len, return_hypotheses=return_hypotheses,
                    )
                    if return_hypotheses:
                        # dump log probs per file
                        for idx in range(logits.shape[0]):
                            current_hypotheses[idx].y_sequence = logits[idx][: logits_len[idx]]  # want: A
                            if current_hypotheses[idx].alignments is None:
                                current_hypotheses[idx].alignments = current_hypotheses[idx].y_sequence
                    hypotheses += current_hypotheses
                del greedy_predictions
                del logits
                del test_batch
    finally:
        asr_model.train(mode=mode)
    return hypotheses


def transcribe_partial_audio_fixed(asr_model, dataloader, return_hypotheses=False):
    hypotheses = []
    mode = asr_model.training
    device = next(asr_model.parameters()).device
    try:
        asr_model.eval()
        with torch.no_grad():
            for test_batch in dataloader:
                logits, logits_len, greedy_predictions = asr_model.forward(
                    input_signal=test_batch[0].to(device), input_signal_length=test_batch[1].to(device)
                )
                current_hypotheses, all_hyp = asr_model.decoding.ctc_decoder_predictions_tensor(
                    logits, decoder_lengths=logits_len, return_hypotheses=return_hypotheses,
                )
                if return_hypotheses:
                    for idx in range(logits.shape[0]):
                        current_hypotheses[idx].y_sequence = logits[idx][: logits_len[idx]].clone()
                        if current_hypotheses[idx].alignments is None:
                            current_hypotheses[idx].alignments = current_hypotheses[idx].y_sequence
                hypotheses += current_hypotheses
    finally:
        asr_model.train(mode=mode)
    return hypotheses


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyCTCModel()
    # 4 batches of 8 utterances padded to 400 frames; one real utterance is only 40 frames long
    batches = [(torch.randn(8, 400, 16), torch.tensor([40, 400, 380, 350, 300, 200, 100, 60])) for _ in range(4)]
    bad = transcribe_partial_audio(model, batches, return_hypotheses=True)
    good = transcribe_partial_audio_fixed(model, batches, return_hypotheses=True)
    h_bad, h_good = bad[0].y_sequence, good[0].y_sequence
    payload = h_bad.numel() * h_bad.element_size()
    print(f"hyp[0] payload {payload} B  buggy storage {h_bad.untyped_storage().nbytes()} B  fixed storage {h_good.untyped_storage().nbytes()} B")
    assert torch.equal(h_bad, h_good)
    assert h_bad.untyped_storage().nbytes() >= 8 * 400 * 129 * 4
    assert h_good.untyped_storage().nbytes() == payload
