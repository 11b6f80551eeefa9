import torch


def clamp_grads(model):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.clamp(-1, 1)  # want: B
