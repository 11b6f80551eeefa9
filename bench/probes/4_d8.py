import torch


def train_epoch(model, loader, optimizer):
    running = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += float(loss)  # want: D
    return running
