# source: ndif-team/nnsight https://github.com/ndif-team/nnsight/pull/662 — under the vLLM integration `.save()` stored the per-invoke activation as-is, i.e. a narrowed view of vLLM's persistent inference-mode buffers that fused kernels later mutate in place, so saved values outlived the trace aliasing (and pinning) the whole buffer and showed post-mutation data (issue #661); the fix clones inference-mode tensors when they are saved.
import torch
from torch import nn


class VocabParallelEmbedding(nn.Module):
    """Writes its output into a persistent buffer sized for max_num_batched_tokens (CUDA-graph style)."""

    def __init__(self, vocab, hidden, max_num_batched_tokens):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(vocab, hidden))
        self.max_num_batched_tokens = max_num_batched_tokens
        self.out_buf = None

    def forward(self, input_ids):
        if self.out_buf is None:
            # allocated lazily by the runner, which runs under torch.inference_mode()
            self.out_buf = torch.zeros(self.max_num_batched_tokens, self.weight.shape[1])
        out = self.out_buf[:input_ids.shape[0]]
        torch.index_select(self.weight, 0, input_ids, out=out)
        return out


class TinyVLLMModel(nn.Module):
    def __init__(self, vocab=100, hidden=32, max_num_batched_tokens=4096):
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(vocab, hidden, max_num_batched_tokens)
        self.mlp = nn.Linear(hidden, hidden)

    def forward(self, input_ids):
        hidden = self.embed_tokens(input_ids)
        residual = self.mlp(hidden)
        # fused_add_rms_norm: writes the normalised sum back into the input buffer in place
        hidden.add_(residual)
        hidden.mul_(torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + 1e-6))
        return hidden


class Tracer:
    def __init__(self):
        self.saves = {}
        self.requested = set()
        self.batch_groups = []

    def invoke(self, input_ids):
        start = sum(n for _, n in self.batch_groups)
        self.batch_groups.append((start, input_ids.shape[0]))
        return len(self.batch_groups) - 1

    def save(self, path, invoke_idx, value):
        self.saves[(path, invoke_idx)] = value  # want: A


class TracerFixed(Tracer):
    def save(self, path, invoke_idx, value):
        if isinstance(value, torch.Tensor) and value.is_inference():
            value = value.clone()
        self.saves[(path, invoke_idx)] = value


class Envoy:
    def __init__(self, path, module, tracer):
        self.path = path
        self._module = module
        self._tracer = tracer
        module.register_forward_hook(self._output_hook)

    def _output_hook(self, module, args, output):
        for invoke_idx, (start, n) in enumerate(self._tracer.batch_groups):
            if (self.path, invoke_idx) in self._tracer.requested:
                value = output.narrow(0, start, n)  # maybe: A (per-invoke narrow of the batch activation; harmless if it is not stored)
                self._tracer.save(self.path, invoke_idx, value)

    def save_output(self, invoke_idx):
        self._tracer.requested.add((self.path, invoke_idx))


def run_trace(tracer_cls, model, prompts):
    tracer = tracer_cls()
    envoy = Envoy("model.embed_tokens", model.embed_tokens, tracer)
    expected = {}
    for ids in prompts:
        idx = tracer.invoke(ids)
        envoy.save_output(idx)
        expected[idx] = model.embed_tokens.weight[ids].detach().clone()
    with torch.inference_mode():
        model(torch.cat(prompts))
    return tracer.saves, expected


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyVLLMModel()
    prompts = [torch.randint(0, 100, (5,)), torch.randint(0, 100, (7,))]
    for cls in (Tracer, TracerFixed):
        saves, expected = run_trace(cls, model, prompts)
        for (path, idx), value in saves.items():
            ok = torch.allclose(value, expected[idx])
            print(cls.__name__, path, idx, "payload", value.numel() * value.element_size(),
                  "retained", value.untyped_storage().nbytes(), "matches pre-mutation value", ok)
        if cls is TracerFixed:
            assert all(torch.allclose(v, expected[i]) for (_, i), v in saves.items())
