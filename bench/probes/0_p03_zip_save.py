import torch
from transformers import AutoModel


def embed(prompts, ids, out):
    encoder = AutoModel.from_pretrained("x")
    with torch.no_grad():
        for prompt, emb in zip(prompts, encoder(ids)[0]):
            torch.save(emb, f"{out}/{prompt}.pt")  # want: A
