# source: huggingface/trl https://github.com/huggingface/trl/pull/6046 — the shift-by-one blocks in KTO/TPO/DPO(Liger)/SFT did `logits[:, :-1, :].contiguous()` (plus `.contiguous()` on the shifted labels/mask), a full (batch, seq, vocab) copy inherited from the transformers CausalLM loss where .view() needed it; here the slices only feed selective_log_softmax (a gather) and masking, which accept strided tensors, so the fix drops the .contiguous() calls.
import torch
from torch import nn
import torch.nn.functional as F


def selective_log_softmax(logits, index):
    if logits.dtype in [torch.float32, torch.float64]:
        selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
        # loop to reduce peak mem consumption
        logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
        per_token_logps = selected_logits - logsumexp_values
    else:
        per_token_logps = []
        for row_logits, row_labels in zip(logits, index):
            row_logps = F.log_softmax(row_logits, dim=-1)
            row_per_token_logps = row_logps.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1)
            per_token_logps.append(row_per_token_logps)
        per_token_logps = torch.stack(per_token_logps)
    return per_token_logps


class TinyLM(nn.Module):
    def __init__(self, vocab=1024, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None):
        return type("Out", (), {"logits": self.lm_head(self.emb(input_ids))})()


def compute_completion_logps(model, batch):
    outputs = model(batch["completion_input_ids"], attention_mask=batch["completion_attention_mask"])
    shift_logits = outputs.logits[:, :-1, :].contiguous()  # want: C
    shift_labels = batch["completion_input_ids"][:, 1:].contiguous()  # want: C
    shift_completion_mask = batch["completion_mask"][:, 1:].contiguous()  # maybe: C (small int mask copy)
    per_token_logps = selective_log_softmax(shift_logits, shift_labels)
    per_token_logps = per_token_logps * shift_completion_mask
    return per_token_logps.sum(-1), shift_logits


def compute_completion_logps_fixed(model, batch):
    outputs = model(batch["completion_input_ids"], attention_mask=batch["completion_attention_mask"])
    shift_logits = outputs.logits[:, :-1, :]
    shift_labels = batch["completion_input_ids"][:, 1:]
    shift_completion_mask = batch["completion_mask"][:, 1:]
    per_token_logps = selective_log_softmax(shift_logits, shift_labels)
    per_token_logps = per_token_logps * shift_completion_mask
    return per_token_logps.sum(-1), shift_logits


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLM()
    ids = torch.randint(0, 1024, (4, 96))
    batch = {
        "completion_input_ids": ids,
        "completion_attention_mask": torch.ones_like(ids),
        "completion_mask": (torch.arange(96) >= 32).long().expand(4, 96),
    }
    with torch.no_grad():
        la, sa = compute_completion_logps(model, batch)
        lb, sb = compute_completion_logps_fixed(model, batch)
        assert torch.allclose(la, lb, atol=1e-4)
        full = model(ids).logits
        print("logits bytes:", full.untyped_storage().nbytes())
        print("buggy shift_logits owns a new copy:", sa.untyped_storage().nbytes(), "bytes")
        print("fixed shift_logits is a strided view:", not sb.is_contiguous(), sb.untyped_storage().nbytes(), "bytes (shared)")
