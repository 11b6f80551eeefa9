# source: huggingface/transformers https://github.com/huggingface/transformers/pull/47975 — The greedy/sample decode loop set `this_peer_finished = unfinished_sequences.max() == 0` and `_has_unfinished_sequences` branched on it with `if this_peer_finished`, a device->host sync on every decode step; the fix ("stop synchronizing the accelerator on every decode step") copies the all-finished flag into a pinned host buffer with non_blocking=True, reads it one step late, and crops the overrun token.
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.head(torch.tanh(self.embed(input_ids).cumsum(dim=1)))


class GenerationMixin:
    def _has_unfinished_sequences(self, this_peer_finished, cur_len, max_length):
        if this_peer_finished:  # want: D
            return False
        return cur_len < max_length

    @torch.no_grad()
    def _sample(self, model, input_ids, max_length, eos_token_id, pad_token_id):
        batch_size, cur_len = input_ids.shape
        unfinished_sequences = torch.ones(batch_size, dtype=torch.long, device=input_ids.device)
        this_peer_finished = False
        while self._has_unfinished_sequences(this_peer_finished, cur_len, max_length):
            next_token_logits = model(input_ids)[:, -1, :]
            next_tokens = torch.argmax(next_token_logits, dim=-1)
            next_tokens = next_tokens * unfinished_sequences + pad_token_id * (1 - unfinished_sequences)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished_sequences = unfinished_sequences & ~(next_tokens == eos_token_id)
            this_peer_finished = unfinished_sequences.max() == 0
            cur_len += 1
        return input_ids


class _NoEvent:
    def record(self):
        pass

    def synchronize(self):
        pass


class _StopSignal:
    """Reports `all finished` one decode step late through an async device->host copy."""

    def __init__(self, device, max_length):
        self.max_length = max_length
        on_cuda = device.type == "cuda"
        self.slots = [
            (torch.zeros((), dtype=torch.bool, pin_memory=on_cuda), torch.cuda.Event() if on_cuda else _NoEvent())
            for _ in range(2)
        ]
        self.reported = False

    def push(self, unfinished_sequences):
        all_finished, copy_done = self.slots.pop(0)
        all_finished.copy_(unfinished_sequences.max() == 0, non_blocking=True)
        copy_done.record()
        self.slots.append((all_finished, copy_done))

    def should_stop(self, length):
        all_finished, copy_done = self.slots[0]
        copy_done.synchronize()
        self.reported = bool(all_finished)
        # `max_length` is the one stop condition the host already knows
        return self.reported or length >= self.max_length

    def drain(self):
        for _, copy_done in self.slots:
            copy_done.synchronize()
        return 1 if self.reported else 0


class GenerationMixinFixed(GenerationMixin):
    @torch.no_grad()
    def _sample(self, model, input_ids, max_length, eos_token_id, pad_token_id):
        batch_size, cur_len = input_ids.shape
        unfinished_sequences = torch.ones(batch_size, dtype=torch.long, device=input_ids.device)
        stop = _StopSignal(input_ids.device, max_length)
        while not stop.should_stop(cur_len):
            next_token_logits = model(input_ids)[:, -1, :]
            next_tokens = torch.argmax(next_token_logits, dim=-1)
            next_tokens = next_tokens * unfinished_sequences + pad_token_id * (1 - unfinished_sequences)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished_sequences = unfinished_sequences & ~(next_tokens == eos_token_id)
            stop.push(unfinished_sequences)
            cur_len += 1
        overrun = stop.drain()
        return input_ids[:, : input_ids.shape[1] - overrun]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLM()
    prompt = torch.randint(0, 32, (3, 4))
    eos = int(torch.argmax(model(prompt)[:, -1, :], dim=-1)[0])
    a = GenerationMixin()._sample(model, prompt, max_length=20, eos_token_id=eos, pad_token_id=0)
    b = GenerationMixinFixed()._sample(model, prompt, max_length=20, eos_token_id=eos, pad_token_id=0)
    print("lengths:", a.shape[1], b.shape[1])
    torch.testing.assert_close(a, b)
