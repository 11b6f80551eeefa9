# source: Lightning-AI/pytorch-lightning https://github.com/Lightning-AI/pytorch-lightning/pull/14599 — since 1.7.5 LightningModule.log ran every logged value, including tensors such as the loss, through torch.tensor(value, device=self.device), copy-constructing a new tensor on each self.log call (issue #14594 UserWarning); the fix clones/detaches tensors and only uses torch.tensor for Python numbers.
import numbers
import warnings

import torch
import torch.nn as nn
from torch import Tensor


def apply_to_collection(data, dtype, function, *args):
    if isinstance(data, dtype):
        return function(data, *args)
    if isinstance(data, dict):
        return {k: apply_to_collection(v, dtype, function, *args) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(apply_to_collection(v, dtype, function, *args) for v in data)
    return data


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(16, 1)
        self._results = {}

    @property
    def device(self):
        return self.layer.weight.device

    def log(self, name, value, prog_bar=False, on_step=True):
        value = apply_to_collection(value, (Tensor, numbers.Number), self.__to_tensor, name)
        self._results.setdefault(name, []).append(value)

    def __to_tensor(self, value, name):
        value = torch.tensor(value, device=self.device)  # want: C
        if not torch.numel(value) == 1:
            raise ValueError(f"`self.log({name}, {value})` was called, but the tensor must have a single element.")
        return value.squeeze()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        self.log("lr", 1e-3)
        return loss


class LightningModuleFixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(16, 1)
        self._results = {}

    @property
    def device(self):
        return self.layer.weight.device

    def log(self, name, value, prog_bar=False, on_step=True):
        value = apply_to_collection(value, (Tensor, numbers.Number), self.__to_tensor, name)
        self._results.setdefault(name, []).append(value)

    def __to_tensor(self, value, name):
        value = value.clone().detach() if isinstance(value, Tensor) else torch.tensor(value, device=self.device)
        if not torch.numel(value) == 1:
            raise ValueError(f"`self.log({name}, {value})` was called, but the tensor must have a single element.")
        return value.squeeze()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        self.log("lr", 1e-3)
        return loss


def fit(module, steps=5):
    torch.manual_seed(0)
    opt = torch.optim.SGD(module.parameters(), lr=1e-2)
    for i in range(steps):
        batch = (torch.randn(8, 16), torch.randn(8, 1))
        loss = module.training_step(batch, i)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return module._results["train_loss"]


if __name__ == "__main__":
    for cls in (LightningModule, LightningModuleFixed):
        torch.manual_seed(0)
        m = cls()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            logged = fit(m)
        n = sum("copy construct" in str(w.message) for w in caught)
        print(f"{cls.__name__}: copy-construct warnings={n}, last logged={float(logged[-1]):.4f}")
