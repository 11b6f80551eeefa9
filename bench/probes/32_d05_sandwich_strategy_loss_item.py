# source: whittle-org/whittle https://github.com/whittle-org/whittle/issues/306 — The supernet training strategies (SandwichStrategy, RandomStrategy, ...) called `total_loss += loss.item()` after every sub-network backward, one GPU-to-CPU sync per sampled sub-network per step; the fix accumulates the losses in a tensor and reads it back once.
import random

import torch
import torch.nn as nn


class SuperMLP(nn.Module):
    def __init__(self, d_in=16, max_hidden=64, d_out=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, max_hidden)
        self.fc2 = nn.Linear(max_hidden, d_out)
        self.max_hidden = max_hidden
        self.sub_network_hidden = max_hidden

    def select_sub_network(self, config):
        self.sub_network_hidden = config["hidden"]

    def reset_super_network(self):
        self.sub_network_hidden = self.max_hidden

    def forward(self, x):
        h = self.sub_network_hidden
        x = torch.relu(nn.functional.linear(x, self.fc1.weight[:h], self.fc1.bias[:h]))
        return nn.functional.linear(x, self.fc2.weight[:, :h], self.fc2.bias)


class RandomSampler:
    def __init__(self, choices, seed=0):
        self.choices = choices
        self.rng = random.Random(seed)

    def sample(self):
        return {"hidden": self.rng.choice(self.choices)}

    def get_smallest_sub_network(self):
        return {"hidden": min(self.choices)}


class BaseTrainingStrategy:
    def __init__(self, sampler, loss_function, kd_loss=None):
        self.sampler = sampler
        self.loss_function = loss_function
        self.kd_loss = kd_loss


class SandwichStrategy(BaseTrainingStrategy):
    def __init__(self, random_samples=2, **kwargs):
        super().__init__(**kwargs)
        self.random_samples = random_samples

    def __call__(self, model, inputs, outputs, **kwargs):
        total_loss = 0
        # update super-network
        y_supernet = model(inputs)
        loss = self.loss_function(y_supernet, outputs)
        loss.backward()
        total_loss += loss.item()  # want: D

        # update random sub-networks
        for i in range(self.random_samples):
            config = self.sampler.sample()
            model.select_sub_network(config)
            y_hat = model(inputs)
            if self.kd_loss is not None:
                loss = self.kd_loss(y_hat, outputs, y_supernet)
            else:
                loss = self.loss_function(y_hat, outputs)
            loss.backward()
            model.reset_super_network()
            total_loss += loss.item()  # want: D

        # smallest network
        config = self.sampler.get_smallest_sub_network()
        model.select_sub_network(config)
        y_hat = model(inputs)
        if self.kd_loss is not None:
            loss = self.kd_loss(y_hat, outputs, y_supernet)
        else:
            loss = self.loss_function(y_hat, outputs)
        loss.backward()
        model.reset_super_network()
        total_loss += loss.item()  # want: D

        return total_loss


class SandwichStrategyFixed(SandwichStrategy):
    def __call__(self, model, inputs, outputs, **kwargs):
        # update super-network
        y_supernet = model(inputs)
        loss = self.loss_function(y_supernet, outputs)
        loss.backward()
        total_loss = loss.detach()

        # update random sub-networks
        for i in range(self.random_samples):
            config = self.sampler.sample()
            model.select_sub_network(config)
            y_hat = model(inputs)
            if self.kd_loss is not None:
                loss = self.kd_loss(y_hat, outputs, y_supernet)
            else:
                loss = self.loss_function(y_hat, outputs)
            loss.backward()
            model.reset_super_network()
            total_loss = total_loss + loss.detach()

        # smallest network
        config = self.sampler.get_smallest_sub_network()
        model.select_sub_network(config)
        y_hat = model(inputs)
        if self.kd_loss is not None:
            loss = self.kd_loss(y_hat, outputs, y_supernet)
        else:
            loss = self.loss_function(y_hat, outputs)
        loss.backward()
        model.reset_super_network()
        total_loss = total_loss + loss.detach()

        # device tensor; the training loop reads it once at its logging interval
        return total_loss


if __name__ == "__main__":
    for cls in (SandwichStrategy, SandwichStrategyFixed):
        torch.manual_seed(0)
        model = SuperMLP()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        strategy = cls(random_samples=3, sampler=RandomSampler([8, 16, 32, 64]), loss_function=nn.MSELoss())
        x, y = torch.randn(32, 16), torch.randn(32, 4)
        for _ in range(3):
            opt.zero_grad()
            total = strategy(model, x, y)
            opt.step()
        print(cls.__name__, "returns", type(total).__name__)
