import torch
import torch.nn as nn


def init_selected(layer: nn.Linear, rows):
    nn.init.zeros_(layer.weight[rows])  # maybe: B (an int `rows` is a basic index: the write lands)
