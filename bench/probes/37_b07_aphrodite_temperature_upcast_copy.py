# source: dphnAI/sonar https://github.com/dphnAI/sonar/pull/814 — "fix: temperature issues": the sampler's `_apply_temperatures` ended with `logits.to(torch.float).div_(temperatures.unsqueeze(dim=1))`, meant to do the temperature division in fp32. For half/bf16 logits `.to(torch.float)` makes a copy, so the in-place division landed in that temporary and `logits` were never scaled — temperature had no effect. The fix divides `logits` itself in place (and handles the low-temperature overflow the upcast was trying to avoid separately).
import torch


def _apply_temperatures(logits, temperatures, dynatemp_mins, dynatemp_maxs, dynatemp_exps):
    dynatemp_mask = (dynatemp_mins != 0) | (dynatemp_maxs != 0)
    dynatemp_mins = dynatemp_mins[dynatemp_mask]
    dynatemp_maxs = dynatemp_maxs[dynatemp_mask]
    dynatemp_exps = dynatemp_exps[dynatemp_mask]
    dynatemp_mins = dynatemp_mins.clamp_(min=0)

    dynatemp_logits = logits[dynatemp_mask]
    dynatemp_shifted_logits = torch.log_softmax(dynatemp_logits.float(), dim=-1)
    dynatemp_probs = dynatemp_shifted_logits.exp()
    dynatemp_entropies = dynatemp_probs.mul_(dynatemp_shifted_logits).sum_to_size(dynatemp_logits.shape[0], 1).neg().squeeze(-1)
    dynatemp_max_entropies = torch.full_like(dynatemp_entropies, logits.shape[-1]).log_()
    normalized_entropies = dynatemp_entropies.div_(dynatemp_max_entropies)
    dyn_temp = (dynatemp_mins + (dynatemp_maxs - dynatemp_mins) * normalized_entropies.pow_(dynatemp_exps))

    temperatures[dynatemp_mask] = dyn_temp
    temperatures[temperatures <= 0.0] = 1.0
    # Use float32 to apply temperature scaling in all cases
    logits.to(torch.float).div_(temperatures.unsqueeze(dim=1))  # want: B
    return logits


def _apply_temperatures_fixed(logits, temperatures, dynatemp_mins, dynatemp_maxs, dynatemp_exps):
    dynatemp_mask = (dynatemp_mins != 0) | (dynatemp_maxs != 0)
    dynatemp_mins = dynatemp_mins[dynatemp_mask]
    dynatemp_maxs = dynatemp_maxs[dynatemp_mask]
    dynatemp_exps = dynatemp_exps[dynatemp_mask]
    dynatemp_mins = dynatemp_mins.clamp_(min=0)

    dynatemp_logits = logits[dynatemp_mask]
    dynatemp_shifted_logits = torch.log_softmax(dynatemp_logits.float(), dim=-1)
    dynatemp_probs = dynatemp_shifted_logits.exp()
    dynatemp_entropies = dynatemp_probs.mul_(dynatemp_shifted_logits).sum_to_size(dynatemp_logits.shape[0], 1).neg().squeeze(-1)
    dynatemp_max_entropies = torch.full_like(dynatemp_entropies, logits.shape[-1]).log_()
    normalized_entropies = dynatemp_entropies.div_(dynatemp_max_entropies)
    dyn_temp = (dynatemp_mins + (dynatemp_maxs - dynatemp_mins) * normalized_entropies.pow_(dynatemp_exps))

    temperatures[dynatemp_mask] = dyn_temp
    temperatures[temperatures <= 0.0] = 1.0
    logits.div_(temperatures.unsqueeze(dim=1).to(logits.dtype))
    return logits


def _sampling_tensors(batch):
    temps = torch.tensor([0.5, 2.0, 1.0][:batch])
    zeros = torch.zeros(batch)
    return temps, zeros.clone(), zeros.clone(), torch.ones(batch)


if __name__ == "__main__":
    torch.manual_seed(0)
    logits = torch.randn(3, 16).to(torch.bfloat16)
    a = logits.clone()
    _apply_temperatures(a, *_sampling_tensors(3))
    b = logits.clone()
    _apply_temperatures_fixed(b, *_sampling_tensors(3))
    assert torch.equal(a, logits)
    assert not torch.equal(b[0], logits[0]) and torch.equal(b[2], logits[2])
    print("ok")
