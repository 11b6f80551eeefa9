import torch


def update_cache(cache, positions, values):
    cache[:, positions].copy_(values)  # maybe: B (an int or slice `positions` is a basic index: the write lands)
