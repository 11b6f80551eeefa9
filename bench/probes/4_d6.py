import torch


@torch.no_grad()
def greedy(model, seq, eos_id, max_steps=20):
    step = 0
    while (seq[:, -1] != eos_id).any() and step < max_steps:  # want: D
        logits = model(seq)
        seq = torch.cat([seq, logits[:, -1:].argmax(-1)], dim=1)
        step += 1
    return seq
