# source: PrimeIntellect-ai/prime-rl https://github.com/PrimeIntellect-ai/prime-rl/pull/899 — The shared trainer helper forward() returned model(...).logits.float(), so the SFT trainer materialized a float32 copy of the full [batch, seq, vocab] bf16 logits on every micro step (and then called .contiguous() on it, a no-op on an already contiguous tensor). The PR ("Do not cast to FP32 on SFT trainer ... fix memory issue") returns the native-dtype logits from forward(), drops the .contiguous() in SFT, and keeps the .float() only in the RL trainer where fp32 logprobs are needed.
from collections import defaultdict
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn.functional import cross_entropy
from torch.utils._python_dispatch import TorchDispatchMode


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=96, hidden=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.mlp = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, position_ids):
        h = self.embed_tokens(input_ids) + torch.tanh(self.mlp(self.embed_tokens(input_ids)))
        return SimpleNamespace(logits=self.lm_head(h))


def forward(model: nn.Module, input_ids: Tensor, position_ids: Tensor) -> Tensor:
    return model(input_ids=input_ids, position_ids=position_ids).logits.float()  # want: C


def train_micro_steps(model, micro_batches, grad_accum_steps):
    tensors = defaultdict(list)
    for micro_step in range(grad_accum_steps):
        micro_batch = micro_batches[micro_step]
        input_ids = micro_batch["input_ids"]
        position_ids = micro_batch["position_ids"]
        target_ids = micro_batch["target_ids"]
        loss_mask = micro_batch["loss_mask"]
        assert input_ids.shape[0] == position_ids.shape[0]

        logits = forward(model, input_ids, position_ids).contiguous()  # want: C
        B, L, V = logits.shape

        loss = cross_entropy(logits.view(-1, V), target_ids.view(-1), reduction="none").view(B, L)
        tensors["loss"].append(loss[loss_mask].detach().to("cpu"))
        loss = loss[loss_mask].mean()
        loss /= grad_accum_steps

        del logits
        loss.backward()
    return tensors


def forward_fixed(model: nn.Module, input_ids: Tensor, position_ids: Tensor) -> Tensor:
    return model(input_ids=input_ids, position_ids=position_ids).logits


def train_micro_steps_fixed(model, micro_batches, grad_accum_steps):
    tensors = defaultdict(list)
    for micro_step in range(grad_accum_steps):
        micro_batch = micro_batches[micro_step]
        input_ids = micro_batch["input_ids"]
        position_ids = micro_batch["position_ids"]
        target_ids = micro_batch["target_ids"]
        loss_mask = micro_batch["loss_mask"]
        assert input_ids.shape[0] == position_ids.shape[0]

        logits = forward_fixed(model, input_ids, position_ids)
        B, L, V = logits.shape

        loss = cross_entropy(logits.view(-1, V), target_ids.view(-1), reduction="none").view(B, L)
        tensors["loss"].append(loss[loss_mask].detach().to("cpu"))
        loss = loss[loss_mask].mean()
        loss /= grad_accum_steps

        del logits
        loss.backward()
    return tensors


class LogitCopies(TorchDispatchMode):
    def __init__(self, numel):
        super().__init__()
        self.numel, self.fp32_logit_copies = numel, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten._to_copy.default and out.numel() == self.numel and out.dtype == torch.float32:
            self.fp32_logit_copies += 1
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    B, L, V, steps = 2, 12, 96, 2
    batches = []
    for _ in range(steps):
        ids = torch.randint(0, V, (B, L + 1))
        batches.append({"input_ids": ids[:, :-1].contiguous(), "target_ids": ids[:, 1:].contiguous(),
                        "position_ids": torch.arange(L).expand(B, L), "loss_mask": torch.rand(B, L) > 0.2})
    base = TinyCausalLM(V).to(torch.bfloat16)
    models = {fn: TinyCausalLM(V).to(torch.bfloat16) for fn in (train_micro_steps, train_micro_steps_fixed)}
    for m in models.values():
        m.load_state_dict(base.state_dict())

    out, copies = {}, {}
    for fn, model in models.items():
        with LogitCopies(B * L * V) as lc:
            out[fn] = fn(model, batches, steps)
        copies[fn] = lc.fp32_logit_copies
    for lb, lf in zip(out[train_micro_steps]["loss"], out[train_micro_steps_fixed]["loss"]):
        assert torch.allclose(lb.float(), lf.float(), atol=0.1)
    assert copies[train_micro_steps] == steps and copies[train_micro_steps_fixed] == 0
    logits = forward_fixed(base, batches[0]["input_ids"], batches[0]["position_ids"])
    assert logits.dtype == torch.bfloat16
    up = logits.float()
    assert up.data_ptr() != logits.data_ptr() and up.contiguous().data_ptr() == up.data_ptr()
    print("ok", list(copies.values()))
