import torch


def train(model, loader, device):
    model.to(device)  # clean: a module moves in place
    for x, y in loader:
        x = x.to(device)
        model(x)
