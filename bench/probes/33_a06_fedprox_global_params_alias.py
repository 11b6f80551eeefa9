# source: KarhouTam/FL-bench https://github.com/KarhouTam/FL-bench/issues/165 — FedProxClient.fit took `global_params = list(self.model.parameters())` as the round's global weights, but those are the same tensors the local optimizer updates in place, so the proximal term (w - w_t) was always zero and FedProx degenerated to FedAvg; the fix snapshots `[w.clone().detach() for w in self.model.parameters()]`.
from types import SimpleNamespace

import torch
from torch import nn


class FedAvgClient:
    def __init__(self, model, trainloader, args, local_epoch=2, device="cpu"):
        self.model = model
        self.trainloader = trainloader
        self.args = args
        self.local_epoch = local_epoch
        self.device = device
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.lr_scheduler = None
        self.prox_norms = []


class FedProxClient(FedAvgClient):
    def _global_params(self):
        return list(self.model.parameters())  # want: A

    def fit(self):
        self.model.train()
        global_params = self._global_params()
        for _ in range(self.local_epoch):
            for x, y in self.trainloader:
                if len(x) <= 1:
                    continue
                x, y = x.to(self.device), y.to(self.device)
                logit = self.model(x)
                loss = self.criterion(logit, y)
                self.optimizer.zero_grad()
                loss.backward()
                prox = 0.0
                for w, w_t in zip(self.model.parameters(), global_params):
                    if w.requires_grad:
                        w.grad.data += self.args.fedprox.mu * (w.data - w_t.data)
                        prox += (w.data - w_t.data).norm().item()
                self.prox_norms.append(prox)
                self.optimizer.step()
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()


class FedProxClientFixed(FedProxClient):
    def _global_params(self):
        return [w.clone().detach() for w in self.model.parameters()]


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    loader = [(torch.randn(16, 10, generator=g), torch.randint(0, 3, (16,), generator=g)) for _ in range(4)]
    args = SimpleNamespace(fedprox=SimpleNamespace(mu=0.01))
    for cls in (FedProxClient, FedProxClientFixed):
        torch.manual_seed(0)
        client = cls(nn.Linear(10, 3), loader, args)
        client.fit()
        print(f"{cls.__name__}: max proximal-term norm over local steps = {max(client.prox_norms):.4f}")
