# source: Lightning-AI/torchmetrics PR #2943 (and issue #2638) — aggregation metrics' update() ran `if nans.any() or nans_weight.any():` and built default/zero-division tensors on every call, so each training_step's `self.train_loss.update(loss)` synced with the GPU
import torch
from torch import nn

try:
    import lightning as L

    _Base = L.LightningModule
except ImportError:  # keep the probe importable without Lightning
    _Base = nn.Module


class RunningMean(nn.Module):
    def __init__(self, nan_strategy: str = "warn"):
        super().__init__()
        self.nan_strategy = nan_strategy
        self.register_buffer("value_sum", torch.zeros(()))
        self.register_buffer("weight_sum", torch.zeros(()))
        self.warned = False

    def _cast_and_nan_check(self, x, weight=None):
        device = self.value_sum.device
        if not isinstance(x, torch.Tensor):
            x = torch.as_tensor(x, dtype=torch.float32, device=device)
        if weight is None:
            weight = torch.ones_like(x)
        elif not isinstance(weight, torch.Tensor):
            weight = torch.as_tensor(weight, dtype=torch.float32, device=device)  # maybe: D (host number copied to the device from pageable memory: the copy waits for the stream)
        weight = torch.broadcast_to(weight, x.shape)
        nans = torch.isnan(x)
        nans_weight = torch.isnan(weight)
        if nans.any() or nans_weight.any():  # want: D
            if self.nan_strategy == "error":
                raise RuntimeError("Encountered `nan` values in tensor")
            if not self.warned:
                self.warned = True
            keep = ~(nans | nans_weight)
            x = x[keep]  # maybe: D (only reached once a NaN was seen)
            weight = weight[keep]  # maybe: D (only reached once a NaN was seen)
        return x.float(), weight.float()

    def update(self, value, weight=1.0):
        value, weight = self._cast_and_nan_check(value, weight)
        if value.numel() == 0:
            return
        self.value_sum += (value * weight).sum()
        self.weight_sum += weight.sum()

    def update_nan_ignoring(self, value):
        # the sync-free shape: zero the NaNs out instead of branching on them
        ok = ~torch.isnan(value)
        self.value_sum += torch.where(ok, value, 0.0).sum()
        self.weight_sum += ok.sum()

    def compute(self):
        return self.value_sum / self.weight_sum


def safe_divide(num: torch.Tensor, denom: torch.Tensor, zero_division: float = 0.0) -> torch.Tensor:
    num = num if num.is_floating_point() else num.float()
    denom = denom if denom.is_floating_point() else denom.float()
    zero = torch.tensor(zero_division).float().to(num.device)  # maybe: D (the torchmetrics #2638 sync: a fresh host tensor copied to the device on every call)
    return torch.where(denom != 0, num / denom, zero)


class Classifier(_Base):
    def __init__(self, dim: int = 8, n_cls: int = 3):
        super().__init__()
        self.net = nn.Linear(dim, n_cls)
        self.train_loss = RunningMean()
        self.register_buffer("tp", torch.zeros(n_cls))
        self.register_buffer("support", torch.zeros(n_cls))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        self.train_loss.update(loss.detach())
        pred = logits.argmax(-1)
        self.tp += torch.bincount(y[pred == y], minlength=self.tp.numel()).float()  # want: D
        self.support += torch.bincount(y, minlength=self.support.numel()).float()  # maybe: D (bincount sizes its output from max(y) on the device)
        self.batch_acc = safe_divide((pred == y).sum(), torch.tensor(y.shape[0]))  # per step; the copy is inside safe_divide
        return loss

    def on_train_epoch_end(self):
        # once per epoch: fine
        recall = safe_divide(self.tp, self.support)
        print("epoch loss", self.train_loss.compute().item(), "recall", recall.tolist())


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(3):
        batch = (torch.randn(16, 8), torch.randint(0, 3, (16,)))
        loss = model.training_step(batch, i)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.train_loss.update(torch.tensor([1.0, float("nan")]))
    model.on_train_epoch_end()
