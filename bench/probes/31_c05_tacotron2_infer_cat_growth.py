# source: pytorch/audio https://github.com/pytorch/audio/pull/1850 — Tacotron2 `_Decoder.infer` grew `mel_specgrams`, `gate_outputs` and `alignments` with `torch.cat((acc, new), dim=0)` on every decoder step (quadratic copying over up to decoder_max_step frames); the fix ("Avoid concatenation in loop") appends per-step tensors to lists and concatenates once after the loop.
from typing import List

import torch
from torch import Tensor, nn


class _Decoder(nn.Module):
    def __init__(self, n_mels=16, encoder_embedding_dim=24, decoder_rnn_dim=32, decoder_max_step=200,
                 decoder_early_stopping=True, gate_threshold=0.5):
        super().__init__()
        self.n_mels = n_mels
        self.decoder_max_step = decoder_max_step
        self.decoder_early_stopping = decoder_early_stopping
        self.gate_threshold = gate_threshold
        self.prenet = nn.Sequential(nn.Linear(n_mels, decoder_rnn_dim), nn.ReLU())
        self.decoder_rnn = nn.GRUCell(decoder_rnn_dim + encoder_embedding_dim, decoder_rnn_dim)
        self.query = nn.Linear(decoder_rnn_dim, encoder_embedding_dim)
        self.linear_projection = nn.Linear(decoder_rnn_dim + encoder_embedding_dim, n_mels)
        self.gate_layer = nn.Linear(decoder_rnn_dim + encoder_embedding_dim, 1)

    def _get_go_frame(self, memory):
        return torch.zeros(memory.size(0), self.n_mels, dtype=memory.dtype, device=memory.device)

    def decode(self, decoder_input, decoder_hidden, attention_context, memory):
        decoder_hidden = self.decoder_rnn(torch.cat((decoder_input, attention_context), -1), decoder_hidden)
        attention_weights = torch.softmax(torch.bmm(memory, self.query(decoder_hidden).unsqueeze(-1)).squeeze(-1), -1)
        attention_context = torch.bmm(attention_weights.unsqueeze(1), memory).squeeze(1)
        hidden_and_context = torch.cat((decoder_hidden, attention_context), dim=1)
        mel_specgram = self.linear_projection(hidden_and_context)
        gate_output = self.gate_layer(hidden_and_context)
        return mel_specgram, gate_output, decoder_hidden, attention_weights, attention_context

    def infer(self, memory):
        batch_size = memory.size(0)
        decoder_input = self._get_go_frame(memory)
        decoder_hidden = memory.new_zeros(batch_size, self.decoder_rnn.hidden_size)
        attention_context = memory.new_zeros(batch_size, memory.size(2))

        mel_specgram_lengths = torch.zeros([batch_size], dtype=torch.int32)
        finished = torch.zeros([batch_size], dtype=torch.bool)
        mel_specgrams = torch.zeros([1], dtype=memory.dtype)
        gate_outputs = torch.zeros([1], dtype=memory.dtype)
        alignments = torch.zeros([1], dtype=memory.dtype)
        first_iter = True
        for _ in range(self.decoder_max_step):
            decoder_input = self.prenet(decoder_input)
            mel_specgram, gate_output, decoder_hidden, attention_weights, attention_context = self.decode(
                decoder_input, decoder_hidden, attention_context, memory
            )
            if first_iter:
                mel_specgrams = mel_specgram.unsqueeze(0)
                gate_outputs = gate_output.transpose(0, 1)
                alignments = attention_weights
                first_iter = False
            else:
                mel_specgrams = torch.cat((mel_specgrams, mel_specgram.unsqueeze(0)), dim=0)  # want: C
                gate_outputs = torch.cat((gate_outputs, gate_output.transpose(0, 1)), dim=0)  # want: C
                alignments = torch.cat((alignments, attention_weights), dim=0)  # want: C
            mel_specgram_lengths[~finished] += 1
            finished |= torch.sigmoid(gate_output.squeeze(1)) > self.gate_threshold
            if self.decoder_early_stopping and torch.all(finished):
                break
            decoder_input = mel_specgram
        return mel_specgrams, mel_specgram_lengths, gate_outputs, alignments


class _DecoderFixed(_Decoder):
    def infer(self, memory):
        batch_size = memory.size(0)
        decoder_input = self._get_go_frame(memory)
        decoder_hidden = memory.new_zeros(batch_size, self.decoder_rnn.hidden_size)
        attention_context = memory.new_zeros(batch_size, memory.size(2))

        mel_specgram_lengths = torch.zeros([batch_size], dtype=torch.int32)
        finished = torch.zeros([batch_size], dtype=torch.bool)
        mel_specgrams: List[Tensor] = []
        gate_outputs: List[Tensor] = []
        alignments: List[Tensor] = []
        for _ in range(self.decoder_max_step):
            decoder_input = self.prenet(decoder_input)
            mel_specgram, gate_output, decoder_hidden, attention_weights, attention_context = self.decode(
                decoder_input, decoder_hidden, attention_context, memory
            )
            mel_specgrams.append(mel_specgram.unsqueeze(0))
            gate_outputs.append(gate_output.transpose(0, 1))
            alignments.append(attention_weights)
            mel_specgram_lengths[~finished] += 1
            finished |= torch.sigmoid(gate_output.squeeze(1)) > self.gate_threshold
            if self.decoder_early_stopping and torch.all(finished):
                break
            decoder_input = mel_specgram

        mel_specgrams = torch.cat(mel_specgrams, dim=0)
        gate_outputs = torch.cat(gate_outputs, dim=0)
        alignments = torch.cat(alignments, dim=0)
        return mel_specgrams, mel_specgram_lengths, gate_outputs, alignments


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = _Decoder(decoder_early_stopping=False)
    fix = _DecoderFixed(decoder_early_stopping=False)
    fix.load_state_dict(bug.state_dict())
    memory = torch.randn(2, 11, 24)
    with torch.no_grad():
        rb, rf = bug.infer(memory), fix.infer(memory)
    for a, b in zip(rb, rf):
        torch.testing.assert_close(a, b)
    steps = rb[0].shape[0]
    print("steps:", steps, "mel frames copied by growing cat ~", steps * (steps - 1) // 2, "vs", steps, "with one cat")
