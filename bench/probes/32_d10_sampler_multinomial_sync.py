# source: dphnAI/sonar https://github.com/dphnAI/sonar/pull/198 — The sampler drew random tokens with `torch.multinomial(probs, num_samples, replacement=True)`, whose CUDA path validates the distribution and synchronizes with the host on every decode step; the fix ("reduce sampler overhead by making it less blocking") uses a custom multinomial (exponential race: `probs.div_(q).argmax()`) that needs no GPU<->CPU sync, so the sync is delayed to the final token read-out.
import torch
import torch.nn as nn


def _apply_top_k_top_p(logits, top_ps, top_ks):
    logits_sort, logits_idx = logits.sort(dim=-1, descending=True)
    probs_sort = logits_sort.softmax(dim=-1)
    probs_sum = probs_sort.cumsum(dim=-1).sub_(probs_sort)
    top_p_mask = probs_sum > top_ps.unsqueeze(dim=1)
    top_k_mask = torch.arange(logits_idx.shape[-1], device=logits_idx.device)
    top_k_mask = top_k_mask.expand(logits_idx.shape[0], -1) >= top_ks.unsqueeze(dim=1)
    logits_sort.masked_fill_(top_p_mask | top_k_mask, -float("inf"))
    return torch.gather(logits_sort, dim=-1, index=torch.argsort(logits_idx, dim=-1))


class Sampler(nn.Module):
    def _random_sample(self, probs, num_samples):
        return torch.multinomial(probs, num_samples=num_samples, replacement=True)  # want: D

    def forward(self, logits, temperatures, top_ps, top_ks, greedy_idx, random_idx, num_samples=1):
        # sampling tensors (temperatures, top_ps, top_ks) and the per-type row indices
        # are prepared ahead of time, so nothing here needs host data
        logits = logits.to(torch.float)
        logits.div_(temperatures.unsqueeze(dim=1))
        logits = _apply_top_k_top_p(logits, top_ps, top_ks)
        probs = torch.softmax(logits, dim=-1)

        sampled = torch.empty(logits.shape[0], num_samples, dtype=torch.long, device=logits.device)
        if greedy_idx.numel() > 0:
            greedy = torch.argmax(logits[greedy_idx], dim=-1)
            sampled[greedy_idx] = greedy.unsqueeze(-1).expand(-1, num_samples)
        if random_idx.numel() > 0:
            sampled[random_idx] = self._random_sample(probs[random_idx], num_samples)
        # token ids stay on device; the engine copies them to the host after the step
        return sampled


def _multinomial(probs, num_samples):
    if num_samples > 1:
        # This is equivalent to torch.repeat_interleaved (which also
        # forces a GPU<->CPU sync).
        probs = probs[:, None, :].expand(probs.shape[0], num_samples, probs.shape[1]).contiguous().view(
            -1, probs.shape[1])
    q = torch.empty_like(probs).exponential_(1)
    return probs.div_(q).argmax(dim=1).view(-1, num_samples)


class SamplerFixed(Sampler):
    def _random_sample(self, probs, num_samples):
        return _multinomial(probs.clone(), num_samples)


if __name__ == "__main__":
    torch.manual_seed(0)
    batch, vocab = 6, 50
    logits = torch.randn(batch, vocab)
    temperatures = torch.tensor([1.0, 0.7, 1.0, 1.0, 0.9, 1.0])
    top_ps = torch.full((batch,), 0.9)
    top_ks = torch.full((batch,), 20)
    greedy_idx = torch.tensor([0, 3])
    random_idx = torch.tensor([1, 2, 4, 5])
    for cls in (Sampler, SamplerFixed):
        out = cls()(logits.clone(), temperatures, top_ps, top_ks, greedy_idx, random_idx, num_samples=2)
        print(cls.__name__, tuple(out.shape))
