import torch


def decode(model, ids, steps):
    out = []
    for _ in range(steps):
        logits = model(ids)
        nxt = logits[:, -1].argmax(-1)
        out.extend(nxt.tolist())  # want: D
        ids = torch.cat([ids, nxt[:, None]], dim=1)
    return out
