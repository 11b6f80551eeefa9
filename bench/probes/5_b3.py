import torch


def apply_mask(scores, mask):
    scores.masked_fill(mask, float("-inf"))  # want: B
    return scores
