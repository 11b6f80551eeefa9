import torch

_EMB_CACHE = {}


def cache_rows(keys, embs):
    for i, key in enumerate(keys):
        _EMB_CACHE[key] = embs[i]  # maybe: A (nothing says `encoder` is a model: not a name read as one)


def run(encoder, keys, ids):
    cache_rows(keys, encoder(ids))
