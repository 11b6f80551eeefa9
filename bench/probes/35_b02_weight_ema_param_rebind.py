# source: YU1ut/MixMatch-pytorch https://github.com/YU1ut/MixMatch-pytorch/pull/23 — WeightEMA.__init__ did `param = ema_param` for each parameter pair, which only rebinds the loop name and never copies the EMA weights into the model; the fix uses `param.data.copy_(ema_param.data)`.
import torch
import torch.nn as nn


class WideBlock(nn.Module):
    def __init__(self, c_in=3, c_out=8, num_classes=10):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)
        self.fc = nn.Linear(c_out, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(x.mean((2, 3)))


class WeightEMA(object):
    def __init__(self, model, ema_model, alpha=0.999, lr=0.002):
        self.model = model
        self.ema_model = ema_model
        self.alpha = alpha
        self.params = list(model.state_dict().values())
        self.ema_params = list(ema_model.state_dict().values())
        self.wd = 0.02 * lr

        for param, ema_param in zip(self.params, self.ema_params):
            param = ema_param  # want: B

    def step(self):
        one_minus_alpha = 1.0 - self.alpha
        for param, ema_param in zip(self.params, self.ema_params):
            if ema_param.dtype == torch.float32:
                ema_param.mul_(self.alpha)
                ema_param.add_(param * one_minus_alpha)
                # customized weight decay
                param.mul_(1 - self.wd)


class WeightEMAFixed(WeightEMA):
    def __init__(self, model, ema_model, alpha=0.999, lr=0.002):
        self.model = model
        self.ema_model = ema_model
        self.alpha = alpha
        self.params = list(model.state_dict().values())
        self.ema_params = list(ema_model.state_dict().values())
        self.wd = 0.02 * lr

        for param, ema_param in zip(self.params, self.ema_params):
            param.data.copy_(ema_param.data)


def make_pair():
    torch.manual_seed(0)
    model = WideBlock()
    torch.manual_seed(1)
    ema_model = WideBlock()
    for p in ema_model.parameters():
        p.detach_()
    return model, ema_model


if __name__ == "__main__":
    model, ema_model = make_pair()
    WeightEMA(model, ema_model)
    same = torch.equal(model.fc.weight, ema_model.fc.weight)
    print("buggy: model synced to ema:", same)
    assert not same

    model, ema_model = make_pair()
    WeightEMAFixed(model, ema_model)
    same = torch.equal(model.fc.weight, ema_model.fc.weight)
    print("fixed: model synced to ema:", same)
    assert same
