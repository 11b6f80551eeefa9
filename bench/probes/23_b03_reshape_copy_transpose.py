# source: deepspeedai/DeepSpeed PR #2489 — module_inject's `transpose(data)` wrote the transposed weight back with `data.reshape(-1).copy_(...)`; for a non-contiguous parameter (HF low_cpu_mem_usage loading) reshape returns a copy, so the in-place copy was lost. Fix: `data = data.contiguous()` first.
import torch


def transpose(data: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        data1 = data.transpose(-1, -2).reshape(-1)
        data.reshape(-1).copy_(data1)  # want: B
        data1 = None
    return data.reshape(data.shape[-1], data.shape[-2])


def transpose_fixed(data: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        data = data.contiguous()
        data1 = data.transpose(-1, -2).reshape(-1)
        data.reshape(-1).copy_(data1)  # `data` was just made contiguous: reshape is a view
        data1 = None
    return data.reshape(data.shape[-1], data.shape[-2])


def transpose_view(data: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        data1 = data.transpose(-1, -2).reshape(-1)
        data.view(-1).copy_(data1)  # view never copies (it raises instead): the write lands
    return data.view(data.shape[-1], data.shape[-2])


class HFBertLayerPolicy:
    def __init__(self, attn_qkvw: torch.Tensor, inter_w: torch.Tensor):
        self.qkvw = attn_qkvw
        self.inter_w = inter_w

    def attention(self):
        return transpose(self.qkvw)

    def mlp(self):
        return transpose_fixed(self.inter_w)


if __name__ == "__main__":
    base = torch.arange(24.0).reshape(4, 6)
    loaded = base.t()  # a parameter that arrives as a transposed (non-contiguous) view
    expected = loaded.transpose(-1, -2).contiguous()
    assert not torch.equal(transpose(loaded.clone()), expected)  # the copy_ went into a temporary
    assert torch.equal(transpose_fixed(loaded), expected)
    print("ok: copy_ into reshape() of a non-contiguous tensor is lost")
