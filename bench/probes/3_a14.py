import functools
import torch

TABLE = torch.randn(1000, 1000)


@functools.lru_cache(maxsize=None)
def row(i):
    big = TABLE * 2
    return big[i]  # maybe: A (`i` may be a tensor: a gather, not a view)
