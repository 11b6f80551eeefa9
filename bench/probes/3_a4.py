import torch
import torch.nn as nn

activations = {}


def get_activation(name):
    def hook(module, inp, output):
        activations[name] = output[0].detach()  # maybe: A (for a module that returns a tuple, `output[0]` is a whole tensor)
    return hook


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
net[0].register_forward_hook(get_activation("fc"))
