# source: scitix/InstantTensor https://github.com/scitix/InstantTensor/pull/11 — safe_open.tensors() yielded zero-copy views into its device ring buffer, which is overwritten when the ring wraps and freed in __exit__; vLLM loaders that materialised the stream (RobertaEmbeddingModel: `list(weights)`) read overwritten or dangling data (issues #8/#9); the fix makes safe_open yield owning clones by default.
import torch
from torch import nn


class safe_open:
    def __init__(self, checkpoint, buffer_size):
        self.checkpoint = checkpoint
        self.buffer_size = buffer_size

    def __enter__(self):
        self._buffer = torch.empty(self.buffer_size, dtype=torch.uint8)
        return self

    def __exit__(self, *exc):
        # instanttensor._C.close(loader_handle) releases the buffer; poison it to make reuse visible
        self._buffer.fill_(0xFF)

    def tensors(self):
        offset = 0
        for name, src in self.checkpoint.items():
            nbytes = src.numel() * src.element_size()
            if offset + nbytes > self.buffer_size:
                offset = 0  # ring buffer wraps: earlier slots get reused
            slot = self._buffer[offset:offset + nbytes]
            slot.copy_(src.reshape(-1).view(torch.uint8))  # stands in for the async device read
            offset += nbytes
            yield name, slot.view(src.dtype).view(src.shape)  # want: A


class safe_open_fixed(safe_open):
    def tensors(self):
        offset = 0
        for name, src in self.checkpoint.items():
            nbytes = src.numel() * src.element_size()
            if offset + nbytes > self.buffer_size:
                offset = 0
            slot = self._buffer[offset:offset + nbytes]
            slot.copy_(src.reshape(-1).view(torch.uint8))
            offset += nbytes
            # copy=True: callers own what they receive, across wraps and after __exit__
            yield name, slot.view(src.dtype).view(src.shape).clone()


def instanttensor_weights_iterator(checkpoint, buffer_size, opener=safe_open):
    with opener(checkpoint, buffer_size) as f:
        yield from f.tensors()


class RobertaEmbeddingModel(nn.Module):
    def __init__(self, vocab=64, hidden=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(vocab, hidden)
        self.dense = nn.Linear(hidden, hidden, bias=False)

    @torch.no_grad()
    def load_weights(self, weights):
        weights_list = list(weights)  # maybe: A (materialises every yielded view past the iterator)
        params = dict(self.named_parameters())
        for name, w in weights_list:
            params[name[len("roberta."):]].copy_(w)


if __name__ == "__main__":
    torch.manual_seed(0)
    ref = RobertaEmbeddingModel()
    ckpt = {"roberta." + n: p.detach().clone() for n, p in ref.named_parameters()}
    ring = 64 * 16 * 4 + 512  # smaller than the checkpoint, like a large-model ring buffer
    for opener in (safe_open, safe_open_fixed):
        m = RobertaEmbeddingModel()
        m.load_weights(instanttensor_weights_iterator(ckpt, ring, opener))
        ok = all(torch.equal(a, b) for a, b in zip(m.parameters(), ref.parameters()))
        print(f"{opener.__name__}: loaded weights match checkpoint: {ok}")
        assert ok == (opener is safe_open_fixed)
