import torch


def zero_first(x: torch.Tensor):
    y = x.transpose(0, 1)
    y.reshape(-1)[0] = 0  # maybe: B (`x` may have a dimension of size one: then the reshape is a view)
    return x
