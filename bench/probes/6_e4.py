import torch


def run(model, loader):
    outs = []
    for batch in loader:
        out = model(batch)
        outs.append(out[:, :10].clone())
    return outs
