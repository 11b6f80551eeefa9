# source: mmcdermott/MEDS_EIC_AR https://github.com/mmcdermott/MEDS_EIC_AR/pull/86 — the rolling sliding-window generation loop rebuilt `full_so_far = torch.cat([input_ids, generated], dim=1)` and grew `generated` with torch.cat every iteration (O(T^2) copying); the fix (commit 25075d0, review thread) preallocates a [B, T + max_new_tokens] buffer and slices each window's prompt out of it.
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode


class TinyHFModel(nn.Module):
    def __init__(self, vocab_size=40, hidden=16, eos_token_id=3):
        super().__init__()
        self.config = type("Cfg", (), {"eos_token_id": eos_token_id})()
        self.emb = nn.Embedding(vocab_size, hidden)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, attention_mask):
        h = self.emb(input_ids) * attention_mask[..., None]
        return self.head(h.cumsum(dim=1))


class Batch:
    PAD_INDEX = 0

    def __init__(self, code):
        self.code = code


class Model(nn.Module):
    def __init__(self, ctx_size=8, chunk_size=2):
        super().__init__()
        self.HF_model = TinyHFModel()
        self.ctx_size = ctx_size
        self.chunk_size = chunk_size

    def _generate_chunk(self, prompt, prompt_mask, n):
        """Stand-in for self.HF_model.generate(..., max_new_tokens=n): one prefill, n greedy tokens."""
        logits = self.HF_model(prompt, prompt_mask)
        return logits[:, -n:].argmax(dim=-1)

    @torch.no_grad()
    def _rolling_generate(self, batch, max_new_tokens):
        input_ids = batch.code
        pad_id = batch.PAD_INDEX
        eos_id = self.HF_model.config.eos_token_id
        batch_size = input_ids.size(0)
        device = input_ids.device
        ctx_size = self.ctx_size

        generated = torch.empty((batch_size, 0), dtype=input_ids.dtype, device=device)
        finished = torch.zeros(batch_size, dtype=torch.bool, device=device)

        while generated.size(1) < max_new_tokens:
            full_so_far = torch.cat([input_ids, generated], dim=1)  # want: C
            prompt = full_so_far[:, -ctx_size:]
            prompt_mask = prompt != pad_id

            n = min(self.chunk_size, max_new_tokens - generated.size(1))
            chunk = self._generate_chunk(prompt, prompt_mask, n)
            chunk = torch.where(finished[:, None], torch.full_like(chunk, pad_id), chunk)
            finished = finished | (chunk == eos_id).any(dim=1)
            generated = torch.cat([generated, chunk], dim=1)  # want: C

        return generated


class ModelFixed(Model):
    @torch.no_grad()
    def _rolling_generate(self, batch, max_new_tokens):
        input_ids = batch.code
        pad_id = batch.PAD_INDEX
        eos_id = self.HF_model.config.eos_token_id
        batch_size, prompt_len = input_ids.shape
        device = input_ids.device
        ctx_size = self.ctx_size

        buf = torch.full((batch_size, prompt_len + max_new_tokens), pad_id, dtype=input_ids.dtype, device=device)
        buf[:, :prompt_len] = input_ids
        finished = torch.zeros(batch_size, dtype=torch.bool, device=device)

        n_done = 0
        while n_done < max_new_tokens:
            cur = prompt_len + n_done
            prompt = buf[:, max(0, cur - ctx_size):cur]
            prompt_mask = prompt != pad_id

            n = min(self.chunk_size, max_new_tokens - n_done)
            chunk = self._generate_chunk(prompt, prompt_mask, n)
            chunk = torch.where(finished[:, None], torch.full_like(chunk, pad_id), chunk)
            finished = finished | (chunk == eos_id).any(dim=1)
            buf[:, cur:cur + n] = chunk
            n_done += n

        return buf[:, prompt_len:]


class CatBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.cat.default:
            self.bytes += out.numel() * out.element_size()
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = Model()
    fixed = ModelFixed()
    fixed.load_state_dict(buggy.state_dict())
    batch = Batch(torch.randint(4, 40, (3, 6)))

    with CatBytes() as ca:
        out_a = buggy._rolling_generate(batch, max_new_tokens=24)
    with CatBytes() as cb:
        out_b = fixed._rolling_generate(batch, max_new_tokens=24)
    assert torch.equal(out_a, out_b)
    print("bytes written by torch.cat: buggy", ca.bytes, "fixed", cb.bytes)
    assert ca.bytes > 0 and cb.bytes == 0
