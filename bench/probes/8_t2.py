import torch


def step(model, x, y, device):
    x.cuda()  # maybe: B (`x` may be a module, which `.cuda()` moves in place)
    return model(x)
