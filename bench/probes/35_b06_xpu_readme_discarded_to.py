# source: intel/intel-extension-for-pytorch https://github.com/intel/intel-extension-for-pytorch/pull/267 — the XPU training sample called `data.to("xpu")` / `target.to("xpu")` without keeping the result; Tensor.to returns a new tensor and leaves the original where it was, so the batch never moved; the fix assigns `data = data.to("xpu")`.
import torch
import torch.nn as nn

DEVICE = "meta"  # stands in for "xpu" so the (lack of) move is observable on CPU


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def train_step(model, optimizer, criterion, data, target):
    model.train()
    model = model.to(DEVICE)
    criterion = criterion.to(DEVICE)
    data.to(DEVICE)  # want: B
    target.to(DEVICE)  # want: B
    return data, target


def train_step_fixed(model, optimizer, criterion, data, target):
    model.train()
    model = model.to(DEVICE)
    criterion = criterion.to(DEVICE)
    data = data.to(DEVICE)
    target = target.to(DEVICE)
    return data, target


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 10, (4,))
    d, t = train_step(model, opt, crit, x, y)
    print("buggy batch device:", d.device, "model:", next(model.parameters()).device)
    assert d.device.type == "cpu"

    d2, t2 = train_step_fixed(Net(), opt, crit, x, y)
    print("fixed batch device:", d2.device)
    assert d2.device.type == DEVICE
