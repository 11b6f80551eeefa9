import torch


@torch.no_grad()
def ema_update(ema, model, decay=0.999):
    for ema_p, p in zip(ema.parameters(), model.parameters()):
        ema_p = decay * ema_p + (1 - decay) * p  # want: B


def clip(critic, c=0.01):
    for p in critic.parameters():
        p = p.clamp(-c, c)  # want: B


def fine(model):
    total = 0
    for p in model.parameters():
        p = p.float()
        total += p.sum()
    for line in open("x"):
        line = line.strip()
    return total
