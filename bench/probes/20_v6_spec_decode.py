import torch


@torch.no_grad()
def verify(target_model, draft_tokens: torch.Tensor, input_ids: torch.Tensor):
    accepted = []
    for step in range(draft_tokens.shape[1]):
        logits = target_model(input_ids)
        pred = logits[:, -1].argmax(-1)
        if not torch.equal(pred, draft_tokens[:, step]):  # want: D
            break
        accepted.append(pred)
        input_ids = torch.cat([input_ids, pred[:, None]], dim=1)
    return accepted
