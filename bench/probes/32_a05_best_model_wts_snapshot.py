# source: pytorch/tutorials https://github.com/pytorch/tutorials/pull/188 — the transfer-learning tutorial kept `best_model_wts = model.state_dict()`, whose tensors are detached aliases of the live parameters, so the "best" snapshot kept changing with every later optimizer step and load_state_dict restored the last epoch; the PR changed both snapshot lines to copy.deepcopy(model.state_dict()).
import copy

import torch
import torch.nn as nn
import torch.optim as optim


def train_model(model, criterion, optimizer, scheduler, dataloaders, num_epochs=25):
    best_model_wts = model.state_dict()  # want: A
    best_acc = 0.0
    history = []
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            model.train(phase == 'train')
            running_corrects = 0
            n = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_corrects += torch.sum(preds == labels.data).item()
                n += inputs.size(0)
            if phase == 'train':
                scheduler.step()
            epoch_acc = running_corrects / n
            if phase == 'val':
                history.append(epoch_acc)
            # deep copy the model
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = model.state_dict()  # want: A
    model.load_state_dict(best_model_wts)
    return model, best_acc, history


# ---------------------------------------------------------------- fixed version
def train_model_fixed(model, criterion, optimizer, scheduler, dataloaders, num_epochs=25):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            model.train(phase == 'train')
            running_corrects, n = 0, 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_corrects += torch.sum(preds == labels.data).item()
                n += inputs.size(0)
            if phase == 'train':
                scheduler.step()
            epoch_acc = running_corrects / n
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    return model, best_acc


def val_acc(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader) / sum(len(y) for _, y in loader)


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(64, 10), torch.randint(0, 2, (64,))
    xv, yv = torch.randn(64, 10), torch.randint(0, 2, (64,))  # unrelated labels: val acc wanders
    loaders = {'train': [(x, y)], 'val': [(xv, yv)]}

    def make():
        torch.manual_seed(1)
        m = nn.Linear(10, 2)
        opt = optim.SGD(m.parameters(), lr=1.0)
        return m, opt, optim.lr_scheduler.StepLR(opt, step_size=7, gamma=0.1)

    m, opt, sch = make()
    m, best_acc, hist = train_model(m, nn.CrossEntropyLoss(), opt, sch, loaders, num_epochs=8)
    m2, opt2, sch2 = make()
    m2, best_acc2 = train_model_fixed(m2, nn.CrossEntropyLoss(), opt2, sch2, loaders, num_epochs=8)
    print("val history:", hist, "best:", best_acc)
    print("restored acc (alias):", val_acc(m, loaders['val']), " restored acc (deepcopy):", val_acc(m2, loaders['val']))
    assert val_acc(m2, loaders['val']) == best_acc2
    assert val_acc(m, loaders['val']) == hist[-1]
