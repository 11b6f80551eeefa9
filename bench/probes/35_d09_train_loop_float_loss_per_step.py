# source: lnccbrown/LANfactory https://github.com/lnccbrown/LANfactory/pull/120 — the torch MLP trainer converted the loss with `float(loss)` on every training step to accumulate the epoch loss, synchronising the GPU each step; the fix accumulates `loss.detach()` on the device and converts once per epoch.
import torch
from torch import nn


class TorchMLP(nn.Module):
    def __init__(self, network_config, input_shape):
        super().__init__()
        layers = []
        prev = input_shape
        for width in network_config["layer_sizes"][:-1]:
            layers += [nn.Linear(prev, width), nn.Tanh()]
            prev = width
        layers.append(nn.Linear(prev, network_config["layer_sizes"][-1]))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class ModelTrainerTorchMLP:
    def __init__(self, model, train_dl, valid_dl, lr=1e-3, dev=torch.device("cpu")):
        self.model = model.to(dev)
        self.train_dl = train_dl
        self.valid_dl = valid_dl
        self.dev = dev
        self.loss_fun = nn.HuberLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.history = []

    def train_epoch(self):
        self.model.train()
        train_loss = 0.0
        n_batches = 0
        for xb, yb in self.train_dl:
            pred = self.model(xb.to(self.dev, non_blocking=True))
            loss = self.loss_fun(pred.squeeze(), yb.squeeze().to(self.dev, non_blocking=True))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            train_loss += float(loss)  # want: D
            n_batches += 1
        return train_loss / n_batches

    def train_and_evaluate(self, n_epochs):
        for epoch in range(n_epochs):
            epoch_loss = self.train_epoch()
            self.history.append(epoch_loss)
        return self.history


class ModelTrainerTorchMLPFixed(ModelTrainerTorchMLP):
    def train_epoch(self):
        self.model.train()
        train_loss = torch.zeros((), device=self.dev)
        n_batches = 0
        for xb, yb in self.train_dl:
            pred = self.model(xb.to(self.dev, non_blocking=True))
            loss = self.loss_fun(pred.squeeze(), yb.squeeze().to(self.dev, non_blocking=True))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            train_loss += loss.detach()
            n_batches += 1
        # one host read per epoch
        return train_loss.item() / n_batches


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(256, 6)
    y = x[:, :1] * 2 + 0.1 * torch.randn(256, 1)
    dl = [(x[i:i + 64], y[i:i + 64]) for i in range(0, 256, 64)]
    cfg = {"layer_sizes": [32, 32, 1]}
    torch.manual_seed(1)
    m1 = TorchMLP(cfg, 6)
    m2 = TorchMLP(cfg, 6)
    m2.load_state_dict(m1.state_dict())
    h1 = ModelTrainerTorchMLP(m1, dl, None).train_and_evaluate(2)
    h2 = ModelTrainerTorchMLPFixed(m2, dl, None).train_and_evaluate(2)
    print("epoch losses", [round(v, 4) for v in h1], "match:", all(abs(a - b) < 1e-5 for a, b in zip(h1, h2)))
