# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/48641 — Sampler.apply_sampling_params always copied the [num_logits, vocab] logits into a fresh FP32 tensor (torch.empty_like(..., dtype=float32).copy_(logits)) before applying in-place penalties/temperature/min_p, costing multiple GiB under spec decode; the fix keeps the chain dtype-preserving and only takes the copy when raw logprobs need the original logits intact.
import numpy as np
import torch

NO_LOGPROBS = -1


class SamplingStates:
    def __init__(self, temperature, min_p, top_k):
        self.temperature = temperature
        self.min_p = min_p
        self.top_k = top_k

    def apply_temperature(self, logits, idx_mapping, idx_mapping_np):
        # in place
        logits.div_(self.temperature[idx_mapping].unsqueeze(1).to(logits.dtype))

    def apply_min_p(self, logits, idx_mapping, idx_mapping_np):
        # in place; compute in fp32 on load, write back in the logits dtype
        probs = logits.float().softmax(-1)
        thresh = probs.amax(-1, keepdim=True) * self.min_p[idx_mapping].unsqueeze(1)
        logits.masked_fill_(probs < thresh, float("-inf"))

    def apply_top_k_top_p(self, logits, idx_mapping, idx_mapping_np):
        k = int(self.top_k)
        kth = logits.topk(k, dim=-1).values[:, -1:]
        return logits.masked_fill_(logits < kth, float("-inf"))


class PenaltiesState:
    def __init__(self, repetition_penalty):
        self.repetition_penalty = repetition_penalty

    def apply_penalties(self, logits, idx_mapping, idx_mapping_np, input_ids, expanded_local_pos):
        # in place
        tok = input_ids.unsqueeze(1)
        sel = logits.gather(1, tok)
        pen = self.repetition_penalty[idx_mapping].unsqueeze(1).to(logits.dtype)
        logits.scatter_(1, tok, torch.where(sel > 0, sel / pen, sel * pen))


class Sampler:
    def __init__(self, num_reqs):
        self.sampling_states = SamplingStates(
            torch.full((num_reqs,), 0.8), torch.full((num_reqs,), 0.05), 20
        )
        self.penalties_state = PenaltiesState(torch.full((num_reqs,), 1.1))
        self.needs_logits_processing = np.ones(num_reqs, dtype=bool)
        self.max_num_logprobs = NO_LOGPROBS

    def apply_sampling_params(self, logits, expanded_idx_mapping, idx_mapping_np, pos, input_ids,
                              expanded_local_pos):
        if not np.any(self.needs_logits_processing[idx_mapping_np]):
            return logits

        # Copy logits to a new FP32 tensor.
        logits = torch.empty_like(logits, dtype=torch.float32).copy_(logits)  # want: C

        # Apply penalties in place.
        self.penalties_state.apply_penalties(
            logits, expanded_idx_mapping, idx_mapping_np, input_ids, expanded_local_pos
        )
        # Apply temperature in place.
        self.sampling_states.apply_temperature(logits, expanded_idx_mapping, idx_mapping_np)
        # Apply min_p in place.
        self.sampling_states.apply_min_p(logits, expanded_idx_mapping, idx_mapping_np)
        # Apply top_k and/or top_p. This might or might not return a new tensor.
        return self.sampling_states.apply_top_k_top_p(logits, expanded_idx_mapping, idx_mapping_np)

    def returns_logprobs(self):
        return self.max_num_logprobs != NO_LOGPROBS

    # fixed version (after #48641)
    def apply_sampling_params_fixed(self, logits, expanded_idx_mapping, idx_mapping_np, pos, input_ids,
                                    expanded_local_pos):
        if not np.any(self.needs_logits_processing[idx_mapping_np]):
            return logits
        if self.returns_logprobs():
            # raw logprobs need the original logits intact
            logits = logits.clone()
        self.penalties_state.apply_penalties(
            logits, expanded_idx_mapping, idx_mapping_np, input_ids, expanded_local_pos
        )
        self.sampling_states.apply_temperature(logits, expanded_idx_mapping, idx_mapping_np)
        self.sampling_states.apply_min_p(logits, expanded_idx_mapping, idx_mapping_np)
        return self.sampling_states.apply_top_k_top_p(logits, expanded_idx_mapping, idx_mapping_np)

    def __call__(self, logits, idx_mapping, idx_mapping_np, pos, input_ids, fixed=False):
        fn = self.apply_sampling_params_fixed if fixed else self.apply_sampling_params
        processed = fn(logits, idx_mapping, idx_mapping_np, pos, input_ids, None)
        return processed.float().softmax(-1).argmax(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    R, V = 8, 4096
    s = Sampler(R)
    idx = torch.arange(R)
    idx_np = np.arange(R)
    for _ in range(5):  # decode steps
        logits = torch.randn(R, V, dtype=torch.bfloat16)
        input_ids = torch.randint(0, V, (R,))
        a = s(logits, idx, idx_np, None, input_ids)
        b = s(logits.clone(), idx, idx_np, None, input_ids, fixed=True)
    print("ok", a.shape, b.shape)
