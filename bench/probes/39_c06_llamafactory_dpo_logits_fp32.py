# source: hiyouga/LlamaFactory https://github.com/hiyouga/LlamaFactory/pull/10720 — CustomDPOTrainer.concatenated_forward upcast the policy/reference logits for the whole chosen+rejected batch with `.logits.to(torch.float32)` and get_batch_logps then ran log_softmax over that full [batch, seq, vocab] fp32 copy just to gather one log-prob per label, which OOMs preference training on long sequences with large vocabularies. The PR keeps the logits in the model dtype and computes the target-token log-probs in sequence chunks with gather/logsumexp, so only a [batch, chunk, vocab] fp32 temporary exists at a time.
from typing import Optional

import torch
import torch.nn as nn

IGNORE_INDEX = -100


def get_batch_logps(logits, labels, label_pad_token_id: int = IGNORE_INDEX, ld_alpha: Optional[float] = None):
    if logits.shape[:-1] != labels.shape:
        raise ValueError("Logits (batchsize x seqlen) and labels must have the same shape.")
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    loss_mask = labels != label_pad_token_id
    labels[labels == label_pad_token_id] = 0
    per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)  # maybe: C (full-vocab log_softmax temporary over the fp32 logits)
    return (per_token_logps * loss_mask).sum(-1), loss_mask.sum(-1)


def get_batch_logps_memory_efficient(logits, labels, label_pad_token_id: int = IGNORE_INDEX, chunk_size: int = 4):
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    loss_mask = labels != label_pad_token_id
    labels[labels == label_pad_token_id] = 0
    per_token_logps = []
    for start in range(0, logits.size(1), chunk_size):
        chunk = logits[:, start : start + chunk_size, :].float()
        target = torch.gather(chunk, dim=2, index=labels[:, start : start + chunk_size].unsqueeze(2)).squeeze(2)
        per_token_logps.append(target - torch.logsumexp(chunk, dim=-1))
    per_token_logps = torch.cat(per_token_logps, dim=1)
    return (per_token_logps * loss_mask).sum(-1), loss_mask.sum(-1)


class CustomDPOTrainer:
    def __init__(self, model, loss_type="sigmoid"):
        self.model = model
        self.loss_type = loss_type

    def concatenated_forward(self, model, batch):
        all_logits = model(batch["input_ids"]).to(torch.float32)  # want: C
        all_logps, valid_length = get_batch_logps(logits=all_logits, labels=batch["labels"])
        if self.loss_type in ["ipo", "orpo", "simpo"]:
            all_logps = all_logps / valid_length

        batch_size = batch["input_ids"].size(0) // 2
        chosen_logps, rejected_logps = all_logps.split(batch_size, dim=0)
        chosen_logits, rejected_logits = all_logits.split(batch_size, dim=0)
        chosen_length, _ = valid_length.split(batch_size, dim=0)
        return chosen_logps, rejected_logps, chosen_logits, rejected_logits, chosen_logps / chosen_length


class CustomDPOTrainerFixed(CustomDPOTrainer):
    def concatenated_forward(self, model, batch):
        all_logits = model(batch["input_ids"])
        all_logps, valid_length = get_batch_logps_memory_efficient(logits=all_logits, labels=batch["labels"])
        if self.loss_type in ["ipo", "orpo", "simpo"]:
            all_logps = all_logps / valid_length

        batch_size = batch["input_ids"].size(0) // 2
        chosen_logps, rejected_logps = all_logps.split(batch_size, dim=0)
        chosen_logits, rejected_logits = all_logits.split(batch_size, dim=0)
        chosen_length, _ = valid_length.split(batch_size, dim=0)
        return chosen_logps, rejected_logps, chosen_logits, rejected_logits, chosen_logps / chosen_length


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.embed(input_ids))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLM().to(torch.bfloat16)
    input_ids = torch.randint(0, 64, (4, 12))
    labels = input_ids.clone()
    labels[:, :3] = IGNORE_INDEX
    batch = {"input_ids": input_ids, "labels": labels}
    with torch.no_grad():
        out_bug = CustomDPOTrainer(model).concatenated_forward(model, batch)
        out_fix = CustomDPOTrainerFixed(model).concatenated_forward(model, batch)
    assert torch.allclose(out_bug[0], out_fix[0], atol=1e-3)
    assert torch.allclose(out_bug[1], out_fix[1], atol=1e-3)
    assert out_bug[2].dtype == torch.float32 and out_fix[2].dtype == torch.bfloat16
    assert out_bug[2].untyped_storage().nbytes() == 2 * out_fix[2].untyped_storage().nbytes()
    print("ok")
