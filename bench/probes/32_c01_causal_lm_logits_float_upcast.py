# source: huggingface/optimum-habana https://github.com/huggingface/optimum-habana/pull/2007 — The Gaudi *ForCausalLM.forward upcast the whole [batch, seq, vocab] lm_head output with `.float()` on every call, including generation where no loss is computed; the fix keeps the logits in the model dtype and only upcasts inside the `labels is not None` loss branch.
from types import SimpleNamespace

import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layer = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, input_ids, **kwargs):
        hidden_states = self.embed_tokens(input_ids)
        return (torch.tanh(self.layer(hidden_states)),)


class GaudiLlamaForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = TinyDecoder(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids, labels=None, token_idx=None, trim_logits=False, num_logits_to_keep=0):
        outputs = self.model(input_ids=input_ids)
        hidden_states = outputs[0]
        _, seq_len, _ = hidden_states.shape
        if seq_len > 1 and trim_logits and not self.training:
            if token_idx is not None:
                hidden_states = hidden_states.index_select(1, token_idx - 1)
            else:
                hidden_states = hidden_states[:, -1:, :]

        logits = self.lm_head(hidden_states[:, -num_logits_to_keep:, :]).float()  # want: C

        loss = None
        if labels is not None:
            shift_logits = logits[..., :-1, :].flatten(0, 1)
            shift_labels = labels[..., 1:].flatten()
            loss_fct = torch.nn.CrossEntropyLoss()
            loss = loss_fct(shift_logits, shift_labels)
        return loss, logits


class GaudiLlamaForCausalLMFixed(GaudiLlamaForCausalLM):
    def forward(self, input_ids, labels=None, token_idx=None, trim_logits=False, num_logits_to_keep=0):
        outputs = self.model(input_ids=input_ids)
        hidden_states = outputs[0]
        _, seq_len, _ = hidden_states.shape
        if seq_len > 1 and trim_logits and not self.training:
            if token_idx is not None:
                hidden_states = hidden_states.index_select(1, token_idx - 1)
            else:
                hidden_states = hidden_states[:, -1:, :]

        # Only compute necessary logits, and do not upcast them to float if we are not computing the loss
        logits = self.lm_head(hidden_states[:, -num_logits_to_keep:, :])

        loss = None
        if labels is not None:
            # Upcast to float if we need to compute the loss to avoid potential precision issues
            logits = logits.float()
            shift_logits = logits[..., :-1, :].flatten(0, 1)
            shift_labels = labels[..., 1:].flatten()
            loss_fct = torch.nn.CrossEntropyLoss()
            loss = loss_fct(shift_logits, shift_labels)
        return loss, logits


if __name__ == "__main__":
    torch.manual_seed(0)
    config = SimpleNamespace(vocab_size=4096, hidden_size=32)
    buggy = GaudiLlamaForCausalLM(config).to(torch.bfloat16).eval()
    fixed = GaudiLlamaForCausalLMFixed(config).to(torch.bfloat16).eval()
    fixed.load_state_dict(buggy.state_dict())

    input_ids = torch.randint(0, config.vocab_size, (2, 64))
    with torch.no_grad():
        _, logits_b = buggy(input_ids)
        _, logits_f = fixed(input_ids)
        loss_b, _ = buggy(input_ids, labels=input_ids)
        loss_f, _ = fixed(input_ids, labels=input_ids)

    nbytes = lambda t: t.numel() * t.element_size()
    print("buggy logits", logits_b.dtype, nbytes(logits_b), "bytes")
    print("fixed logits", logits_f.dtype, nbytes(logits_f), "bytes")
    assert nbytes(logits_b) == 2 * nbytes(logits_f)
    assert torch.allclose(loss_b, loss_f)
