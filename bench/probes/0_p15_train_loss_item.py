import torch


def train(model, loader, opt):
    total = 0.0
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()  # want: D
    return total
