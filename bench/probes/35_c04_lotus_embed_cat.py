# source: lotus-data/lotus https://github.com/lotus-data/lotus/pull/16 — E5Model.embed appended every batch's pooled embeddings to a list and ran `torch.cat(embeddings, dim=0)` at the end, so all per-batch tensors and the concatenated copy were alive together ("torch.cat needs double the memory"); the fix pre-allocates `torch.empty((total_docs, embed_dim))` and writes each batch into its slice.
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._pytree import tree_flatten
from torch.utils._python_dispatch import TorchDispatchMode


class FakeTokenizer:
    def __call__(self, batch, padding=True, truncation=True, return_tensors="pt"):
        ids = torch.tensor([[hash(w) % 1000 for w in d.split()][:8] + [0] * (8 - min(8, len(d.split()))) for d in batch])
        return {"input_ids": ids, "attention_mask": (ids != 0).long()}


class FakeEncoder(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.emb = nn.Embedding(1000, dim)

    def forward(self, input_ids, attention_mask):
        return type("Out", (), {"last_hidden_state": self.emb(input_ids)})()


class E5Model:
    def __init__(self, device="cpu", normalize=True, batch_size=64):
        self.device = device
        self.batch_size = batch_size
        self.kwargs = {"normalize": normalize}
        self.tokenizer = FakeTokenizer()
        self.model = FakeEncoder()

    def average_pool(self, last_hidden_states, attention_mask):
        last_hidden = last_hidden_states.masked_fill(~attention_mask[..., None].bool(), 0.0)
        return last_hidden.sum(dim=1) / attention_mask.sum(dim=1).clamp(min=1)[..., None]

    def embed(self, docs, **kwargs):
        kwargs = {**self.kwargs, **kwargs}
        batch_size = kwargs.get("batch_size", self.batch_size)
        embeddings = []
        for i, batch_start in enumerate(range(0, len(docs), batch_size)):
            batch = docs[batch_start : batch_start + batch_size]
            with torch.no_grad():
                batch_dict = self.tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
                outputs = self.model(**batch_dict)
                batch_embeddings = self.average_pool(outputs.last_hidden_state, batch_dict["attention_mask"])
                embeddings.append(batch_embeddings)
        embeddings = torch.cat(embeddings, dim=0)  # want: C
        if kwargs["normalize"]:
            embeddings = F.normalize(embeddings, p=2, dim=1)
        return embeddings.numpy(force=True)


class E5ModelFixed(E5Model):
    def embed(self, docs, **kwargs):
        kwargs = {**self.kwargs, **kwargs}
        batch_size = kwargs.get("batch_size", self.batch_size)
        total_docs = len(docs)
        first_batch = self.tokenizer(docs[:1], return_tensors="pt", padding=True, truncation=True)
        embed_dim = self.model(**first_batch).last_hidden_state.size(-1)
        embeddings = torch.empty((total_docs, embed_dim), device=self.device)
        with torch.inference_mode():
            for i, batch_start in enumerate(range(0, total_docs, batch_size)):
                batch = docs[batch_start : batch_start + batch_size]
                batch_dict = self.tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
                outputs = self.model(**batch_dict)
                batch_embeddings = self.average_pool(outputs.last_hidden_state, batch_dict["attention_mask"])
                embeddings[batch_start : batch_start + batch_size] = batch_embeddings
        if kwargs["normalize"]:
            embeddings = F.normalize(embeddings, p=2, dim=1)
        return embeddings.numpy(force=True)


class PeakLive(TorchDispatchMode):
    """Approximate peak of live bytes in fresh storages created by ops (not counting inputs)."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0

    def _dec(self, n):
        self.live -= n

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        ins = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for o in tree_flatten(out)[0]:
            if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() not in ins and o.dim() == 2 and o.size(1) == 256:
                n = o.untyped_storage().nbytes()
                self.live += n
                self.peak = max(self.peak, self.live)
                weakref.finalize(o, self._dec, n)
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    docs = [f"doc {i} about topic {i % 17} and more words {i * 7}" for i in range(1024)]
    m1, m2 = E5Model(), E5ModelFixed()
    m2.model = m1.model
    payload = len(docs) * 256 * 4
    with PeakLive() as p1:
        e1 = m1.embed(docs, normalize=False)
    with PeakLive() as p2:
        e2 = m2.embed(docs, normalize=False)
    assert abs(e1 - e2).max() < 1e-5
    print(f"embedding payload {payload} B; peak live [N,256] bytes: buggy={p1.peak} fixed={p2.peak}")
    assert p1.peak >= 2 * payload > p2.peak
