# source: Lightning-AI/pytorch-lightning https://github.com/Lightning-AI/pytorch-lightning/pull/1254 — TrainerTrainLoopMixin.run_training_batch did `self.batch_loss_value += loss.item()` after every optimizer closure ("track total loss for logging (avoid mem leaks)"), a host sync per batch that stalls DDP. The fix ("remove .item which causes sync issues") accumulates the detached loss tensors in a TensorRunningAccum and averages them on device.
import numpy as np
import torch
import torch.nn as nn


class TensorRunningAccum(object):
    """Tracks a running accumulation values (min, max, mean) without graph references."""

    def __init__(self, window_length):
        self.window_length = window_length
        self.memory = torch.Tensor(self.window_length)
        self.current_idx = 0
        self.last_idx = None
        self.rotated = False

    def reset(self):
        self.__init__(self.window_length)

    def append(self, x):
        if self.memory.device != x.device or self.memory.dtype != x.dtype:
            self.memory = self.memory.to(device=x.device, dtype=x.dtype)
        self.memory[self.current_idx] = x
        self.last_idx = self.current_idx
        self.current_idx += 1
        if self.current_idx >= self.window_length:
            self.current_idx = 0
            self.rotated = True

    def mean(self):
        if self.last_idx is not None:
            return self.memory.mean() if self.rotated else self.memory[:self.current_idx].mean()


class Trainer:
    def __init__(self, model, optimizer, accumulate_grad_batches=2):
        self.model = model
        self.optimizers = [optimizer]
        self.accumulate_grad_batches = accumulate_grad_batches
        self.batch_loss_value = 0
        self.running_loss = []
        self.avg_loss = 0
        self.batch_idx = 0
        self.current_epoch = 0

    def training_forward(self, batch, batch_idx, opt_idx):
        x, y = batch
        return {"loss": nn.functional.mse_loss(self.model(x), y)}

    def optimizer_step(self, epoch, batch_idx, optimizer, opt_idx):
        optimizer.step()
        optimizer.zero_grad()

    def run_training_batch(self, batch, batch_idx):
        splits = [batch]
        for split_idx, split_batch in enumerate(splits):
            self.split_idx = split_idx
            for opt_idx, optimizer in enumerate(self.optimizers):
                def optimizer_closure():
                    output = self.training_forward(split_batch, batch_idx, opt_idx)
                    closure_loss = output["loss"] / self.accumulate_grad_batches
                    closure_loss.backward()
                    return closure_loss

                # calculate loss
                loss = optimizer_closure()

                # track total loss for logging (avoid mem leaks)
                self.batch_loss_value += loss.item()  # want: D

                # gradient update with accumulated gradients
                if (self.batch_idx + 1) % self.accumulate_grad_batches == 0:
                    self.optimizer_step(self.current_epoch, batch_idx, optimizer, opt_idx)

                    # calculate running loss for display
                    self.running_loss.append(self.batch_loss_value)
                    self.batch_loss_value = 0
                    self.avg_loss = np.mean(self.running_loss[-100:])

    def train(self, dataloader):
        for self.batch_idx, batch in enumerate(dataloader):
            self.run_training_batch(batch, self.batch_idx)


class TrainerFixed(Trainer):
    def __init__(self, model, optimizer, accumulate_grad_batches=2):
        super().__init__(model, optimizer, accumulate_grad_batches)
        self.batch_loss_value = TensorRunningAccum(window_length=accumulate_grad_batches)
        self.running_loss = TensorRunningAccum(window_length=20)

    def run_training_batch(self, batch, batch_idx):
        splits = [batch]
        for split_idx, split_batch in enumerate(splits):
            self.split_idx = split_idx
            for opt_idx, optimizer in enumerate(self.optimizers):
                def optimizer_closure():
                    output = self.training_forward(split_batch, batch_idx, opt_idx)
                    closure_loss = output["loss"] / self.accumulate_grad_batches
                    closure_loss.backward()
                    return closure_loss

                loss = optimizer_closure()

                # track total loss for logging (avoid mem leaks)
                self.batch_loss_value.append(loss.detach())

                if (self.batch_idx + 1) % self.accumulate_grad_batches == 0:
                    self.optimizer_step(self.current_epoch, batch_idx, optimizer, opt_idx)

                    # calculate running loss for display
                    self.running_loss.append(self.batch_loss_value.mean() * self.accumulate_grad_batches)
                    # reset for next set of accumulated grads
                    self.batch_loss_value.reset()


if __name__ == "__main__":
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(16)]
    weights = []
    for cls in (Trainer, TrainerFixed):
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        trainer = cls(model, torch.optim.SGD(model.parameters(), lr=0.1))
        trainer.train(data)
        weights.append(model.weight.detach().clone())
        print(cls.__name__, "trained on", len(data), "batches")
    assert torch.allclose(weights[0], weights[1])
