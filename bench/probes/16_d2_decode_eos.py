import torch


@torch.no_grad()
def greedy(model, ids, eos, steps=64):
    for _ in range(steps):
        logits = model(ids)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
        if nxt.item() == eos:  # want: D
            break
    return ids
