# source: threestudio-project/threestudio https://github.com/threestudio-project/threestudio/pull/457 — the prompt processors' spawn_func encoded every prompt in one batch and cached each row with torch.save(embedding, f"{hash}.pt") while iterating zip(prompts, text_embeddings), so each per-prompt cache file held the whole [n_prompts, 77, 768] batch; fix: torch.save(embedding.clone(), ...)
import hashlib
import os
import tempfile

import torch
from torch import nn


def hash_prompt(model: str, prompt: str) -> str:
    return hashlib.md5(f"{model}-{prompt}".encode()).hexdigest()


class ToyTextEncoder(nn.Module):
    """Stands in for CLIPTextModel: returns a tuple whose [0] is [B, max_len, dim]."""

    def __init__(self, vocab: int = 64, dim: int = 16, max_len: int = 7):
        super().__init__()
        self.max_len = max_len
        self.embed = nn.Embedding(vocab, dim)

    def tokenize(self, prompts):
        ids = torch.zeros(len(prompts), self.max_len, dtype=torch.long)
        for i, prompt in enumerate(prompts):
            toks = [sum(map(ord, w)) % 64 for w in prompt.split()][: self.max_len]
            ids[i, : len(toks)] = torch.tensor(toks)
        return ids

    def forward(self, input_ids):
        return (self.embed(input_ids),)


class PromptProcessor:
    model_name = "toy/clip-text"

    @staticmethod
    def spawn_func(model_name, prompts, cache_dir, text_encoder):
        with torch.no_grad():
            tokens = text_encoder.tokenize(prompts)
            text_embeddings = text_encoder(tokens)[0]

        for prompt, embedding in zip(prompts, text_embeddings):
            torch.save(embedding, os.path.join(cache_dir, f"{hash_prompt(model_name, prompt)}.pt"))  # want: A

    @staticmethod
    def spawn_func_fixed(model_name, prompts, cache_dir, text_encoder):
        with torch.no_grad():
            text_embeddings = text_encoder(text_encoder.tokenize(prompts))[0]
        for prompt, embedding in zip(prompts, text_embeddings):
            torch.save(embedding.clone(), os.path.join(cache_dir, f"{hash_prompt(model_name, prompt)}.pt"))

    def load_text_embeddings(self, prompts, cache_dir):
        return {
            p: torch.load(os.path.join(cache_dir, f"{hash_prompt(self.model_name, p)}.pt"), weights_only=True)
            for p in prompts
        }


if __name__ == "__main__":
    enc = ToyTextEncoder()
    prompts = ["a DSLR photo of a corgi", "a zoomed out photo of a castle", "a bowl of ramen", "", "a red car"]
    proc = PromptProcessor()
    per_row = enc.max_len * 16 * 4
    with tempfile.TemporaryDirectory() as d_bug, tempfile.TemporaryDirectory() as d_fix:
        proc.spawn_func(proc.model_name, prompts, d_bug, enc)
        proc.spawn_func_fixed(proc.model_name, prompts, d_fix, enc)
        bug = proc.load_text_embeddings(prompts, d_bug)
        fix = proc.load_text_embeddings(prompts, d_fix)
        for p in prompts:
            assert torch.equal(bug[p], fix[p])
            assert bug[p].untyped_storage().nbytes() == len(prompts) * per_row  # the whole batch per file
            assert fix[p].untyped_storage().nbytes() == per_row
        f = f"{hash_prompt(proc.model_name, prompts[0])}.pt"
        assert os.path.getsize(os.path.join(d_bug, f)) > os.path.getsize(os.path.join(d_fix, f)) + 2 * per_row
    print("ok: each cached prompt embedding carried the whole batch")
