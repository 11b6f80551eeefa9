# source: NVIDIA/TransformerEngine https://github.com/NVIDIA/TransformerEngine/pull/2937 — Graphed.backward in make_graphed_callables returned `b.detach()` of the CUDA-graph static grad buffers, so AccumulateGrad adopted an alias of the static buffer as param.grad and the next replay overwrote it; the fix clones parameter grads before returning them.
import torch
from torch import nn


def _make_graphed_callables(module, sample_input):
    """CPU stand-in: 'replay' recomputes into the same static buffers, like bwd_graph.replay()."""
    params = tuple(module.parameters())
    static_input = sample_input.detach().clone()
    with torch.no_grad():
        static_output = module(static_input).detach()
    static_grad_output = torch.empty_like(static_output)
    static_grad_inputs = tuple(torch.empty_like(t) for t in (static_input,) + params)

    def bwd_graph_replay():
        with torch.enable_grad():
            x = static_input.detach().requires_grad_(True)
            grads = torch.autograd.grad(module(x), (x,) + params, static_grad_output)
        for buf, g in zip(static_grad_inputs, grads):
            buf.copy_(g)

    class Graphed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            static_input.copy_(inputs[0])
            with torch.no_grad():
                static_output.copy_(module(static_input))
            return static_output.detach()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            static_grad_output.copy_(grads[0])
            bwd_graph_replay()
            # Input args that didn't require grad expect a None gradient.
            return tuple(b.detach() if b is not None else b for b in static_grad_inputs)  # want: A

    def functionalized(x):
        return Graphed.apply(x, *params)

    return functionalized, static_grad_inputs


def _make_graphed_callables_fixed(module, sample_input):
    params = tuple(module.parameters())
    param_slots = set(range(1, 1 + len(params)))
    static_input = sample_input.detach().clone()
    with torch.no_grad():
        static_output = module(static_input).detach()
    static_grad_output = torch.empty_like(static_output)
    static_grad_inputs = tuple(torch.empty_like(t) for t in (static_input,) + params)

    def bwd_graph_replay():
        with torch.enable_grad():
            x = static_input.detach().requires_grad_(True)
            grads = torch.autograd.grad(module(x), (x,) + params, static_grad_output)
        for buf, g in zip(static_grad_inputs, grads):
            buf.copy_(g)

    class Graphed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            static_input.copy_(inputs[0])
            with torch.no_grad():
                static_output.copy_(module(static_input))
            return static_output.detach()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            static_grad_output.copy_(grads[0])
            bwd_graph_replay()
            # Parameter grads must own their storage: autograd may keep them past the next replay.
            return tuple(b.clone() if i in param_slots else b for i, b in enumerate(static_grad_inputs))

    def functionalized(x):
        return Graphed.apply(x, *params)

    return functionalized, static_grad_inputs


def run(make):
    torch.manual_seed(0)
    lin = nn.Linear(8, 4)
    fn, static_grads = make(lin, torch.randn(2, 8))
    x1, x2 = torch.randn(2, 8, requires_grad=True), torch.randn(2, 8, requires_grad=True)
    fn(x1).sum().backward()  # micro-batch 1
    g1 = lin.weight.grad.clone()
    aliased = lin.weight.grad.data_ptr() == static_grads[1].data_ptr()
    fn(x2).sum().backward()  # micro-batch 2, accumulate (no zero_grad)
    ref = nn.Linear(8, 4)
    ref.load_state_dict(lin.state_dict())
    (ref(x1).sum() + ref(x2).sum()).backward()
    return aliased, torch.allclose(lin.weight.grad, ref.weight.grad), g1


if __name__ == "__main__":
    aliased, ok, _ = run(_make_graphed_callables)
    print("buggy: param.grad aliases static buffer:", aliased, "| accumulated grad correct:", ok)
    aliased_f, ok_f, _ = run(_make_graphed_callables_fixed)
    print("fixed: param.grad aliases static buffer:", aliased_f, "| accumulated grad correct:", ok_f)
    assert aliased and not ok
    assert not aliased_f and ok_f
