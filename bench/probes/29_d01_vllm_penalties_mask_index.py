# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/16436 — apply_penalties applied the repetition penalty with boolean-mask indexing (`logits[logits > 0] /= ...[logits > 0]`), which lowers to nonzero() and blocks the host on every decode step; the fix builds the per-token factor with torch.where and scales logits with one in-place multiply.
import torch
import torch.nn as nn


def get_token_bin_counts_and_mask(tokens, vocab_size, num_seqs):
    # Compute the bin counts for the tokens.
    # vocab_size + 1 for padding.
    bin_counts = torch.zeros((num_seqs, vocab_size + 1),
                             dtype=torch.long,
                             device=tokens.device)
    bin_counts.scatter_add_(1, tokens, torch.ones_like(tokens))
    bin_counts = bin_counts[:, :vocab_size]
    mask = bin_counts > 0
    return bin_counts, mask


def apply_penalties(logits, prompt_tokens_tensor, output_tokens_tensor,
                    presence_penalties, frequency_penalties,
                    repetition_penalties):
    num_seqs, vocab_size = logits.shape
    _, prompt_mask = get_token_bin_counts_and_mask(prompt_tokens_tensor,
                                                   vocab_size, num_seqs)
    output_bin_counts, output_mask = get_token_bin_counts_and_mask(
        output_tokens_tensor, vocab_size, num_seqs)
    repetition_penalties = repetition_penalties.unsqueeze(dim=1).repeat(
        1, vocab_size)
    logits[logits > 0] /= torch.where(prompt_mask | output_mask,  # want: D
                                      repetition_penalties, 1.0)[logits > 0]
    logits[logits <= 0] *= torch.where(prompt_mask | output_mask,  # want: D
                                       repetition_penalties, 1.0)[logits <= 0]
    # We follow the definition in OpenAI API.
    logits -= frequency_penalties.unsqueeze(dim=1) * output_bin_counts
    logits -= presence_penalties.unsqueeze(dim=1) * output_mask
    return logits


def apply_penalties_fixed(logits, prompt_tokens_tensor, output_tokens_tensor,
                          presence_penalties, frequency_penalties,
                          repetition_penalties):
    num_seqs, vocab_size = logits.shape
    _, prompt_mask = get_token_bin_counts_and_mask(prompt_tokens_tensor,
                                                   vocab_size, num_seqs)
    output_bin_counts, output_mask = get_token_bin_counts_and_mask(
        output_tokens_tensor, vocab_size, num_seqs)
    repetition_penalties = repetition_penalties.unsqueeze(dim=1).repeat(
        1, vocab_size)
    # If token appears in prompt or output, apply, otherwise use 1.0 for no-op.
    penalties = torch.where(prompt_mask | output_mask, repetition_penalties,
                            1.0)
    # If logits are positive, divide by penalty, otherwise multiply by penalty.
    scaling = torch.where(logits > 0, 1.0 / penalties, penalties)
    logits *= scaling
    logits -= frequency_penalties.unsqueeze(dim=1) * output_bin_counts
    logits -= presence_penalties.unsqueeze(dim=1) * output_mask
    return logits


class Sampler(nn.Module):
    penalty_fn = staticmethod(apply_penalties)

    def forward(self, logits, sampling_metadata):
        logits = logits.to(torch.float32)
        if not sampling_metadata["no_penalties"]:
            logits = self.penalty_fn(
                logits,
                sampling_metadata["prompt_token_ids"],
                sampling_metadata["output_token_ids"],
                sampling_metadata["presence_penalties"],
                sampling_metadata["frequency_penalties"],
                sampling_metadata["repetition_penalties"],
            )
        return logits.argmax(dim=-1)


class SamplerFixed(Sampler):
    penalty_fn = staticmethod(apply_penalties_fixed)


def decode(sampler, num_steps, batch, vocab):
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, vocab, (batch, 6), generator=g)
    out_tokens = torch.full((batch, num_steps), vocab)  # padded with vocab_size
    meta = {
        "no_penalties": False,
        "prompt_token_ids": prompt,
        "presence_penalties": torch.full((batch,), 0.1),
        "frequency_penalties": torch.full((batch,), 0.2),
        "repetition_penalties": torch.full((batch,), 1.3),
    }
    for step in range(num_steps):
        logits = torch.randn(batch, vocab, generator=g)
        meta["output_token_ids"] = out_tokens
        next_tokens = sampler(logits, meta)
        out_tokens[:, step] = next_tokens
    return out_tokens


if __name__ == "__main__":
    x = torch.randn(3, 50)
    args = (torch.randint(0, 50, (3, 5)), torch.full((3, 4), 50),
            torch.zeros(3), torch.zeros(3), torch.full((3,), 1.5))
    a = apply_penalties(x.clone(), *args)
    b = apply_penalties_fixed(x.clone(), *args)
    assert torch.allclose(a, b)
    print("buggy tokens:", decode(Sampler(), 8, 3, 50)[0].tolist())
    print("fixed tokens:", decode(SamplerFixed(), 8, 3, 50)[0].tolist())
