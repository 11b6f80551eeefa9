# source: pytorch/torchrec PR #408 — RecMetric._update gated each task's state update on `if torch.any(has_valid_weights)` (and, fused, `if has_valid_weights[0]`), moving a device bool to the host on every training batch
from typing import Dict, List

import torch
from torch import nn


class WeightedCTRComputation(nn.Module):
    def __init__(self, n_tasks: int):
        super().__init__()
        self.register_buffer("click_sum", torch.zeros(n_tasks, dtype=torch.double))
        self.register_buffer("weight_sum", torch.zeros(n_tasks, dtype=torch.double))

    def update(self, predictions, labels, weights):
        self.click_sum += torch.sum(weights * labels, dim=-1)
        self.weight_sum += torch.sum(weights, dim=-1)

    def compute(self):
        return self.click_sum / self.weight_sum.clamp_min(1e-12)


class CTRMetric(nn.Module):
    def __init__(self, tasks: List[str], fused_tasks: bool = False, validate_update: bool = True):
        super().__init__()
        self.tasks = list(tasks)
        self.fused_tasks = fused_tasks
        self.validate_update = validate_update
        n = len(self.tasks) if fused_tasks else 1
        count = 1 if fused_tasks else len(self.tasks)
        self.computations = nn.ModuleList([WeightedCTRComputation(n) for _ in range(count)])
        # once, at construction: fine
        probe = torch.ones(n, 4)
        if not torch.any(probe > 0):
            raise ValueError("bad default weights")

    @staticmethod
    def _valid_rows(weights: torch.Tensor) -> torch.Tensor:
        return torch.gt(torch.count_nonzero(weights, dim=-1), 0)  # stays on device

    def _update(self, predictions: Dict[str, torch.Tensor], labels: Dict[str, torch.Tensor],
                weights: Dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            if self.fused_tasks:
                p = torch.stack([predictions[t] for t in self.tasks])
                l = torch.stack([labels[t] for t in self.tasks])
                w = torch.stack([weights[t] for t in self.tasks])
                has_valid_weights = self._valid_rows(w)
                if not self.validate_update:
                    self.computations[0].update(p, l, w)
                elif has_valid_weights[0]:  # want: D
                    self.computations[0].update(p, l, w)
            else:
                for task, computation in zip(self.tasks, self.computations):
                    w = weights[task].view(1, -1)
                    has_valid_weights = self._valid_rows(w)
                    if torch.any(has_valid_weights):  # want: D
                        computation.update(predictions[task].view(1, -1), labels[task].view(1, -1), w)
                    # the sync-free form: mask the weights instead of branching
                    safe_w = w * has_valid_weights.unsqueeze(-1)
                    del safe_w

    def update(self, *, predictions, labels, weights) -> None:
        self._update(predictions, labels, weights)

    def compute(self) -> Dict[str, torch.Tensor]:
        out = {}
        for i, computation in enumerate(self.computations):
            out[f"ctr-{i}"] = computation.compute()
        return out


def train_loop(model, metric: CTRMetric, batches, opt, log_every: int = 100):
    history = []
    for step, (dense, labels, weights) in enumerate(batches):
        logits = model(dense).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels, weight=weights)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        metric.update(predictions={"click": logits.sigmoid().detach()}, labels={"click": labels},
                      weights={"click": weights})
        if step % log_every == 0:
            history.append({k: v.tolist() for k, v in metric.compute().items()})  # every log_every steps
    return history


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(32, 8), torch.randint(0, 2, (32,)).float(), torch.ones(32)) for _ in range(4)]
    print(train_loop(model, CTRMetric(["click"]), data, opt, log_every=2))
    print(train_loop(model, CTRMetric(["click"], fused_tasks=True), data, opt, log_every=2))
