# source: meta-pytorch/torchtune https://github.com/meta-pytorch/torchtune/pull/661 — in the full_finetune_single_device recipe the loss.item() used for the progress-bar description had drifted back outside the `total_training_steps % log_every_n_steps == 0` block, so every step paid a cudaStreamSynchronize; the fix moves the loss sync back inside the log-every-n-steps block, as in the other recipes.
import torch
import torch.nn as nn
import torch.nn.functional as F


class _Bar:
    def __init__(self):
        self.desc = ""

    def set_description(self, desc):
        self.desc = desc

    def update(self, n):
        pass


class _MetricLogger:
    def __init__(self):
        self.rows = []

    def log_dict(self, payload, step):
        self.rows.append((step, payload))


class FullFinetuneRecipeSingleDevice:
    def __init__(self, model, dataloader, epochs=1, gradient_accumulation_steps=1, log_every_n_steps=10):
        self._model = model
        self._dataloader = dataloader
        self._optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self._loss_fn = nn.CrossEntropyLoss()
        self._device = torch.device("cpu")
        self.total_epochs = epochs
        self._gradient_accumulation_steps = gradient_accumulation_steps
        self._log_every_n_steps = log_every_n_steps
        self._metric_logger = _MetricLogger()
        self.total_training_steps = 0

    def train(self):
        pbar = _Bar()
        for curr_epoch in range(self.total_epochs):
            for idx, batch in enumerate(self._dataloader):
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
                # Note: We're always logging the loss before normalizing it
                # Check if this is the norm or not
                pbar.set_description(f"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}")  # want: D

                if self.total_training_steps % self._log_every_n_steps == 0:
                    self._metric_logger.log_dict(
                        {"loss": loss.item(), "lr": self._optimizer.param_groups[0]["lr"]},
                        step=self.total_training_steps,
                    )

                loss = loss / self._gradient_accumulation_steps
                loss.backward()
                if (idx + 1) % self._gradient_accumulation_steps == 0:
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    self.total_training_steps += 1
                    pbar.update(1)
        return pbar.desc


class FullFinetuneRecipeSingleDeviceFixed(FullFinetuneRecipeSingleDevice):
    def train(self):
        pbar = _Bar()
        for curr_epoch in range(self.total_epochs):
            for idx, batch in enumerate(self._dataloader):
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

                if self.total_training_steps % self._log_every_n_steps == 0:
                    # Note: We're always logging the loss before normalizing it
                    # Check if this is the norm or not
                    pbar.set_description(f"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}")
                    self._metric_logger.log_dict(
                        {"loss": loss.item(), "lr": self._optimizer.param_groups[0]["lr"]},
                        step=self.total_training_steps,
                    )

                loss = loss / self._gradient_accumulation_steps
                loss.backward()
                if (idx + 1) % self._gradient_accumulation_steps == 0:
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    self.total_training_steps += 1
                    pbar.update(1)
        return pbar.desc


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.out(F.gelu(self.emb(ids)))


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(t, t.clone()) for t in torch.randint(0, 50, (20, 2, 12))]
    print("buggy:", FullFinetuneRecipeSingleDevice(TinyLM(), data, log_every_n_steps=5).train())
    print("fixed:", FullFinetuneRecipeSingleDeviceFixed(TinyLM(), data, log_every_n_steps=5).train())
