# source: allenai/OLMo-core https://github.com/allenai/OLMo-core/pull/68 — Trainer._train_batch created its per-step loss accumulators with `torch.tensor(0.0, device=self.device)`, a blocking host-to-device copy that synchronises the stream on every training step (found with torch.cuda.set_sync_debug_mode("warn")); the fix builds them on the CPU and ships them with `move_to_device(...)`, i.e. `.to(device, non_blocking=True)`.
from typing import Any, Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def move_to_device(o, device: torch.device, non_blocking: Optional[bool] = None):
    if non_blocking is None:
        non_blocking = device.type != "cpu"
    if isinstance(o, torch.Tensor):
        return o.to(device, non_blocking=non_blocking)
    if isinstance(o, dict):
        return {k: move_to_device(v, device) for k, v in o.items()}
    return o


def split_batch(batch: Dict[str, Any], n: int) -> List[Dict[str, Any]]:
    return [dict(zip(batch, vals)) for vals in zip(*(v.split(n) for v in batch.values()))]


class Trainer:
    def __init__(self, model, optim, device, rank_microbatch_size=2, z_loss_multiplier: Optional[float] = 1e-4):
        self.model, self.optim, self.device = model, optim, device
        self.rank_microbatch_size = rank_microbatch_size
        self.z_loss_multiplier = z_loss_multiplier
        self.metrics: Dict[str, torch.Tensor] = {}

    def record_metric(self, name, value):
        self.metrics[name] = value  # kept on device; read back only at the log interval

    def _get_microbatch_loss(self, micro_batch, batch_num_tokens_for_loss):
        logits = self.model(micro_batch["input_ids"])
        ce_loss = F.cross_entropy(logits.flatten(0, 1), micro_batch["labels"].flatten(), reduction="sum")
        ce_loss = ce_loss / batch_num_tokens_for_loss
        z_loss = self.z_loss_multiplier * logits.logsumexp(-1).pow(2).mean()
        return ce_loss + z_loss, ce_loss, z_loss

    def _train_batch(self, batch: Dict[str, Any], fixed: bool = False):
        self.optim.zero_grad(set_to_none=True)
        batch = move_to_device(batch, self.device)
        batch_num_tokens_for_loss = (batch["labels"] != -100).sum()
        micro_batches = split_batch(batch, self.rank_microbatch_size)
        del batch

        if not fixed:
            ce_batch_loss = torch.tensor(0.0, device=self.device)  # want: D
            z_batch_loss = (
                None if self.z_loss_multiplier is None else torch.tensor(0.0, device=self.device)  # want: D
            )
        else:
            ce_batch_loss = move_to_device(torch.tensor(0.0), self.device)
            z_batch_loss = (
                None
                if self.z_loss_multiplier is None
                else move_to_device(torch.tensor(0.0), self.device)
            )

        for micro_batch in micro_batches:
            loss, ce_loss, z_loss = self._get_microbatch_loss(micro_batch, batch_num_tokens_for_loss)
            ce_batch_loss += ce_loss.detach()
            if z_loss is not None:
                z_batch_loss += z_loss.detach()
            loss.backward()

        self.record_metric("train/CE loss", ce_batch_loss)
        if z_batch_loss is not None:
            self.record_metric("train/Z loss", z_batch_loss)
        self.optim.step()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    results = []
    for fixed in (False, True):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 50)).to(device)
        trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), device)
        batch = {"input_ids": torch.randint(0, 50, (4, 8)), "labels": torch.randint(0, 50, (4, 8))}
        trainer._train_batch(batch, fixed=fixed)
        results.append(float(trainer.metrics["train/CE loss"]))
    assert abs(results[0] - results[1]) < 1e-6
    print("same CE loss", results)
