import torch


def cls_token(hidden):
    return hidden[:, 0, :]


def collect(model, loader):
    pooled = []
    for batch in loader:
        out = torch.randn(4, 5, 6)
        pooled.append(cls_token(out))  # want: A
    return pooled
