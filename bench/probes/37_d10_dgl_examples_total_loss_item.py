# source: dmlc/dgl https://github.com/dmlc/dgl/issues/5302 — most DGL examples accumulated the epoch loss with `total_loss += loss.item()` inside the minibatch loop, which synchronizes CPU and GPU every iteration and prevents overlapping forward/backward/optimizer with the dataloader. The issue (acknowledged by the maintainers and applied in later GraphBolt examples) replaces it with `total_loss += loss.detach()`, keeping the running loss on the device and reading it once per epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size, out_size):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2 * in_size, hid_size), nn.Linear(2 * hid_size, out_size)])

    def forward(self, blocks, x):
        h = x
        for l, (layer, adj) in enumerate(zip(self.layers, blocks)):
            neigh = adj @ h / adj.sum(1, keepdim=True).clamp_min(1)
            h = layer(torch.cat([h, neigh], dim=1))
            if l != len(self.layers) - 1:
                h = F.relu(h)
        return h


def make_dataloader(num_batches, n, in_size, num_classes, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(num_batches):
        adj = (torch.rand(n, n, generator=g) < 0.2).float()
        x = torch.randn(n, in_size, generator=g)
        y = torch.randint(0, num_classes, (n,), generator=g)
        yield [adj, adj], x, y


def train(model, device, num_epochs=2, num_batches=5):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    history = []
    for epoch in range(num_epochs):
        model.train()
        total_loss = 0
        for it, (blocks, x, y) in enumerate(make_dataloader(num_batches, 16, 8, 3, seed=epoch)):
            y_hat = model([b.to(device) for b in blocks], x.to(device))
            loss = F.cross_entropy(y_hat, y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()  # want: D
        history.append(total_loss / (it + 1))
        print(f"Epoch {epoch:05d} | Loss {total_loss / (it + 1):.4f}")
    return history


def train_fixed(model, device, num_epochs=2, num_batches=5):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    history = []
    for epoch in range(num_epochs):
        model.train()
        total_loss = torch.zeros((), device=device)
        for it, (blocks, x, y) in enumerate(make_dataloader(num_batches, 16, 8, 3, seed=epoch)):
            y_hat = model([b.to(device) for b in blocks], x.to(device))
            loss = F.cross_entropy(y_hat, y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.detach()
        epoch_loss = total_loss / (it + 1)
        history.append(epoch_loss)
        print(f"Epoch {epoch:05d} | Loss {epoch_loss.item():.4f}")
    return history


if __name__ == "__main__":
    torch.manual_seed(0)
    m1 = SAGE(8, 16, 3)
    m2 = SAGE(8, 16, 3)
    m2.load_state_dict(m1.state_dict())
    h1 = train(m1, torch.device("cpu"))
    h2 = train_fixed(m2, torch.device("cpu"))
    assert all(abs(a - float(b)) < 1e-5 for a, b in zip(h1, h2))
    print("ok")
