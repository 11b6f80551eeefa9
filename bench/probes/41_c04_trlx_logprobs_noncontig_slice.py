# source: CarperAI/trlx https://github.com/CarperAI/trlx/pull/583 — In PPO rollouts trlx called `logprobs_of_labels(logits[:, :-1, :], all_tokens[:, 1:])`; the `[:, :-1, :]` slice of the [batch, seq, vocab] logits is non-contiguous, so the `F.log_softmax` inside made a full contiguous copy of the logits first (~8 GB at 32x2048x64000 fp16). The PR feeds the whole contiguous logits to `logprobs_of_labels` and lets `torch.gather` with the shorter label index drop the last position, removing the redundant copy.
import torch
import torch.nn as nn
import torch.nn.functional as F


def logprobs_of_labels(logits, labels):
    """Log probabilities of the labels

    These are calculated from the logits."""
    logprobs = F.log_softmax(logits, dim=-1)  # maybe: C (the copy happens inside log_softmax on the strided slice)
    logprobs_labels = torch.gather(logprobs, dim=-1, index=labels.unsqueeze(-1))
    return logprobs_labels.squeeze(-1)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.emb(input_ids))


class AcceleratePPOTrainer:
    def __init__(self, model, ref_model):
        self.model = model
        self.ref_model = ref_model

    def make_experience_logprobs(self, all_tokens, attention_mask):
        with torch.no_grad():
            logits = self.model(all_tokens, attention_mask=attention_mask)
            ref_logits = self.ref_model(all_tokens, attention_mask=attention_mask)
        logprobs = logprobs_of_labels(logits[:, :-1, :], all_tokens[:, 1:])  # want: C
        ref_logprobs = logprobs_of_labels(ref_logits[:, :-1, :], all_tokens[:, 1:])  # want: C
        return logprobs, ref_logprobs


class AcceleratePPOTrainerFixed(AcceleratePPOTrainer):
    def make_experience_logprobs(self, all_tokens, attention_mask):
        with torch.no_grad():
            logits = self.model(all_tokens, attention_mask=attention_mask)
            ref_logits = self.ref_model(all_tokens, attention_mask=attention_mask)
        logprobs = logprobs_of_labels(logits, all_tokens[:, 1:])
        ref_logprobs = logprobs_of_labels(ref_logits, all_tokens[:, 1:])
        return logprobs, ref_logprobs


if __name__ == "__main__":
    torch.manual_seed(0)
    model, ref_model = TinyCausalLM(), TinyCausalLM()
    all_tokens = torch.randint(0, 50, (3, 12))
    mask = torch.ones_like(all_tokens)

    lp_a, ref_a = AcceleratePPOTrainer(model, ref_model).make_experience_logprobs(all_tokens, mask)
    lp_b, ref_b = AcceleratePPOTrainerFixed(model, ref_model).make_experience_logprobs(all_tokens, mask)
    assert torch.allclose(lp_a, lp_b, atol=1e-6) and torch.allclose(ref_a, ref_b, atol=1e-6)
    assert lp_a.shape == (3, 11)

    logits = model(all_tokens)
    sliced = logits[:, :-1, :]
    assert logits.is_contiguous() and not sliced.is_contiguous()
    assert sliced.contiguous().data_ptr() != sliced.data_ptr()  # what log_softmax has to do internally
    print("ok")
