# source: linkedin/Liger-Kernel https://github.com/linkedin/Liger-Kernel/pull/308 — the patched causal-LM lce_forward ran `logits = logits.float()` on the full [B, T, V] lm_head output even at inference when no labels are given, materialising a second fp32 copy of the logits; the fix moves the upcast inside `if labels is not None:` so it only happens when the loss is computed.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import CrossEntropyLoss


class Config:
    hidden_size = 16
    vocab_size = 512
    pretraining_tp = 1


class LigerFusedLinearCrossEntropyLoss(nn.Module):
    """Stand-in for the fused kernel: never materialises the full [N, V] logits."""

    def __init__(self, chunk_size=32):
        super().__init__()
        self.chunk_size = chunk_size

    def forward(self, lin_weight, _input, target):
        total = _input.new_zeros((), dtype=torch.float32)
        for start in range(0, _input.shape[0], self.chunk_size):
            h = _input[start:start + self.chunk_size]
            y = target[start:start + self.chunk_size]
            total = total + F.cross_entropy(F.linear(h, lin_weight), y, reduction="sum")
        return total / _input.shape[0]


class TinyCausalLM(nn.Module):
    def __init__(self, config, dtype=torch.bfloat16):
        super().__init__()
        self.config = config
        self.model = nn.Embedding(config.vocab_size, config.hidden_size, dtype=dtype)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False, dtype=dtype)


def lce_forward(self, input_ids, labels=None):
    hidden_states = self.model(input_ids)

    loss = None
    logits = None
    # if in training mode, don't materialize logits
    if self.training and (labels is not None):
        shift_hidden_states = hidden_states[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        shift_hidden_states = shift_hidden_states.view(-1, self.config.hidden_size)
        shift_labels = shift_labels.view(-1)
        lce = LigerFusedLinearCrossEntropyLoss()
        loss = lce(self.lm_head.weight, shift_hidden_states, shift_labels)
    else:
        logits = self.lm_head(hidden_states)
        logits = logits.float()  # want: C
        if labels is not None:
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            # Flatten the tokens
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.config.vocab_size)
            shift_labels = shift_labels.view(-1)
            # Enable model parallelism
            shift_labels = shift_labels.to(shift_logits.device)
            loss = loss_fct(shift_logits, shift_labels)

    return loss, logits


def lce_forward_fixed(self, input_ids, labels=None):
    hidden_states = self.model(input_ids)

    loss = None
    logits = None
    # if in training mode, don't materialize logits
    if self.training and (labels is not None):
        shift_hidden_states = hidden_states[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        shift_hidden_states = shift_hidden_states.view(-1, self.config.hidden_size)
        shift_labels = shift_labels.view(-1)
        lce = LigerFusedLinearCrossEntropyLoss()
        loss = lce(self.lm_head.weight, shift_hidden_states, shift_labels)
    else:
        logits = self.lm_head(hidden_states)
        if labels is not None:
            # Upcast to float if we need to compute the loss to avoid potential precision issues
            logits = logits.float()
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            # Flatten the tokens
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.config.vocab_size)
            shift_labels = shift_labels.view(-1)
            # Enable model parallelism
            shift_labels = shift_labels.to(shift_logits.device)
            loss = loss_fct(shift_logits, shift_labels)

    return loss, logits


if __name__ == "__main__":
    torch.manual_seed(0)
    m = TinyCausalLM(Config()).eval()
    ids = torch.randint(0, Config.vocab_size, (2, 64))

    with torch.no_grad():
        _, logits_a = lce_forward(m, ids)
        _, logits_b = lce_forward_fixed(m, ids)
        loss_a, _ = lce_forward(m, ids, labels=ids)
        loss_b, _ = lce_forward_fixed(m, ids, labels=ids)
    m.train()
    tr_a, _ = lce_forward(m, ids, labels=ids)
    tr_b, _ = lce_forward_fixed(m, ids, labels=ids)
    assert torch.allclose(tr_a, tr_b)

    assert torch.allclose(logits_a, logits_b.float())
    assert torch.allclose(loss_a, loss_b)
    bytes_a = logits_a.untyped_storage().nbytes()
    bytes_b = logits_b.untyped_storage().nbytes()
    print("inference logits bytes: buggy", bytes_a, logits_a.dtype, "| fixed", bytes_b, logits_b.dtype)
    assert bytes_a == 2 * bytes_b
