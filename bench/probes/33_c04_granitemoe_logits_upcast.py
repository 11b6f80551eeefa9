# source: huggingface/transformers https://github.com/huggingface/transformers/pull/42753 — GraniteMoe/GraniteMoeHybrid ForCausalLM.forward did `logits = logits.float()` before calling self.loss_function, which upcasts again itself, so a full fp32 copy of the [B, S, vocab] logits was made and returned next to the bf16 one (issue #42709); the PR removed the model-side upcast.
from dataclasses import dataclass

import torch
from torch import nn


def fixed_cross_entropy(source, target, num_items_in_batch=None, ignore_index=-100, **kwargs):
    reduction = "sum" if num_items_in_batch is not None else "mean"
    loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
    if reduction == "sum":
        loss = loss / num_items_in_batch
    return loss


def ForCausalLMLoss(logits, labels, vocab_size, num_items_in_batch=None, ignore_index=-100, shift_labels=None, **kwargs):
    # Upcast to float if we need to compute the loss to avoid potential precision issues
    logits = logits.float()  # maybe: C (the loss's own upcast, kept by the fix; temporary inside the loss)
    if shift_labels is None:
        labels = nn.functional.pad(labels, (0, 1), value=ignore_index)
        shift_labels = labels[..., 1:].contiguous()
    logits = logits.view(-1, vocab_size)
    shift_labels = shift_labels.view(-1).to(logits.device)
    return fixed_cross_entropy(logits, shift_labels, num_items_in_batch, ignore_index, **kwargs)


@dataclass
class GraniteMoeHybridConfig:
    vocab_size: int = 8192
    hidden_size: int = 64
    logits_scaling: float = 8.0


@dataclass
class CausalLMOutput:
    loss: torch.Tensor = None
    logits: torch.Tensor = None


class GraniteMoeHybridForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = nn.Sequential(nn.Embedding(config.vocab_size, config.hidden_size), nn.LayerNorm(config.hidden_size))
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.loss_function = ForCausalLMLoss

    def forward(self, input_ids, labels=None, logits_to_keep=0, **kwargs):
        hidden_states = self.model(input_ids)
        # Only compute necessary logits
        slice_indices = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        logits = self.lm_head(hidden_states[:, slice_indices, :])
        logits = logits / self.config.logits_scaling

        loss = None
        if labels is not None:
            # Upcast to float if we need to compute the loss to avoid potential precision issues
            logits = logits.float()  # want: C
            # Flatten the tokens
            loss = self.loss_function(logits, labels, vocab_size=self.config.vocab_size, **kwargs)
        return CausalLMOutput(loss=loss, logits=logits)


class GraniteMoeHybridForCausalLMFixed(GraniteMoeHybridForCausalLM):
    def forward(self, input_ids, labels=None, logits_to_keep=0, **kwargs):
        hidden_states = self.model(input_ids)
        slice_indices = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        logits = self.lm_head(hidden_states[:, slice_indices, :])
        logits = logits / self.config.logits_scaling

        loss = None
        if labels is not None:
            loss = self.loss_function(logits, labels, vocab_size=self.config.vocab_size, **kwargs)
        return CausalLMOutput(loss=loss, logits=logits)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = GraniteMoeHybridConfig()
    buggy = GraniteMoeHybridForCausalLM(cfg).to(torch.bfloat16)
    fixed = GraniteMoeHybridForCausalLMFixed(cfg).to(torch.bfloat16)
    fixed.load_state_dict(buggy.state_dict())
    ids = torch.randint(0, cfg.vocab_size, (2, 128))
    out_b = buggy(ids, labels=ids)
    out_f = fixed(ids, labels=ids)
    assert torch.allclose(out_b.loss, out_f.loss)
    print("buggy returned logits:", out_b.logits.dtype, out_b.logits.untyped_storage().nbytes(), "bytes")
    print("fixed returned logits:", out_f.logits.dtype, out_f.logits.untyped_storage().nbytes(), "bytes")
    out_b.loss.backward()
    out_f.loss.backward()
