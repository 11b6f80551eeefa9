# source: huggingface/transformers https://github.com/huggingface/transformers/pull/33902 — the *ForCausalLM forward upcast the full (batch, seq, vocab) logits to fp32 with `self.lm_head(...).float()` even at inference when no loss is computed (peak memory 18.5 GiB vs 10.6 GiB for Llama-3.1-8B); the fix removes the unconditional .float() and only upcasts inside the `labels is not None` loss branch.
import torch
from torch import nn
from torch.nn import CrossEntropyLoss


class CausalLMOutputWithPast(dict):
    def __getattr__(self, name):
        return self[name]


class TinyModel(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.norm = nn.LayerNorm(hidden_size)

    def forward(self, input_ids):
        return (self.norm(self.embed_tokens(input_ids)),)


class PhiForCausalLM(nn.Module):
    def __init__(self, vocab_size=512, hidden_size=32):
        super().__init__()
        self.vocab_size = vocab_size
        self.model = TinyModel(vocab_size, hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=True)

    def forward(self, input_ids=None, labels=None, num_logits_to_keep=0):
        outputs = self.model(input_ids)
        hidden_states = outputs[0]
        # Only compute necessary logits, and do not upcast them to float if we are not computing the loss
        logits = self.lm_head(hidden_states[:, -num_logits_to_keep:, :]).float()  # want: C

        loss = None
        if labels is not None:
            # Upcast to float if we need to compute the loss to avoid potential precision issues
            logits = logits.float()
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.vocab_size)
            shift_labels = shift_labels.view(-1)
            loss = loss_fct(shift_logits, shift_labels)

        return CausalLMOutputWithPast(loss=loss, logits=logits)


class PhiForCausalLMFixed(PhiForCausalLM):
    def forward(self, input_ids=None, labels=None, num_logits_to_keep=0):
        outputs = self.model(input_ids)
        hidden_states = outputs[0]
        logits = self.lm_head(hidden_states[:, -num_logits_to_keep:, :])

        loss = None
        if labels is not None:
            # Upcast to float if we need to compute the loss to avoid potential precision issues
            logits = logits.float()
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            loss = loss_fct(shift_logits.view(-1, self.vocab_size), shift_labels.view(-1))

        return CausalLMOutputWithPast(loss=loss, logits=logits)


@torch.no_grad()
def next_token(model, input_ids):
    out = model(input_ids=input_ids, num_logits_to_keep=0)
    return out.logits[:, -1, :].argmax(-1, keepdim=True), out.logits


if __name__ == "__main__":
    torch.manual_seed(0)
    a = PhiForCausalLM().to(torch.bfloat16)
    b = PhiForCausalLMFixed().to(torch.bfloat16)
    b.load_state_dict(a.state_dict())
    ids = torch.randint(0, 512, (2, 64))
    ta, la = next_token(a, ids)
    tb, lb = next_token(b, ids)
    print("buggy logits:", la.dtype, la.untyped_storage().nbytes(), "bytes")
    print("fixed logits:", lb.dtype, lb.untyped_storage().nbytes(), "bytes")
    assert la.untyped_storage().nbytes() == 2 * lb.untyped_storage().nbytes()
    loss = b(input_ids=ids, labels=ids).loss
    print("loss (fp32 only in loss branch):", loss.detach())
