# source: vllm-project/speculators https://github.com/vllm-project/speculators/pull/813 — Trainer.val_epoch all-reduced every metric of every validation batch and accumulated it into a Python float with v.item(), i.e. per-batch, per-metric collectives and GPU->CPU syncs; the fix accumulates the metrics on device and does a single stacked all_reduce and host read once per epoch.
import torch
import torch.distributed as dist
import torch.nn as nn


def normalize_counted_metrics(metrics, world_size):
    return {k: v / world_size for k, v in metrics.items()}


class DraftModel(nn.Module):
    def __init__(self, hidden=16, vocab=32):
        super().__init__()
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, hidden_states, labels, **kwargs):
        logits = self.proj(hidden_states)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
        draft_tokens = logits.argmax(-1)
        acc = (draft_tokens == labels).float().mean()
        return draft_tokens, loss, {"loss": loss.detach(), "full_acc_0": acc}


class Trainer:
    def __init__(self, model, val_loader, local_rank="cpu"):
        self.model = model
        self.val_loader = val_loader
        self.local_rank = local_rank
        self.is_distributed = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank() if self.is_distributed else 0
        self.val_call_kwargs = {}

    @torch.no_grad()
    def val_epoch(self, epoch):
        self.model.eval()
        val_loader = self.val_loader
        val_metrics = {}
        num_batches = len(val_loader)
        for batch in val_loader:
            gpu_batch = {k: v.to(self.local_rank, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
            _draft_tokens, _loss, metrics = self.model(**gpu_batch, **self.val_call_kwargs)

            if self.is_distributed:
                for m in metrics.values():
                    dist.all_reduce(m, op=dist.ReduceOp.SUM)  # maybe: D (per-batch collective on the validation path, removed by the fix)

            for k, v in metrics.items():
                val_metrics[k] = val_metrics.get(k, 0.0) + v.item()  # want: D

        world_size = dist.get_world_size() if self.is_distributed else 1
        val_metrics = {k: v / num_batches for k, v in val_metrics.items()}
        val_metrics = normalize_counted_metrics(val_metrics, world_size)
        return {f"{k}_epoch": v for k, v in val_metrics.items()}


class TrainerFixed(Trainer):
    @torch.no_grad()
    def val_epoch(self, epoch):
        self.model.eval()
        val_loader = self.val_loader
        sums = {}
        num_batches = len(val_loader)
        for batch in val_loader:
            gpu_batch = {k: v.to(self.local_rank, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
            _draft_tokens, _loss, metrics = self.model(**gpu_batch, **self.val_call_kwargs)
            for k, v in metrics.items():
                sums[k] = sums[k] + v if k in sums else v.clone()

        keys = list(sums)
        stacked = torch.stack([sums[k] for k in keys])
        if self.is_distributed:
            dist.all_reduce(stacked, op=dist.ReduceOp.SUM)
        totals = stacked.tolist()  # one host read per epoch
        world_size = dist.get_world_size() if self.is_distributed else 1
        val_metrics = {k: t / num_batches for k, t in zip(keys, totals)}
        val_metrics = normalize_counted_metrics(val_metrics, world_size)
        return {f"{k}_epoch": v for k, v in val_metrics.items()}


if __name__ == "__main__":
    torch.manual_seed(0)
    model = DraftModel()
    loader = [{"hidden_states": torch.randn(4, 8, 16), "labels": torch.randint(0, 32, (4, 8))} for _ in range(6)]
    a = Trainer(model, loader).val_epoch(0)
    b = TrainerFixed(model, loader).val_epoch(0)
    assert all(abs(a[k] - b[k]) < 1e-5 for k in a)
    print(a)
