import torch


def cls_token(hidden):
    return hidden[:, 0, :]


def collect(model, loader):
    pooled = []
    for batch in loader:
        out = model(batch)
        h = cls_token(out)
        pooled.append(h)  # want: A
    return pooled
