# source: QwenLM/Qwen3-TTS https://github.com/QwenLM/Qwen3-TTS/issues/5 — finetuning/prepare_data.py stored each per-utterance `code` from `enc_res.audio_codes` straight into the line dict appended to `final_lines`; those codes are `code[..., :n].transpose(0, 1)` views of the tokenizer's batched GPU code tensor, so every batch's whole code tensor stayed alive and VRAM grew with the dataset (the buffers were also never reset). The fix (commit 8a98526) stores `code.cpu().tolist()` and clears batch_lines/batch_audios after each encode.
import json
from dataclasses import dataclass
from typing import List

import torch

BATCH_INFER_NUM = 4


@dataclass
class Qwen3TTSTokenizerV2EncoderOutput:
    audio_codes: List[torch.LongTensor] = None


class Qwen3TTSTokenizerV2Model:  # stand-in for the 12Hz codec encoder
    encoder_valid_num_quantizers = 8
    encode_downsample_rate = 4

    def encode(self, input_values: torch.Tensor, padding_mask: torch.Tensor):
        B, T = input_values.shape
        frames = (input_values.unsqueeze(1) * 1000).long().abs() % 2048  # (B, 1, T)
        all_codes = frames[:, :, :: self.encode_downsample_rate].repeat(1, 16, 1)  # (B, 16, T//4)
        audio_codes = all_codes[:, : self.encoder_valid_num_quantizers]
        audio_codes = [
            code[..., : -(-mask.sum() // self.encode_downsample_rate)].transpose(0, 1)
            for code, mask in zip(audio_codes, padding_mask)
        ]
        return Qwen3TTSTokenizerV2EncoderOutput(audio_codes)


class Qwen3TTSTokenizer:
    model = Qwen3TTSTokenizerV2Model()

    def encode(self, audios: List[List[float]]):
        max_len = max(len(a) for a in audios)
        input_values = torch.zeros(len(audios), max_len)
        padding_mask = torch.zeros(len(audios), max_len, dtype=torch.long)
        for i, a in enumerate(audios):
            input_values[i, : len(a)] = torch.tensor(a)
            padding_mask[i, : len(a)] = 1
        with torch.inference_mode():
            return self.model.encode(input_values, padding_mask)


def prepare(tokenizer_12hz: Qwen3TTSTokenizer, total_lines: List[dict]) -> List[dict]:
    final_lines = []
    batch_lines = []
    batch_audios = []
    for line in total_lines:
        batch_lines.append(line)
        batch_audios.append(line['audio'])

        if len(batch_lines) >= BATCH_INFER_NUM:
            enc_res = tokenizer_12hz.encode(batch_audios)
            for code, line in zip(enc_res.audio_codes, batch_lines):
                line['audio_codes'] = code  # want: A
                final_lines.append(line)

    if len(batch_audios) > 0:
        enc_res = tokenizer_12hz.encode(batch_audios)
        for code, line in zip(enc_res.audio_codes, batch_lines):
            line['audio_codes'] = code.cpu().tolist()
            final_lines.append(line)
    return final_lines


def prepare_fixed(tokenizer_12hz: Qwen3TTSTokenizer, total_lines: List[dict]) -> List[dict]:
    final_lines = []
    batch_lines = []
    batch_audios = []
    for line in total_lines:
        batch_lines.append(line)
        batch_audios.append(line['audio'])

        if len(batch_lines) >= BATCH_INFER_NUM:
            enc_res = tokenizer_12hz.encode(batch_audios)
            for code, line in zip(enc_res.audio_codes, batch_lines):
                line['audio_codes'] = code.cpu().tolist()
                final_lines.append(line)
            batch_lines.clear()
            batch_audios.clear()

    if len(batch_audios) > 0:
        enc_res = tokenizer_12hz.encode(batch_audios)
        for code, line in zip(enc_res.audio_codes, batch_lines):
            line['audio_codes'] = code.cpu().tolist()
            final_lines.append(line)
        batch_lines.clear()
        batch_audios.clear()
    return final_lines


class SpyTokenizer(Qwen3TTSTokenizer):  # records storage pinned by stored codes at each encode
    def __init__(self, lines):
        self.lines = lines
        self.pinned = []

    def encode(self, audios):
        held = [l["audio_codes"] for l in self.lines if isinstance(l.get("audio_codes"), torch.Tensor)]
        self.pinned.append(sum(c.untyped_storage().nbytes() for c in held) / max(1, sum(c.nbytes for c in held)))
        return super().encode(audios)


def _lines(n=6):
    g = torch.Generator().manual_seed(0)
    return [{"audio": torch.rand(400 + 40 * i, generator=g).tolist(), "text": f"utt {i}"} for i in range(n)]


if __name__ == "__main__":
    lines = _lines()
    spy = SpyTokenizer(lines)
    bad = prepare(spy, lines)
    # while encoding later batches, the stored (frames, 8) codes pin whole (B, 16, T/4) batch tensors
    assert max(spy.pinned) > 4, spy.pinned

    lines2 = _lines()
    spy2 = SpyTokenizer(lines2)
    good = prepare_fixed(spy2, lines2)
    assert spy2.pinned == [0.0, 0.0]
    assert len(good) == 6 and isinstance(good[0]["audio_codes"], list)
    assert good[0]["audio_codes"] == bad[0]["audio_codes"]
    json.dumps(good[0], ensure_ascii=False)
    print("ok")
