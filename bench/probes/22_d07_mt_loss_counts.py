# source: facebookresearch/fairchem PR #2203 — the per-task DDP loss counted valid samples with `loss[mult_mask].numel()`, `torch.nonzero(...).numel()`, a bincount over a masked index, asserts on device tensors, branched on `torch.all(loss.isfinite())`, and used `natoms.sum()` as a view size: ~15 host reads per step
import torch
import torch.distributed as dist
from torch import nn


def _ddp_sum_scalar(value: torch.Tensor) -> torch.Tensor:
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(value)
    return value


class MultiTaskLoss(nn.Module):
    def __init__(self, loss_fn: nn.Module, reduction: str = "mean", coefficient: float = 1.0):
        super().__init__()
        assert reduction in ("mean", "per_structure")  # python strings: fine
        self.loss_fn = loss_fn
        self.reduction = reduction
        self.coefficient = coefficient

    def _mean(self, loss, mult_mask):
        num_samples = loss[mult_mask].numel()  # want: D
        total = _ddp_sum_scalar(torch.tensor(float(num_samples), device=loss.device))  # maybe: D (a host number copied to the device from pageable memory waits for the stream)
        world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
        return loss.sum() * world / total.clamp(min=1.0)

    def _per_structure(self, loss, mult_mask, natoms):
        n_struct = natoms.shape[0]
        atom_to_struct = torch.repeat_interleave(torch.arange(n_struct, device=natoms.device), natoms)  # want: D
        kept = atom_to_struct[mult_mask]  # want: D
        atoms_per_struct = torch.bincount(kept, minlength=n_struct)  # want: D
        assert (atoms_per_struct <= natoms).all(), "mask selects atoms outside a structure"  # want: D
        num_structs = torch.nonzero(atoms_per_struct).numel()  # want: D
        per_struct = torch.zeros(n_struct, device=loss.device).index_add_(0, atom_to_struct, loss.sum(-1))
        per_struct = per_struct / natoms.clamp(min=1)
        return per_struct.sum() / max(num_structs, 1)

    def forward(self, pred, target, mult_mask, natoms=None):
        loss = self.loss_fn(pred, target)
        if loss.dim() > 1:
            loss = loss * mult_mask.view(-1, *([1] * (loss.dim() - 1)))
        else:
            loss = loss * mult_mask
        if torch.all(loss.isfinite()):  # want: D
            if self.reduction == "mean":
                return self.coefficient * self._mean(loss, mult_mask)
            return self.coefficient * self._per_structure(loss, mult_mask, natoms)
        raise ValueError("loss has non-finite entries")


def sync_free_mean(loss, mult_mask):
    # the shape of the fix: counts stay device scalars
    count = _ddp_sum_scalar(mult_mask.sum().to(loss.dtype))
    return loss.sum() / count.clamp(min=1.0)


def compute_loss(batch, preds, losses, task_masks):
    natoms = batch["natoms"]
    total = 0.0
    for task, loss_mod in losses.items():
        pred = preds[task]
        if task == "forces":
            pred = pred.view(natoms.sum(), 3)  # want: D
        total = total + loss_mod(pred, batch[task], task_masks[task], natoms)
    return total


def train_step(model, batch, losses, task_masks, opt):
    preds = model(batch)
    loss = compute_loss(batch, preds, losses, task_masks)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


class ToyPotential(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)

    def forward(self, batch):
        h = self.lin(batch["pos"])
        energy = torch.zeros(batch["natoms"].shape[0]).index_add_(0, batch["atom_to_struct"], h[:, 0])
        return {"energy": energy, "forces": h[:, 1:].reshape(-1)}


if __name__ == "__main__":
    torch.manual_seed(0)
    natoms = torch.tensor([3, 2])
    batch = {"natoms": natoms, "pos": torch.randn(5, 3), "atom_to_struct": torch.tensor([0, 0, 0, 1, 1]),
             "energy": torch.randn(2), "forces": torch.randn(5, 3)}
    losses = {"energy": MultiTaskLoss(nn.MSELoss(reduction="none")),
              "forces": MultiTaskLoss(nn.L1Loss(reduction="none"), reduction="per_structure")}
    masks = {"energy": torch.tensor([True, True]), "forces": torch.ones(5, dtype=torch.bool)}
    model = ToyPotential()
    print(train_step(model, batch, losses, masks, torch.optim.SGD(model.parameters(), lr=0.1)))
    print(sync_free_mean(torch.rand(4), torch.tensor([True, False, True, True])))
