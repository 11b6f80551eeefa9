import torch


def reset_rows(state, done):
    idx = done.nonzero().squeeze(-1)
    state[idx].zero_()  # want: B
    return state
