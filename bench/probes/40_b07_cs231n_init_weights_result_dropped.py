# source: haofeixu/cs231n https://github.com/haofeixu/cs231n/issues/1 — In the assignment-2 PyTorch notebook, `init_weights(m)` (applied with `model.apply(init_weights)`) called `random_weight(m.weight.size())` and `zero_weight(m.bias.size())` as bare statements; both helpers build and return brand-new tensors, so the freshly initialized weights were dropped and the layers kept PyTorch's default init. The issue ("init_weights doesn't change weights in place ... returns weights") was fixed in d7a150f and then, after issue #2, settled on writing the new tensors into the parameters with `m.weight.data = ...` / `m.bias.data = ...`.
import numpy as np
import torch
import torch.nn as nn

dtype = torch.float32
device = torch.device('cpu')


def flatten(x):
    N = x.shape[0]  # read in N, C, H, W
    return x.view(N, -1)  # "flatten" the C * H * W values into a single vector per image


class Flatten(nn.Module):
    def forward(self, x):
        return flatten(x)


def random_weight(shape):
    """
    Create random Tensors for weights; setting requires_grad=True means that we
    want to compute gradients for these Tensors during the backward pass.
    We use Kaiming normalization: sqrt(2 / fan_in)
    """
    if len(shape) == 2:  # FC weight
        fan_in = shape[1]
    else:
        fan_in = np.prod(shape[1:])  # conv weight [out_channel, in_channel, kH, kW]
    w = torch.randn(shape, device=device, dtype=dtype) * np.sqrt(2. / fan_in)
    w.requires_grad = True
    return w


def zero_weight(shape):
    return torch.zeros(shape, device=device, dtype=dtype, requires_grad=True)


def init_weights(m):
    if type(m) == nn.Conv2d or type(m) == nn.Linear:
        random_weight(m.weight.size())  # want: B
        zero_weight(m.bias.size())  # want: B


def init_weights_fixed(m):
    if type(m) == nn.Conv2d or type(m) == nn.Linear:
        m.weight.data = random_weight(m.weight.size())
        m.bias.data = zero_weight(m.bias.size())


def build_model(channel_1=8, channel_2=4, num_classes=10):
    return nn.Sequential(
        nn.Conv2d(3, channel_1, kernel_size=5, padding=2),
        nn.ReLU(),
        nn.Conv2d(channel_1, channel_2, kernel_size=3, padding=1),
        nn.ReLU(),
        Flatten(),
        nn.Linear(channel_2 * 8 * 8, num_classes),
    )


if __name__ == "__main__":
    torch.manual_seed(0)
    model = build_model()
    model.apply(init_weights)
    assert all(m.bias.abs().sum() > 0 for m in model if isinstance(m, (nn.Conv2d, nn.Linear)))

    torch.manual_seed(0)
    model_fixed = build_model()
    model_fixed.apply(init_weights_fixed)
    assert all(m.bias.abs().sum() == 0 for m in model_fixed if isinstance(m, (nn.Conv2d, nn.Linear)))
    assert not torch.equal(model[0].weight, model_fixed[0].weight)
    scores = model_fixed(torch.randn(2, 3, 8, 8))
    assert scores.shape == (2, 10)
    print("ok")
