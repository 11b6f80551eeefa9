import torch


def collect(model, loader):
    pooled = []
    for batch in loader:
        out = model(batch)
        pooled.append(out[:, 0, :])  # want: A
    return pooled
