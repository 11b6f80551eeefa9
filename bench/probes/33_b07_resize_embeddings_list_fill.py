# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/2599 — `x[[1, 3]].fill_(100)` did not change x: a list index is advanced indexing and returns a tensor that does not share storage, so the in-place fill hits a temporary (apaszke: only `x[[1, 3]] = 100` is performed atomically). The fix assigns through __setitem__.
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, dim)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed_tokens.weight

    def forward(self, input_ids):
        return self.lm_head(self.embed_tokens(input_ids))


def resize_token_embeddings(model, new_num_tokens, new_token_ids, init_value=0.0):
    old_embeddings = model.embed_tokens
    old_num_tokens, dim = old_embeddings.weight.shape
    new_embeddings = nn.Embedding(new_num_tokens, dim)
    new_embeddings.to(old_embeddings.weight.device, dtype=old_embeddings.weight.dtype)
    n = min(old_num_tokens, new_num_tokens)
    with torch.no_grad():
        new_embeddings.weight.data[:n, :] = old_embeddings.weight.data[:n, :]
        # start the added special tokens from a neutral embedding
        new_embeddings.weight.data[new_token_ids].fill_(init_value)  # want: B
    model.embed_tokens = new_embeddings
    new_lm_head = nn.Linear(dim, new_num_tokens, bias=False)
    new_lm_head.weight = new_embeddings.weight
    model.lm_head = new_lm_head
    return new_embeddings


def resize_token_embeddings_fixed(model, new_num_tokens, new_token_ids, init_value=0.0):
    old_embeddings = model.embed_tokens
    old_num_tokens, dim = old_embeddings.weight.shape
    new_embeddings = nn.Embedding(new_num_tokens, dim)
    new_embeddings.to(old_embeddings.weight.device, dtype=old_embeddings.weight.dtype)
    n = min(old_num_tokens, new_num_tokens)
    with torch.no_grad():
        new_embeddings.weight.data[:n, :] = old_embeddings.weight.data[:n, :]
        new_embeddings.weight.data[new_token_ids] = init_value
    model.embed_tokens = new_embeddings
    new_lm_head = nn.Linear(dim, new_num_tokens, bias=False)
    new_lm_head.weight = new_embeddings.weight
    model.lm_head = new_lm_head
    return new_embeddings


def add_special_tokens(vocab, tokens):
    ids = []
    for tok in tokens:
        if tok not in vocab:
            vocab[tok] = len(vocab)
        ids.append(vocab[tok])
    return ids


if __name__ == "__main__":
    for name, fn in (("buggy", resize_token_embeddings), ("fixed", resize_token_embeddings_fixed)):
        torch.manual_seed(0)
        vocab = {f"tok{i}": i for i in range(100)}
        model = TinyLM(len(vocab), 16)
        new_ids = add_special_tokens(vocab, ["<|im_start|>", "<|im_end|>", "<tool>"])
        emb = fn(model, len(vocab), new_ids)
        rows = emb.weight.data[new_ids]
        zeroed = bool((rows == 0).all())
        print(f"{name}: new token rows zero-initialised = {zeroed}, |rows| = {rows.abs().sum().item():.3f}")
        logits = model(torch.tensor([new_ids]))
        assert zeroed == (name == "fixed")
