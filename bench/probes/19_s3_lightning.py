import torch
from torch import nn
import lightning as L


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 2)
        self.val_preds = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        acc = (logits.argmax(-1) == y).float().mean().item()  # want: D
        self.log("acc", acc)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.val_preds.append(logits[:, 1])  # want: A
