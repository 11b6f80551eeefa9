# source: huggingface/nanotron https://github.com/huggingface/nanotron/commit/ba6df35dc0780a1f37211dd89cbac5c4f8c5e584 — In the DoReMi example, `compute_per_domain_loss` normalizes the summed excess loss by the number of samples per domain; a domain absent from the batch gives 0/0 = NaN, which was meant to be zeroed with `normalized_domain_losses[torch.isnan(normalized_domain_losses)].zero_()`. The boolean-mask index returns a copy, so the NaNs survived into the domain-weight update. The "add dro loss" commit replaced it with the mask assignment `normalized_domain_losses[torch.isnan(...)] = 0.0`.
from dataclasses import dataclass
from typing import Tuple

import torch


@dataclass
class DoReMiContext:
    domain_keys: Tuple[str, ...]

    @property
    def num_domains(self) -> int:
        return len(self.domain_keys)


def compute_per_domain_loss(
    losses: torch.Tensor, domain_idxs: torch.Tensor, doremi_context: DoReMiContext
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    domain_idxs = domain_idxs.view(-1)
    losses_dp = losses

    # NOTE: Calculate total loss per domain
    n_domains = doremi_context.num_domains
    domain_losses = torch.zeros(n_domains)
    for i in range(losses_dp.shape[0]):
        domain_losses[domain_idxs[i]] += losses_dp[i].sum(dim=-1)

    # NOTE: Normalize and smooth domain weights
    samples_per_domain = torch.bincount(domain_idxs, minlength=n_domains)
    SEQ_LEN = losses.shape[1]
    normalized_domain_losses = domain_losses / (samples_per_domain * SEQ_LEN)
    # NOTE: if the domain loss is zero, then the normalized domain loss is NaN
    normalized_domain_losses[torch.isnan(normalized_domain_losses)].zero_()  # want: B
    return losses_dp, normalized_domain_losses, samples_per_domain


def compute_per_domain_loss_fixed(
    losses: torch.Tensor, domain_idxs: torch.Tensor, doremi_context: DoReMiContext
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    domain_idxs = domain_idxs.view(-1)
    losses_dp = losses

    n_domains = doremi_context.num_domains
    domain_losses = torch.zeros(n_domains)
    for i in range(losses_dp.shape[0]):
        domain_losses[domain_idxs[i]] += losses_dp[i].sum(dim=-1)

    samples_per_domain = torch.bincount(domain_idxs, minlength=n_domains)
    SEQ_LEN = losses.shape[1]
    normalized_domain_losses = domain_losses / (samples_per_domain * SEQ_LEN)
    # NOTE: if the domain loss is zero, then the normalized domain loss is NaN
    normalized_domain_losses[torch.isnan(normalized_domain_losses)] = 0.0
    return losses_dp, normalized_domain_losses, samples_per_domain


if __name__ == "__main__":
    ctx = DoReMiContext(domain_keys=("web", "code", "books"))
    excess = torch.tensor([[0.5, 0.5], [1.0, 1.0], [0.0, 2.0]])
    domain_idxs = torch.tensor([0, 0, 2])
    _, buggy, _ = compute_per_domain_loss(excess, domain_idxs, ctx)
    _, fixed, _ = compute_per_domain_loss_fixed(excess, domain_idxs, ctx)
    assert torch.isnan(buggy[1])
    assert not torch.isnan(fixed).any() and fixed[1].item() == 0.0
    assert torch.allclose(buggy[[0, 2]], fixed[[0, 2]])
    print("ok")
