import torch


def train(model, opt, loader):
    for batch in loader:
        loss = model(**batch).loss
        if torch.isnan(loss):  # want: D
            continue
        loss.backward()
        opt.step()
        opt.zero_grad()
