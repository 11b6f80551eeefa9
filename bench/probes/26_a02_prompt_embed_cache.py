# source: threestudio-project/threestudio https://github.com/threestudio-project/threestudio/pull/457 — spawn_func iterated `for prompt, embedding in zip(prompts, text_embeddings)` and torch.save'd each row of the batched text-embedding tensor as a per-prompt cache file, so every .pt held the whole [B, 77, D] storage; the PR changed the saved object to embedding.clone().
import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import List, Union

import torch
import torch.nn as nn


def hash_prompt(model: str, prompt: str) -> str:
    identifier = f"{model}-{prompt}"
    return hashlib.md5(identifier.encode()).hexdigest()


def cleanup():
    import gc

    gc.collect()


class _Tokens:
    def __init__(self, input_ids):
        self.input_ids = input_ids


class ToyTokenizer:
    model_max_length = 77

    def __call__(self, prompts, padding="max_length", max_length=77, return_tensors="pt"):
        ids = torch.zeros(len(prompts), max_length, dtype=torch.long)
        for i, p in enumerate(prompts):
            codes = [ord(c) % 1000 for c in p][:max_length]
            ids[i, : len(codes)] = torch.tensor(codes)
        return _Tokens(ids)


class ToyCLIPTextModel(nn.Module):
    def __init__(self, dim=768):
        super().__init__()
        self.embed = nn.Embedding(1000, dim)
        self.ln = nn.LayerNorm(dim)

    @property
    def device(self):
        return self.embed.weight.device

    def forward(self, input_ids):
        return (self.ln(self.embed(input_ids)),)


class PromptProcessor:
    @dataclass
    class Config:
        pretrained_model_name_or_path: str = "toy/clip"

    def __init__(self, cache_dir):
        self.cfg = self.Config()
        self.cache_dir = cache_dir

    def load_text_embeddings(self, prompts: List[str]):
        return [
            torch.load(
                os.path.join(self.cache_dir, f"{hash_prompt(self.cfg.pretrained_model_name_or_path, p)}.pt")
            )
            for p in prompts
        ]


class StableDiffusionPromptProcessor(PromptProcessor):
    @staticmethod
    def spawn_func(pretrained_model_name_or_path, prompts, cache_dir):
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        tokenizer = ToyTokenizer()
        text_encoder = ToyCLIPTextModel()

        with torch.no_grad():
            tokens = tokenizer(
                prompts,
                padding="max_length",
                max_length=tokenizer.model_max_length,
                return_tensors="pt",
            )
            text_embeddings = text_encoder(tokens.input_ids.to(text_encoder.device))[0]

        for prompt, embedding in zip(prompts, text_embeddings):
            torch.save(
                embedding,  # want: A
                os.path.join(
                    cache_dir,
                    f"{hash_prompt(pretrained_model_name_or_path, prompt)}.pt",
                ),
            )

        del text_encoder
        cleanup()


class DeepFloydPromptProcessor(PromptProcessor):
    """Same spawn_func as merged in the PR (clone before torch.save)."""

    @staticmethod
    def spawn_func(pretrained_model_name_or_path, prompts, cache_dir):
        tokenizer = ToyTokenizer()
        text_encoder = ToyCLIPTextModel(dim=256)

        with torch.no_grad():
            text_inputs = tokenizer(
                prompts,
                padding="max_length",
                max_length=tokenizer.model_max_length,
                return_tensors="pt",
            )
            text_embeddings = text_encoder(text_inputs.input_ids.to(text_encoder.device))[0]

        for prompt, embedding in zip(prompts, text_embeddings):
            torch.save(
                embedding.clone(),
                os.path.join(
                    cache_dir,
                    f"{hash_prompt(pretrained_model_name_or_path, prompt)}.pt",
                ),
            )

        del text_encoder
        cleanup()


if __name__ == "__main__":
    prompts = ["a hamburger", "a DSLR photo of a corgi", "a zoomed out photo of a llama", "a bonsai"]
    with tempfile.TemporaryDirectory() as d:
        StableDiffusionPromptProcessor.spawn_func("toy/clip", prompts, d)
        sizes = sorted(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print("buggy cache file sizes:", sizes)
        loaded = StableDiffusionPromptProcessor(d).load_text_embeddings(prompts)
        print("loaded storage bytes:", loaded[0].untyped_storage().nbytes())
    with tempfile.TemporaryDirectory() as d:
        DeepFloydPromptProcessor.spawn_func("toy/clip", prompts, d)
        print("fixed cache file sizes:", sorted(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)))
