# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/133663 — when param_group["lr"] is a Tensor (capturable/compiled optimizers), LRScheduler.step converted each new lr with `lr.item()` before `fill_`, a host-device sync per param group per scheduler step; the fix passes the tensor straight to `param_group["lr"].fill_(lr)`.
import math
from typing import Optional

import torch
from torch import Tensor


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            initial_lr = group["lr"]
            if isinstance(initial_lr, Tensor):
                initial_lr = initial_lr.clone()
            group.setdefault("initial_lr", initial_lr)
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self.step()

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        return self._last_lr

    def step(self, epoch: Optional[int] = None):
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
        else:
            self.last_epoch = epoch
        values = self.get_lr()

        for i, data in enumerate(zip(self.optimizer.param_groups, values)):
            param_group, lr = data
            if isinstance(param_group["lr"], Tensor):
                lr_val = lr.item() if isinstance(lr, Tensor) else lr  # want: D
                param_group["lr"].fill_(lr_val)
            else:
                param_group["lr"] = lr

        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class LRSchedulerFixed(LRScheduler):
    def step(self, epoch: Optional[int] = None):
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
        else:
            self.last_epoch = epoch
        values = self.get_lr()

        for i, data in enumerate(zip(self.optimizer.param_groups, values)):
            param_group, lr = data
            if isinstance(param_group["lr"], Tensor):
                param_group["lr"].fill_(lr)
            else:
                param_group["lr"] = lr

        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        # with a Tensor lr the closed form keeps the result on lr's device
        return [
            self.eta_min + (base_lr - self.eta_min)
            * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]


class CosineAnnealingLRFixed(LRSchedulerFixed, CosineAnnealingLR):
    pass


def train(sched_cls, steps=20):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    # Tensor lr, as used with capturable / torch.compile'd optimizers
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01), capturable=False)
    sched = sched_cls(opt, T_max=steps)
    lrs = []
    for _ in range(steps):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"].clone())
    return torch.stack(lrs)


if __name__ == "__main__":
    a = train(CosineAnnealingLR)
    b = train(CosineAnnealingLRFixed)
    assert torch.allclose(a, b)
    print("lr schedule (fixed):", [round(float(v), 5) for v in b[:5]], "...")
