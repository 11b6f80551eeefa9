# source: speechbrain/speechbrain https://github.com/speechbrain/speechbrain/commit/8aae2f6c644bc58e9a6f004c2add0da2fa87b4db — Tacotron2 `Decoder.parse_decoder_outputs` stacks the per-step gate logits and, for a single-item batch where the stacked gate tensor is 1-D, called `gate_outputs.unsqueeze(0)` as a bare statement. `unsqueeze` returns a new tensor, so the (B, T_out) reshape was silently dropped and downstream stop-token handling got a 1-D tensor. The fix (merged in PR #1525) assigns `gate_outputs = gate_outputs.unsqueeze(0)`.
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, n_mel_channels=4, n_frames_per_step=1):
        super().__init__()
        self.n_mel_channels = n_mel_channels
        self.n_frames_per_step = n_frames_per_step

    def parse_decoder_outputs(self, mel_outputs, gate_outputs, alignments):
        # (T_out, B) -> (B, T_out)
        alignments = torch.stack(alignments).transpose(0, 1).contiguous()
        # (T_out, B) -> (B, T_out)
        gate_outputs = torch.stack(gate_outputs)
        if gate_outputs.dim() == 1:
            gate_outputs.unsqueeze(0)  # want: B
        else:
            gate_outputs = gate_outputs.transpose(0, 1).contiguous()
        # (T_out, B, n_mel_channels) -> (B, T_out, n_mel_channels)
        mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous()
        # decouple frames per step
        shape = (mel_outputs.shape[0], -1, self.n_mel_channels)
        mel_outputs = mel_outputs.view(*shape)
        # (B, T_out, n_mel_channels) -> (B, n_mel_channels, T_out)
        mel_outputs = mel_outputs.transpose(1, 2)
        return mel_outputs, gate_outputs, alignments


class DecoderFixed(Decoder):
    def parse_decoder_outputs(self, mel_outputs, gate_outputs, alignments):
        alignments = torch.stack(alignments).transpose(0, 1).contiguous()
        gate_outputs = torch.stack(gate_outputs)
        if gate_outputs.dim() == 1:
            gate_outputs = gate_outputs.unsqueeze(0)
        else:
            gate_outputs = gate_outputs.transpose(0, 1).contiguous()
        mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous()
        shape = (mel_outputs.shape[0], -1, self.n_mel_channels)
        mel_outputs = mel_outputs.view(*shape)
        mel_outputs = mel_outputs.transpose(1, 2)
        return mel_outputs, gate_outputs, alignments


def infer_steps(decoder, steps=5):
    torch.manual_seed(0)
    mels = [torch.randn(1, 4) for _ in range(steps)]
    gates = [torch.randn(()) for _ in range(steps)]
    aligns = [torch.softmax(torch.randn(1, 7), -1) for _ in range(steps)]
    return decoder.parse_decoder_outputs(mels, gates, aligns)


if __name__ == "__main__":
    _, gate, _ = infer_steps(Decoder())
    _, gate_f, _ = infer_steps(DecoderFixed())
    assert gate.shape == (5,)
    assert gate_f.shape == (1, 5)
    assert torch.equal(gate, gate_f[0])
    print("ok")
