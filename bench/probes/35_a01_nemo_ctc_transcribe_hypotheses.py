# source: NVIDIA-NeMo/Speech https://github.com/NVIDIA-NeMo/Speech/pull/6243 — EncDecCTCModel.transcribe() stored `logits[idx][:logits_len[idx]]` (a view of the whole batched logits tensor, on GPU) into every returned Hypothesis, so the list accumulated across batches pinned each batch's full logits; the fix moved the per-utterance logits off the device into their own storage before storing them.
import torch
from torch import nn


class Hypothesis:
    def __init__(self, text, y_sequence=None, alignments=None):
        self.text = text
        self.y_sequence = y_sequence
        self.alignments = alignments


class TinyCTC(nn.Module):
    def __init__(self, feat=16, vocab=64):
        super().__init__()
        self.proj = nn.Linear(feat, vocab)

    def forward(self, input_signal, input_signal_length):
        logits = self.proj(input_signal).log_softmax(-1)
        return logits, input_signal_length, logits.argmax(-1)


class CTCDecoding:
    def ctc_decoder_predictions_tensor(self, logits, decoder_lengths, return_hypotheses=False):
        hyps = []
        for i in range(logits.shape[0]):
            ids = logits[i, : decoder_lengths[i]].argmax(-1).tolist()
            hyps.append(Hypothesis(text=" ".join(map(str, ids[:4]))))
        return hyps, None


class EncDecCTCModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = TinyCTC()
        self.decoding = CTCDecoding()

    def forward(self, input_signal, input_signal_length):
        return self.encoder(input_signal, input_signal_length)

    @torch.no_grad()
    def transcribe(self, batches, return_hypotheses=True):
        hypotheses = []
        for test_batch in batches:
            logits, logits_len, greedy_predictions = self.forward(
                input_signal=test_batch[0], input_signal_length=test_batch[1]
            )
            current_hypotheses, all_hyp = self.decoding.ctc_decoder_predictions_tensor(
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
        return hypotheses


class EncDecCTCModelFixed(EncDecCTCModel):
    @torch.no_grad()
    def transcribe(self, batches, return_hypotheses=True):
        hypotheses = []
        for test_batch in batches:
            logits, logits_len, greedy_predictions = self.forward(
                input_signal=test_batch[0], input_signal_length=test_batch[1]
            )
            current_hypotheses, all_hyp = self.decoding.ctc_decoder_predictions_tensor(
                logits, decoder_lengths=logits_len, return_hypotheses=return_hypotheses,
            )
            if return_hypotheses:
                for idx in range(logits.shape[0]):
                    current_hypotheses[idx].y_sequence = logits[idx][: logits_len[idx]].clone()
                    if current_hypotheses[idx].alignments is None:
                        current_hypotheses[idx].alignments = current_hypotheses[idx].y_sequence
            hypotheses += current_hypotheses
            del greedy_predictions
            del logits
        return hypotheses


def held_bytes(hyps):
    seen = {}
    for h in hyps:
        s = h.y_sequence.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
    return sum(seen.values())


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = []
    for _ in range(3):
        x = torch.randn(8, 200, 16)
        lens = torch.randint(20, 60, (8,))
        batches.append((x, lens))
    for cls in (EncDecCTCModel, EncDecCTCModelFixed):
        m = cls().eval()
        hyps = m.transcribe(batches)
        payload = sum(h.y_sequence.numel() * h.y_sequence.element_size() for h in hyps)
        print(f"{cls.__name__:22s} payload={payload:8d} B  storage held={held_bytes(hyps):8d} B")
