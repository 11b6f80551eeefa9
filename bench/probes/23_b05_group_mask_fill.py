# source: ShichenLiu/CondenseNet issue #14 — LearnedGroupConv._dropping prunes input channels with `self._mask[i::self.groups, d, :, :].fill_(0)` where `d` comes from a sort() index tensor; under PyTorch 0.3 that index was advanced, fill_ hit a copy and no channel was ever dropped. Today the per-element loop lands, but the vectorized form below loses the write the same way.
import torch
import torch.nn as nn


class LearnedGroupConv(nn.Module):
    def __init__(self, in_channels, out_channels, groups=4, condense_factor=4):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.groups, self.condense_factor = groups, condense_factor
        self.register_buffer("_mask", torch.ones(self.conv.weight.size()))
        self.count = 0

    def _group_order(self):
        weight = (self.conv.weight * self._mask).abs().squeeze()
        d_out = self.out_channels // self.groups
        weight = weight.view(d_out, self.groups, self.in_channels).transpose(0, 1).contiguous()
        return weight.view(self.out_channels, self.in_channels), d_out

    @torch.no_grad()
    def _dropping(self, delta):
        weight, d_out = self._group_order()
        for i in range(self.groups):
            wi = weight[i * d_out:(i + 1) * d_out, :]
            di = wi.sum(0).sort()[1][self.count:self.count + delta]
            self._mask[i::self.groups, di, :, :].fill_(0)  # want: B
        self.count += delta

    @torch.no_grad()
    def _dropping_loop(self, delta):
        weight, d_out = self._group_order()
        for i in range(self.groups):
            wi = weight[i * d_out:(i + 1) * d_out, :]
            di = wi.sum(0).sort()[1][self.count:self.count + delta]
            for d in di:
                self._mask[i::self.groups, d, :, :].fill_(0)  # `d` is a 0-dim tensor: indexes like an int, lands
            for d in di.tolist():
                self._mask[i::self.groups, d].fill_(0)  # plain int: a view, lands
            self._mask[i::self.groups, di, :, :] = 0  # __setitem__: lands
        self.count += delta


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = LearnedGroupConv(8, 8)
    layer._dropping(2)
    assert layer._mask.sum() == layer._mask.numel()  # nothing was dropped
    layer.count = 0
    layer._dropping_loop(2)
    assert layer._mask.sum() < layer._mask.numel()
    print("ok: fill_ on _mask[i::g, index_tensor] zeroed a gathered copy")
