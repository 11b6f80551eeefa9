# source: bitsandbytes-foundation/bitsandbytes https://github.com/bitsandbytes-foundation/bitsandbytes/commit/d6e25b5f5ea36c1565145da773fbf0f842b1c235 — `MatMul8bitLt.backward` cast `grad_output` to fp16 for the int8 kernels and then tried to restore the caller's precision with `grad_output.to(grad_output_dtype)` under the comment "Cast grad_A back to grad_output_dtype". The call's result was discarded (and even the assigned version from "bug fix" e2a7576 cast the wrong tensor), so grad_A and grad_bias were returned in fp16 for fp32/bf16 inputs. The "change typecast behavior" commit records the input dtypes in forward and returns `grad_A ... .to(ctx.A_dtype)` / `grad_bias ... .to(ctx.bias_dtype)`.
from types import SimpleNamespace

import torch


class MatmulLtState:
    def __init__(self, CB, SCB):
        self.CB = CB  # int8 row-wise quantized weight
        self.SCB = SCB  # per-row absmax
        self.CBt = None
        self.threshold = 0.0


def quantize_rowwise(B):
    SCB = B.abs().amax(dim=1).float()
    CB = torch.round(B / SCB.unsqueeze(1) * 127).to(torch.int8)
    return CB, SCB


class MatMul8bitLt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B, out=None, bias=None, state=MatmulLtState):
        input_shape = A.shape
        CB = state.CB.half() * (state.SCB.unsqueeze(1) / 127.0).half()
        output = torch.nn.functional.linear(A.to(torch.float16), CB, None if bias is None else bias.half())
        ctx.state = state
        ctx.grad_shape = input_shape
        ctx.A_dtype, ctx.B_dtype, ctx.bias_dtype = A.dtype, B.dtype, None if bias is None else bias.dtype
        return output.to(A.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        req_gradA, _, _, req_gradBias, _ = ctx.needs_input_grad
        state = ctx.state

        # Cast grad_output to fp16
        grad_output_dtype = grad_output.dtype
        grad_output = grad_output.to(torch.float16)

        grad_A = grad_B = grad_bias = None
        if req_gradA:
            CB = state.CB.half()
            SCB = (state.SCB.unsqueeze(1) / 127.0).half()
            CB *= SCB
            grad_A = torch.mm(grad_output, CB).view(ctx.grad_shape)
        if req_gradBias:
            grad_bias = grad_output.sum(0)

        # Cast grad_A back to grad_output_dtype
        grad_output.to(grad_output_dtype)  # want: B

        return grad_A, grad_B, None, grad_bias, None


class MatMul8bitLtFixed(MatMul8bitLt):
    @staticmethod
    def backward(ctx, grad_output):
        req_gradA, _, _, req_gradBias, _ = ctx.needs_input_grad
        state = ctx.state
        grad_A = grad_B = grad_bias = None

        if req_gradBias:
            # compute grad_bias first before changing grad_output dtype
            grad_bias = grad_output.sum(0).to(ctx.bias_dtype)

        grad_output = grad_output.to(torch.float16)
        if req_gradA:
            CB = state.CB.to(torch.float16)
            SCB = (state.SCB.unsqueeze(1) / 127.0).half()
            CB *= SCB
            grad_A = torch.mm(grad_output, CB).view(ctx.grad_shape).to(ctx.A_dtype)

        return grad_A, grad_B, None, grad_bias, None


def run_backward(fn_cls, A, W, bias, state, grad_output):
    ctx = SimpleNamespace(state=state, grad_shape=A.shape, needs_input_grad=(True, False, False, True, False),
                          A_dtype=A.dtype, B_dtype=W.dtype, bias_dtype=bias.dtype)
    return fn_cls.backward(ctx, grad_output)


if __name__ == "__main__":
    torch.manual_seed(0)
    W = torch.randn(6, 8)
    CB, SCB = quantize_rowwise(W)
    state = MatmulLtState(CB, SCB)
    A = torch.randn(4, 8, requires_grad=True)
    bias = torch.zeros(6, requires_grad=True)
    out = MatMul8bitLt.apply(A, W, None, bias, state)
    assert out.dtype == torch.float32

    g = torch.randn(4, 6)
    grad_A, _, _, grad_bias, _ = run_backward(MatMul8bitLt, A, W, bias, state, g)
    assert grad_A.dtype == torch.float16 and grad_bias.dtype == torch.float16
    grad_A_f, _, _, grad_bias_f, _ = run_backward(MatMul8bitLtFixed, A, W, bias, state, g)
    assert grad_A_f.dtype == torch.float32 and grad_bias_f.dtype == torch.float32
    assert torch.allclose(grad_A.float(), grad_A_f, atol=1e-2)
    print("ok")
