# source: WenjieDu/PyPOTS https://github.com/WenjieDu/PyPOTS/issues/667 — BaseNNModel._train_model kept `self.best_model_dict = self.model.state_dict()`, a dict of tensors aliasing the live parameters, so the "best" model silently tracked every later epoch and _train_model restored the last weights instead of the best; fixed (PR #668) with deepcopy(self.model.state_dict()).
from copy import deepcopy

import torch
import torch.nn as nn


class BaseNNModel:
    def __init__(self, model, epochs=10, patience=None, lr=0.5):
        self.model = model
        self.epochs = epochs
        self.original_patience = patience if patience is not None else epochs
        self.patience = self.original_patience
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.best_loss = float("inf")
        self.best_epoch = -1
        self.best_model_dict = None

    def _train_step(self, batch):
        x, y = batch
        self.optimizer.zero_grad()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def _val_loss(self, val_loader):
        self.model.eval()
        return sum(nn.functional.mse_loss(self.model(x), y).item() for x, y in val_loader) / len(val_loader)

    def _train_model(self, training_loader, val_loader=None):
        self.best_loss = float("inf")
        self.best_model_dict = None
        for epoch in range(1, self.epochs + 1):
            self.model.train()
            epoch_train_loss_collector = [self._train_step(b) for b in training_loader]
            mean_train_loss = sum(epoch_train_loss_collector) / len(epoch_train_loss_collector)
            mean_loss = self._val_loss(val_loader) if val_loader is not None else mean_train_loss
            if mean_loss < self.best_loss:
                self.best_epoch = epoch
                self.best_loss = mean_loss
                self.best_model_dict = self.model.state_dict()  # want: A
                self.patience = self.original_patience
            else:
                self.patience -= 1
            if self.patience == 0:
                break
        self.model.load_state_dict(self.best_model_dict)
        return self


# ---------------------------------------------------------------- fixed version
class BaseNNModelFixed(BaseNNModel):
    def _train_model(self, training_loader, val_loader=None):
        self.best_loss = float("inf")
        self.best_model_dict = None
        for epoch in range(1, self.epochs + 1):
            self.model.train()
            epoch_train_loss_collector = [self._train_step(b) for b in training_loader]
            mean_train_loss = sum(epoch_train_loss_collector) / len(epoch_train_loss_collector)
            mean_loss = self._val_loss(val_loader) if val_loader is not None else mean_train_loss
            if mean_loss < self.best_loss:
                self.best_epoch = epoch
                self.best_loss = mean_loss
                self.best_model_dict = deepcopy(self.model.state_dict())
                self.patience = self.original_patience
            else:
                self.patience -= 1
            if self.patience == 0:
                break
        self.model.load_state_dict(self.best_model_dict)
        return self


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(128, 6), torch.randn(128, 1)
    xv, yv = torch.randn(64, 6), torch.randn(64, 1)  # noise-only target: val loss turns up quickly
    train_loader, val_loader = [(x, y)], [(xv, yv)]

    def model():
        torch.manual_seed(3)
        return nn.Linear(6, 1)

    bad = BaseNNModel(model(), epochs=12, patience=4)._train_model(train_loader, val_loader)
    good = BaseNNModelFixed(model(), epochs=12, patience=4)._train_model(train_loader, val_loader)
    print("best epoch", bad.best_epoch, "best val", round(bad.best_loss, 4))
    print("restored val (alias):", round(bad._val_loss(val_loader), 4), " restored val (deepcopy):", round(good._val_loss(val_loader), 4))
    assert abs(good._val_loss(val_loader) - good.best_loss) < 1e-6
    assert bad._val_loss(val_loader) > bad.best_loss + 1e-6
