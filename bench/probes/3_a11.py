import pickle
import torch


def dump(feats, path):
    first = torch.randn(1000, 64)[:10]
    with open(path, "wb") as f:
        pickle.dump(first, f)  # want: A
