# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/1995 — saving the first rows of a huge frequency-sorted embedding matrix with `torch.save(x[:10])` wrote the whole 100M-element storage to disk; the reporter's fix (endorsed by the maintainers) was `torch.save(x[:10].clone())`. Reconstructed as a word-vector exporter whose helper hands back a row slice of the embedding weight.
import io
import os
import tempfile

import torch
import torch.nn as nn


class WordEmbeddings(nn.Module):
    """Vocabulary sorted by frequency: row i is the i-th most frequent word."""

    def __init__(self, n_words, dim):
        super().__init__()
        self.id2word = [f"w{i}" for i in range(n_words)]
        self.embeddings = nn.Embedding(n_words, dim)

    def most_frequent(self, n_max):
        return self.embeddings.weight.data[:n_max]  # maybe: A (helper returns a view; harmful only because the caller serialises it)


def export_embeddings(emb, path, n_max=10000):
    vectors = emb.most_frequent(n_max)
    dico = emb.id2word[:n_max]
    torch.save({"dico": dico, "vectors": vectors}, path)  # want: A


def export_embeddings_fixed(emb, path, n_max=10000):
    vectors = emb.most_frequent(n_max).clone()
    dico = emb.id2word[:n_max]
    torch.save({"dico": dico, "vectors": vectors}, path)


def reload_vectors(path):
    return torch.load(path)["vectors"]


if __name__ == "__main__":
    emb = WordEmbeddings(n_words=200_000, dim=16)
    with tempfile.TemporaryDirectory() as d:
        p_bad, p_good = os.path.join(d, "bad.pth"), os.path.join(d, "good.pth")
        export_embeddings(emb, p_bad, n_max=1000)
        export_embeddings_fixed(emb, p_good, n_max=1000)
        s_bad, s_good = os.path.getsize(p_bad), os.path.getsize(p_good)
        v_bad, v_good = reload_vectors(p_bad), reload_vectors(p_good)
        print(f"payload {1000 * 16 * 4} B  buggy file {s_bad} B  fixed file {s_good} B")
        print(f"reloaded storage: buggy {v_bad.untyped_storage().nbytes()} B  fixed {v_good.untyped_storage().nbytes()} B")
        assert torch.equal(v_bad, v_good)
        assert s_bad > 50 * s_good
    buf = io.BytesIO()
    torch.save(emb.most_frequent(10).clone(), buf)
    assert buf.tell() < 4096
