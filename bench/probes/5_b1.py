import torch


def zero_pad_rows(emb, pad_ids):
    emb.weight.data[pad_ids].fill_(0)  # want: B
