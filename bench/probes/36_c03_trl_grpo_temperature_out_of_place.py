# source: huggingface/trl https://github.com/huggingface/trl/pull/5254 — GRPOTrainer._get_per_token_logps_and_entropies scaled the model logits by the sampling temperature with `logits = logits / self.temperature`, which allocates a second (B, logits_to_keep, vocab) tensor per chunk only to rebind the name; the fix divides the logits in place with `logits.div_(self.temperature)`.
import torch
import torch.nn.functional as F


def selective_log_softmax(logits, index):
    selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
    logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
    return selected_logits - logsumexp_values


class TinyCausalLM(torch.nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.lm_head = torch.nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None, **kwargs):
        return type("Out", (), {"logits": self.lm_head(self.embed(input_ids))})


class GRPOTrainer:
    def __init__(self, temperature):
        self.temperature = temperature
        self.seen_ptrs = []

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None):
        batch_size = batch_size or input_ids.size(0)
        all_logps = []
        for start in range(0, input_ids.size(0), batch_size):
            input_ids_batch = input_ids[start: start + batch_size]
            attention_mask_batch = attention_mask[start: start + batch_size]
            logits = model(input_ids=input_ids_batch, attention_mask=attention_mask_batch).logits
            raw_ptr = logits.data_ptr()
            logits = logits[:, :-1, :]  # (B, L-1, H)
            logits = logits[:, -logits_to_keep:, :]  # (B, logits_to_keep, H)
            # Divide logits by sampling temperature.
            logits = logits / self.temperature  # want: C
            self.seen_ptrs.append((raw_ptr, logits.untyped_storage().data_ptr()))
            completion_ids = input_ids_batch[:, -logits_to_keep:]
            all_logps.append(selective_log_softmax(logits, completion_ids))
        return torch.cat(all_logps, dim=0)

    def _get_per_token_logps_fixed(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None):
        batch_size = batch_size or input_ids.size(0)
        all_logps = []
        for start in range(0, input_ids.size(0), batch_size):
            input_ids_batch = input_ids[start: start + batch_size]
            attention_mask_batch = attention_mask[start: start + batch_size]
            logits = model(input_ids=input_ids_batch, attention_mask=attention_mask_batch).logits
            raw_ptr = logits.data_ptr()
            logits = logits[:, :-1, :]
            logits = logits[:, -logits_to_keep:, :]
            logits.div_(self.temperature)
            self.seen_ptrs.append((raw_ptr, logits.untyped_storage().data_ptr()))
            completion_ids = input_ids_batch[:, -logits_to_keep:]
            all_logps.append(selective_log_softmax(logits, completion_ids))
        return torch.cat(all_logps, dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyCausalLM(vocab=500, hidden=8)
    ids = torch.randint(0, 500, (4, 10))
    mask = torch.ones_like(ids)
    bug, fix = GRPOTrainer(0.7), GRPOTrainer(0.7)
    lp_bug = bug._get_per_token_logps(model, ids, mask, logits_to_keep=4, batch_size=2)
    lp_bug.sum().backward()
    g_bug = model.lm_head.weight.grad.clone()
    model.zero_grad()
    lp_fix = fix._get_per_token_logps_fixed(model, ids, mask, logits_to_keep=4, batch_size=2)
    lp_fix.sum().backward()
    assert torch.allclose(lp_bug, lp_fix, atol=1e-6)
    assert torch.allclose(g_bug, model.lm_head.weight.grad, atol=1e-6)
    assert all(raw != scaled for raw, scaled in bug.seen_ptrs)  # new full-size buffer per chunk
    assert all(raw == scaled for raw, scaled in fix.seen_ptrs)  # same storage as model output
    print("out-of-place temperature scaling allocated", len(bug.seen_ptrs), "extra logits buffers")
