# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/387 — textual_inversion's save_progress torch.saved {placeholder_token: weight[placeholder_token_id]}, one row of the text encoder's token-embedding matrix, so learned_embeds.bin carried the whole vocab x dim table; fix: .detach().cpu() (3.7 KB)
import torch
from torch import nn


def save_progress(text_encoder, placeholder_token, placeholder_token_id, accelerator, save_path):
    learned_embeds = accelerator.unwrap_model(text_encoder).get_input_embeddings().weight[placeholder_token_id]
    learned_embeds_dict = {placeholder_token: learned_embeds}
    torch.save(learned_embeds_dict, save_path)  # want: A


def save_progress_cpu(text_encoder, placeholder_token, placeholder_token_id, accelerator, save_path):
    learned_embeds = accelerator.unwrap_model(text_encoder).get_input_embeddings().weight[placeholder_token_id]
    learned_embeds_dict = {placeholder_token: learned_embeds.detach().cpu()}
    torch.save(learned_embeds_dict, save_path)  # maybe: A (.cpu() copies only when the encoder sits on an accelerator; on a CPU run it is the same view)


def save_progress_cloned(text_encoder, placeholder_token, placeholder_token_id, accelerator, save_path):
    learned_embeds = accelerator.unwrap_model(text_encoder).get_input_embeddings().weight[placeholder_token_id]
    torch.save({placeholder_token: learned_embeds.detach().clone()}, save_path)


def log_embedding_norm(text_encoder, placeholder_token_id, accelerator):
    row = accelerator.unwrap_model(text_encoder).get_input_embeddings().weight[placeholder_token_id]
    return row.detach().norm().item()


class _NoWrap:
    @staticmethod
    def unwrap_model(model):
        return model


class _TextEncoder(nn.Module):
    def __init__(self, vocab=4096, dim=64):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, dim)

    def get_input_embeddings(self):
        return self.token_embedding


if __name__ == "__main__":
    import os
    import tempfile

    enc = _TextEncoder()
    with tempfile.TemporaryDirectory() as tmp:
        big, small = os.path.join(tmp, "a.bin"), os.path.join(tmp, "b.bin")
        save_progress(enc, "<cat-toy>", 4095, _NoWrap(), big)
        save_progress_cloned(enc, "<cat-toy>", 4095, _NoWrap(), small)
        assert os.path.getsize(big) > 4096 * 64 * 4  # the whole table
        assert os.path.getsize(small) < 4096
        save_progress_cpu(enc, "<cat-toy>", 4095, _NoWrap(), small)
        assert os.path.getsize(small) > 4096 * 64 * 4  # CPU run: .cpu() did not copy
    assert log_embedding_norm(enc, 3, _NoWrap()) > 0
    print("ok")
