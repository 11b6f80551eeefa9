import torch


def fit(model, opt, data):
    for x, y in data:
        loss = ((model(x) - y) ** 2).mean()
        if torch.isnan(loss):  # want: D
            continue
        loss.backward()
        opt.step()
