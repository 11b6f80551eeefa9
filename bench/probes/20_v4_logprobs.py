import torch


def gather_logprobs(logits: torch.Tensor, token_ids: torch.Tensor, results: dict, req_ids: list):
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    picked = logprobs.gather(1, token_ids.unsqueeze(1))
    for i, rid in enumerate(req_ids):
        results[rid] = logprobs[i]  # maybe: A (results is a parameter: the caller's dict)
    return picked
