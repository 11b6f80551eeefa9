# source: cvqluu/Angular-Penalty-Softmax-Losses-Pytorch issue #3 — AngularPenaltySMLoss.forward "normalizes" the fc weight with `for W in self.fc.parameters(): W = F.normalize(W, ...)`, which only rebinds the loop name; the weight is never normalized.
import torch
import torch.nn as nn
import torch.nn.functional as F


class AngularPenaltySMLoss(nn.Module):
    def __init__(self, in_features, out_features, s=30.0, m=0.4):
        super().__init__()
        self.s, self.m = s, m
        self.fc = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x, labels):
        for W in self.fc.parameters():
            W = F.normalize(W, p=2, dim=1)  # want: B

        x = F.normalize(x, p=2, dim=1)  # rebinding that is used below: fine
        wf = self.fc(x)
        target = wf.gather(1, labels[:, None]).squeeze(1)
        numerator = self.s * (target - self.m)
        others = wf.masked_fill(F.one_hot(labels, wf.shape[1]).bool(), float("-inf"))
        denominator = torch.exp(numerator) + torch.exp(self.s * others).sum(dim=1)
        return -(numerator - torch.log(denominator)).mean()


class AngularPenaltySMLossFixed(AngularPenaltySMLoss):
    """The fix from the thread: write the normalized rows back into the parameter."""

    def forward(self, x, labels):
        with torch.no_grad():
            self.fc.weight.copy_(F.normalize(self.fc.weight, p=2, dim=1))
        for W in self.fc.parameters():
            W.data = F.normalize(W.data, p=2, dim=1)  # rebinds the parameter's storage: lands
        return super().forward(x, labels)


def norms_after(loss_cls):
    torch.manual_seed(0)
    loss = loss_cls(8, 5)
    with torch.no_grad():
        loss.fc.weight.mul_(3.0)
    loss(torch.randn(4, 8), torch.tensor([0, 1, 2, 3]))
    return loss.fc.weight.norm(dim=1)


if __name__ == "__main__":
    assert not torch.allclose(norms_after(AngularPenaltySMLoss), torch.ones(5))  # the write was lost
    assert torch.allclose(norms_after(AngularPenaltySMLossFixed), torch.ones(5))
    print("ok: rebinding the loop variable left the fc weight unnormalized")
