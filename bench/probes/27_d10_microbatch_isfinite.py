# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/3873 — Trainer.train_step checked `if not loss.isfinite(): raise ...` after every microbatch's forward/backward (a D2H sync per microbatch, f-string also calls loss.item()); the fix removes the per-microbatch check and instead tests `math.isfinite(global_avg_loss)` on the host float already fetched for logging.
import math
from collections.abc import Iterator

import torch
import torch.nn as nn

IGNORE_INDEX = -100


class MetricsProcessor:
    def __init__(self, log_freq=4):
        self.log_freq = log_freq
        self.history = []

    def should_log(self, step):
        return step == 1 or step % self.log_freq == 0

    def log(self, step, global_avg_loss, global_max_loss, grad_norm, extra_metrics=None):
        self.history.append((step, global_avg_loss, global_max_loss, grad_norm))


class ParallelDims:
    dp_enabled = False
    dp_cp_enabled = False


class Trainer:
    def __init__(self, model, gradient_accumulation_steps=2, device="cpu"):
        self.model_parts = [model]
        self.device = torch.device(device)
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.parallel_dims = ParallelDims()
        self.optimizers = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.lr_schedulers = torch.optim.lr_scheduler.LambdaLR(self.optimizers, lambda s: 1.0)
        self.metrics_processor = MetricsProcessor()
        self.max_norm = 1.0
        self.step = 0
        self.ntokens_seen = 0

    def loss_fn(self, pred, labels, global_valid_tokens):
        loss_sum = nn.functional.cross_entropy(
            pred.flatten(0, 1).float(), labels.flatten(0, 1), reduction="sum", ignore_index=IGNORE_INDEX
        )
        return loss_sum / global_valid_tokens, {}

    def forward_backward_step(self, *, input_dict, labels, global_valid_tokens):
        model_parts = self.model_parts
        inputs = input_dict["input"]
        pred = model_parts[0](inputs)
        loss, _ = self.loss_fn(pred, labels, global_valid_tokens)
        del pred
        loss.backward()
        # The returned loss here is local SUM loss / global_valid_tokens
        return loss

    def train_step(self, data_iterator: Iterator[tuple[dict[str, torch.Tensor], torch.Tensor]]):
        self.optimizers.zero_grad()
        lr_metrics = {"lr": self.lr_schedulers.get_last_lr()[0]}
        parallel_dims = self.parallel_dims

        # Collect all microbatches on CPU and count total valid tokens
        microbatches = []
        local_valid_tokens = torch.tensor(0, dtype=torch.int64)
        for _microbatch in range(self.gradient_accumulation_steps):
            input_dict, labels = next(data_iterator)
            local_valid_tokens += (labels != IGNORE_INDEX).sum()
            microbatches.append((input_dict, labels))

        global_valid_tokens = float(local_valid_tokens.item())

        # Process each microbatch: move to GPU, forward/backward, then free
        accumulated_losses = []
        for input_dict, labels in microbatches:
            for k, v in input_dict.items():
                if isinstance(v, torch.Tensor):
                    input_dict[k] = v.to(self.device)
            labels = labels.to(self.device)

            loss = self.forward_backward_step(
                input_dict=input_dict,
                labels=labels,
                global_valid_tokens=global_valid_tokens,
            )

            if not loss.isfinite():  # want: D
                raise RuntimeError(
                    f"Loss is not finite (loss={loss.item()}) at step "
                    f"{self.step}. Dumping the offending microbatch for "
                    f"debugging -- input_dict: {input_dict}, labels: {labels}, "
                    f"global_valid_tokens: {global_valid_tokens}"
                )

            accumulated_losses.append(loss.detach())

        grad_norm = torch.nn.utils.clip_grad_norm_(
            [p for m in self.model_parts for p in m.parameters()], self.max_norm, foreach=True
        )
        self.optimizers.step()
        self.lr_schedulers.step()

        # Reduce the data collected over gradient accumulation steps.
        loss = torch.sum(torch.stack(accumulated_losses))

        # log metrics
        if not self.metrics_processor.should_log(self.step):
            return

        global_avg_loss = global_max_loss = float(loss.detach().item())  # maybe: D (logging-gated sync, kept by the fix)
        global_ntokens_seen = self.ntokens_seen

        extra_metrics = {"n_tokens_seen": global_ntokens_seen, **lr_metrics}
        self.metrics_processor.log(
            self.step,
            global_avg_loss,
            global_max_loss,
            float(grad_norm.item()),  # maybe: D (logging-gated sync, kept by the fix)
            extra_metrics=extra_metrics,
        )


    def train(self, data_iterator, steps):
        while self.step < steps:
            self.step += 1
            self.train_step(data_iterator)


class TrainerFixed(Trainer):
    def train_step(self, data_iterator):
        self.optimizers.zero_grad()
        lr_metrics = {"lr": self.lr_schedulers.get_last_lr()[0]}

        microbatches = []
        local_valid_tokens = torch.tensor(0, dtype=torch.int64)
        for _microbatch in range(self.gradient_accumulation_steps):
            input_dict, labels = next(data_iterator)
            local_valid_tokens += (labels != IGNORE_INDEX).sum()
            microbatches.append((input_dict, labels))
        global_valid_tokens = float(local_valid_tokens.item())

        accumulated_losses = []
        for input_dict, labels in microbatches:
            for k, v in input_dict.items():
                if isinstance(v, torch.Tensor):
                    input_dict[k] = v.to(self.device)
            labels = labels.to(self.device)
            loss = self.forward_backward_step(
                input_dict=input_dict, labels=labels, global_valid_tokens=global_valid_tokens,
            )
            accumulated_losses.append(loss.detach())

        grad_norm = torch.nn.utils.clip_grad_norm_(
            [p for m in self.model_parts for p in m.parameters()], self.max_norm, foreach=True
        )
        self.optimizers.step()
        self.lr_schedulers.step()
        loss = torch.sum(torch.stack(accumulated_losses))

        if not self.metrics_processor.should_log(self.step):
            return

        global_avg_loss = global_max_loss = float(loss.detach().item())  # maybe: D (logging-gated sync, kept by the fix)
        global_ntokens_seen = self.ntokens_seen

        # Crash on invalid loss. This reuses the D2H copy already done
        # for logging, so it adds no extra sync.
        if not math.isfinite(global_avg_loss):
            raise RuntimeError(
                f"Loss is not finite (global_avg_loss={global_avg_loss}) at "
                f"step {self.step}. Stopping training."
            )

        extra_metrics = {"n_tokens_seen": global_ntokens_seen, **lr_metrics}
        self.metrics_processor.log(
            self.step, global_avg_loss, global_max_loss, float(grad_norm.item()),  # maybe: D (logging-gated sync, kept by the fix)
            extra_metrics=extra_metrics,
        )



def data_iter(vocab=32, seq=8, bs=2):
    while True:
        tokens = torch.randint(0, vocab, (bs, seq + 1))
        labels = tokens[:, 1:].clone()
        labels[:, -1] = IGNORE_INDEX
        yield {"input": tokens[:, :-1]}, labels


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (Trainer, TrainerFixed):
        model = nn.Sequential(nn.Embedding(32, 16), nn.Linear(16, 32))
        t = cls(model)
        t.train(data_iter(), steps=8)
        print(cls.__name__, [round(h[1], 3) for h in t.metrics_processor.history])
