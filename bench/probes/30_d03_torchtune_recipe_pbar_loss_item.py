# source: meta-pytorch/torchtune https://github.com/meta-pytorch/torchtune/pull/522 — the finetune recipe's train() called pbar.set_description(f"...Loss: {loss.item()}") on every step, a cudaStreamSynchronize of 40-50 ms per step in the profile. The fix moved the loss.item() / progress-bar update into the `total_training_steps % log_every_n_steps == 0` logging block.
import torch
import torch.nn as nn


class _Tqdm:
    """Minimal stand-in for tqdm(iterable)."""

    def __init__(self, iterable):
        self._it = iterable
        self.desc = ""

    def __iter__(self):
        return iter(self._it)

    def set_description(self, desc):
        self.desc = desc


def tqdm(iterable):
    return _Tqdm(iterable)


class DiskLogger:
    def __init__(self):
        self.rows = []

    def log_dict(self, payload, step):
        self.rows.append((step, payload))


class FullFinetuneRecipeSingleDevice:
    def __init__(self, model, dataloader, device, epochs=1, log_every_n_steps=4, max_steps_per_epoch=None):
        self._device = device
        self._model = model.to(device)
        self._dataloader = dataloader
        self._optimizer = torch.optim.AdamW(self._model.parameters(), lr=1e-3)
        self._loss_fn = nn.CrossEntropyLoss()
        self._metric_logger = DiskLogger()
        self._log_every_n_steps = log_every_n_steps
        self._is_rank_zero = True
        self.epochs_run = 0
        self.total_epochs = epochs
        self.max_steps_per_epoch = max_steps_per_epoch
        self.total_training_steps = 0

    def train(self):
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            for idx, batch in enumerate(pbar := tqdm(self._dataloader)):
                if self.max_steps_per_epoch is not None and idx == self.max_steps_per_epoch:
                    break
                self.total_training_steps += 1
                self._optimizer.zero_grad()

                input_ids, labels = batch
                input_ids = input_ids.to(self._device)
                labels = labels.to(self._device)

                logits = self._model(input_ids)
                # Shift so that tokens < n predict n
                logits = logits[..., :-1, :].contiguous()
                labels = labels[..., 1:].contiguous()
                logits = logits.transpose(1, 2)
                # Compute loss
                loss = self._loss_fn(logits, labels)

                pbar.set_description(f"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}")  # want: D

                if self.total_training_steps % self._log_every_n_steps == 0 and self._is_rank_zero:
                    self._metric_logger.log_dict(
                        {"loss": loss.item(), "lr": self._optimizer.param_groups[0]["lr"]},
                        step=self.total_training_steps,  # Each step is unique, not limited to each epoch
                    )

                loss.backward()
                self._optimizer.step()
            self.epochs_run += 1


class FullFinetuneRecipeSingleDeviceFixed(FullFinetuneRecipeSingleDevice):
    def train(self):
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            for idx, batch in enumerate(pbar := tqdm(self._dataloader)):
                if self.max_steps_per_epoch is not None and idx == self.max_steps_per_epoch:
                    break
                self.total_training_steps += 1
                self._optimizer.zero_grad()

                input_ids, labels = batch
                input_ids = input_ids.to(self._device)
                labels = labels.to(self._device)

                logits = self._model(input_ids)
                logits = logits[..., :-1, :].contiguous()
                labels = labels[..., 1:].contiguous()
                logits = logits.transpose(1, 2)
                loss = self._loss_fn(logits, labels)

                if self.total_training_steps % self._log_every_n_steps == 0 and self._is_rank_zero:
                    pbar.set_description(f"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}")
                    self._metric_logger.log_dict(
                        {"loss": loss.item(), "lr": self._optimizer.param_groups[0]["lr"]},
                        step=self.total_training_steps,
                    )

                loss.backward()
                self._optimizer.step()
            self.epochs_run += 1


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(torch.tanh(self.emb(tokens)))


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(t, t.clone()) for t in torch.randint(0, 64, (12, 4, 16))]
    for cls in (FullFinetuneRecipeSingleDevice, FullFinetuneRecipeSingleDeviceFixed):
        torch.manual_seed(1)
        recipe = cls(TinyLM(), data, torch.device("cpu"), epochs=2)
        recipe.train()
        print(cls.__name__, "steps", recipe.total_training_steps, "logged", len(recipe._metric_logger.rows))
