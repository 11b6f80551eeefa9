# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/19742 — with bitsandbytes double quantization every 4-bit matmul first re-dequantized the nested absmax constants (dequantize_blockwise + offset + float cast) inside dequantize_4bit on each forward; the PR adds dequantize_dq() to the BNB loader so the absmax is materialised once at weight-load time and quant_state.nested is cleared.
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F

NF4 = torch.tensor([-1.0, -0.6962, -0.5251, -0.3949, -0.2844, -0.1848, -0.0911, 0.0,
                    0.0796, 0.1609, 0.2461, 0.3379, 0.4407, 0.5626, 0.7230, 1.0])


@dataclass
class QuantState:
    absmax: torch.Tensor
    code: torch.Tensor
    blocksize: int
    shape: Optional[torch.Size] = None
    dtype: torch.dtype = torch.float32
    offset: Optional[torch.Tensor] = None
    state2: Optional["QuantState"] = None
    nested: bool = False


def dequantize_blockwise(A, quant_state):
    out = quant_state.code[A.long()].view(-1, quant_state.blocksize) * quant_state.absmax[:, None]
    return out.view(-1)


def dequantize_4bit(A, quant_state):
    absmax = quant_state.absmax
    if quant_state.nested:
        absmax = dequantize_blockwise(quant_state.absmax, quant_state.state2)  # want: C
        absmax += quant_state.offset
        if absmax.dtype != torch.float32:
            absmax = absmax.float()  # maybe: C (no-op here; a per-call cast of a load-time constant otherwise)
    out = quant_state.code[A.long()].view(-1, quant_state.blocksize) * absmax[:, None]
    return out.view(quant_state.shape).to(quant_state.dtype)


def _apply_bnb_4bit(x, weight, offsets, out):
    quant_states = weight.bnb_quant_state
    current_index = 0
    for i in range(len(quant_states)):
        output_size = quant_states[i].shape[0]
        w = dequantize_4bit(weight[offsets[i]:offsets[i + 1]], quant_states[i])
        out[:, current_index:current_index + output_size] = F.linear(x, w)
        current_index += output_size
    return out


# ---- fixed: loader dequantizes the double-quant constants once ----
def dequantize_dq(quant_states):
    for _, quant_state in quant_states.items():
        absmax = dequantize_blockwise(quant_state.absmax, quant_state.state2)
        absmax += quant_state.offset
        if absmax.dtype != torch.float32:
            absmax = absmax.float()
        quant_state.absmax = absmax
        quant_state.nested = False
        quant_state.offset = None
        quant_state.state2 = None


def dequantize_4bit_fixed(A, quant_state):
    out = quant_state.code[A.long()].view(-1, quant_state.blocksize) * quant_state.absmax[:, None]
    return out.view(quant_state.shape).to(quant_state.dtype)


def _apply_bnb_4bit_fixed(x, weight, offsets, out):
    quant_states = weight.bnb_quant_state
    current_index = 0
    for i in range(len(quant_states)):
        output_size = quant_states[i].shape[0]
        w = dequantize_4bit_fixed(weight[offsets[i]:offsets[i + 1]], quant_states[i])
        out[:, current_index:current_index + output_size] = F.linear(x, w)
        current_index += output_size
    return out


def quantize_nf4_double(w, blocksize=64, blocksize2=256):
    blocks = w.reshape(-1, blocksize)
    absmax = blocks.abs().amax(dim=1)
    codes = (blocks / absmax[:, None]).unsqueeze(-1).sub(NF4).abs().argmin(-1).to(torch.uint8).view(-1)
    offset = absmax.mean()
    code2 = torch.linspace(-1, 1, 256)
    a2 = (absmax - offset).view(-1, blocksize2)
    absmax2 = a2.abs().amax(dim=1)
    codes2 = ((a2 / absmax2[:, None] + 1) * 127.5).round().clamp(0, 255).to(torch.uint8).view(-1)
    state2 = QuantState(absmax=absmax2, code=code2, blocksize=blocksize2)
    return codes, QuantState(absmax=codes2, code=NF4, blocksize=blocksize, shape=w.shape,
                             offset=offset, state2=state2, nested=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.randn(256, 512)
    codes, qs = quantize_nf4_double(w)
    weight = codes.view(256, 512)
    weight.bnb_quant_state = {0: qs}
    x = torch.randn(8, 512)

    out_b = _apply_bnb_4bit(x, weight, [0, 256], torch.empty(8, 256))
    print("buggy: nested absmax still dequantized on every forward:", qs.nested)
    dequantize_dq(weight.bnb_quant_state)
    out_f = _apply_bnb_4bit_fixed(x, weight, [0, 256], torch.empty(8, 256))
    assert torch.allclose(out_b, out_f, atol=1e-4)
    print("fixed: absmax is a plain fp32 tensor after load:", qs.absmax.dtype, "nested:", qs.nested)
    print("relative error vs fp32 weight:", ((out_f - x @ w.t()).norm() / (x @ w.t()).norm()).item())
