# source: NVIDIA/Megatron-LM megatron/model/transformer.py + megatron/schedules.py ("viewless tensor" change: make_viewless_tensor / deallocate_output_tensor, later megatron/core) — with micro batch size 1, the first stage's [b, s, h] -> [s, b, h] `transpose(0, 1).contiguous()` is a pass-through that returns a view, and the pipeline schedule keeps every in-flight microbatch's output in output_tensors; pseudo-freeing out.data then leaves the whole embedding activation alive through out._base; fix: make_viewless_tensor() before the output is kept
from typing import List

import torch
from torch import nn


class EmbeddingStage(nn.Module):
    """First pipeline stage: word + position embeddings, returned in Megatron's [s, b, h] layout."""

    def __init__(self, vocab=100, seq=64, hidden=32, viewless=False):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(seq, hidden)
        self.viewless = viewless

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1])
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(pos)  # [b, s, h]
        hidden_states = embeddings.transpose(0, 1).contiguous()  # [s, b, h]
        if self.viewless:
            hidden_states = make_viewless_tensor(hidden_states)
        return hidden_states


class _MakeViewlessTensor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        out = torch.empty((1,), dtype=inp.dtype, device=inp.device)
        out.data = inp.data
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def make_viewless_tensor(inp):
    return inp if inp._base is None else _MakeViewlessTensor.apply(inp)


def deallocate_output_tensor(out):
    """Pseudo-free the output once it has been sent to the next stage: only .grad_fn is needed for backward."""
    out.data = torch.empty((1,), device=out.device, dtype=out.dtype)


def forward_warmup(model, microbatches: List[torch.Tensor], send_forward) -> List[torch.Tensor]:
    output_tensors = []
    for input_ids in microbatches:
        output_tensor = model(input_ids)
        send_forward(output_tensor)
        output_tensors.append(output_tensor)  # want: A
        deallocate_output_tensor(output_tensor)
    return output_tensors


if __name__ == "__main__":
    torch.manual_seed(0)
    sent = []
    send = lambda t: sent.append(t.detach().clone())  # noqa: E731  (p2p send copies into a buffer)
    mbs = [torch.randint(0, 100, (1, 64)) for _ in range(4)]  # micro batch size 1

    kept = forward_warmup(EmbeddingStage(), mbs, send)
    act_bytes = 64 * 32 * 4
    for out in kept:
        assert out.numel() == 1 and out._base is not None
        assert out._base.untyped_storage().nbytes() == act_bytes  # pseudo-free freed nothing

    kept_viewless = forward_warmup(EmbeddingStage(viewless=True), mbs, send)
    assert all(o._base is None and o.untyped_storage().nbytes() == 4 for o in kept_viewless)

    two = EmbeddingStage()(torch.randint(0, 100, (2, 64)))
    assert two._base is None  # with micro batch size 2 the .contiguous() really copies
    print("ok: with mbs == 1 each kept pipeline output pinned its [b, s, h] activation via ._base")
