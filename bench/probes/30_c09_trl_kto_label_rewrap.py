# source: huggingface/trl https://github.com/huggingface/trl/pull/6431 — after the KTO collator started returning batch["label"] as a bool tensor already moved to the device, KTOTrainer._compute_loss / _compute_loss_liger still re-wrapped it with torch.tensor(batch["label"]) and torch.tensor(batch["label"], dtype=torch.bool).to(device), copy-constructing a tensor from a tensor every step; the fix uses batch["label"] directly.
from types import SimpleNamespace

import torch
import torch.nn.functional as F


def kto_collate(features):
    return {
        "policy_logps": torch.stack([f["policy_logps"] for f in features]),
        "reference_logps": torch.stack([f["reference_logps"] for f in features]),
        "policy_KL_logps": torch.stack([f["policy_KL_logps"] for f in features]),
        "reference_KL_logps": torch.stack([f["reference_KL_logps"] for f in features]),
        "label": torch.tensor([f["label"] for f in features], dtype=torch.bool),
    }


class KTOTrainer:
    def __init__(self, beta=0.1, desirable_weight=1.0, undesirable_weight=1.0, device="cpu"):
        self.beta = beta
        self.desirable_weight = desirable_weight
        self.undesirable_weight = undesirable_weight
        self.accelerator = SimpleNamespace(device=torch.device(device))

    def _kto_terms(self, batch):
        kl = (batch["policy_KL_logps"] - batch["reference_KL_logps"]).mean().clamp(min=0).detach()
        logratios = batch["policy_logps"] - batch["reference_logps"]
        chosen_losses = 1 - F.sigmoid(self.beta * (logratios - kl))
        rejected_losses = 1 - F.sigmoid(self.beta * (kl - logratios))
        return chosen_losses, rejected_losses

    def _compute_loss(self, model, batch):
        batch = {k: (v.to(self.accelerator.device) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
        labels = torch.tensor(batch["label"])  # want: C
        chosen_losses, rejected_losses = self._kto_terms(batch)
        losses = torch.where(labels, self.desirable_weight * chosen_losses, self.undesirable_weight * rejected_losses)
        return losses.mean()

    def _compute_loss_liger(self, model, batch):
        batch = {k: (v.to(self.accelerator.device) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
        preference_labels = torch.tensor(batch["label"], dtype=torch.bool).to(self.accelerator.device)  # want: C
        return self._fused_kto_loss(batch, preference_labels)

    def _fused_kto_loss(self, batch, preference_labels):
        chosen_losses, rejected_losses = self._kto_terms(batch)
        weights = torch.where(preference_labels, self.desirable_weight, self.undesirable_weight)
        return (weights * torch.where(preference_labels, chosen_losses, rejected_losses)).mean()


class KTOTrainerFixed(KTOTrainer):
    def _compute_loss(self, model, batch):
        batch = {k: (v.to(self.accelerator.device) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
        labels = batch["label"]
        chosen_losses, rejected_losses = self._kto_terms(batch)
        losses = torch.where(labels, self.desirable_weight * chosen_losses, self.undesirable_weight * rejected_losses)
        return losses.mean()

    def _compute_loss_liger(self, model, batch):
        batch = {k: (v.to(self.accelerator.device) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
        return self._fused_kto_loss(batch, batch["label"])


if __name__ == "__main__":
    import warnings

    torch.manual_seed(0)
    feats = [
        {
            "policy_logps": torch.randn(()),
            "reference_logps": torch.randn(()),
            "policy_KL_logps": torch.randn(()),
            "reference_KL_logps": torch.randn(()),
            "label": bool(i % 2),
        }
        for i in range(8)
    ]
    batch = kto_collate(feats)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        la = KTOTrainer()._compute_loss(None, batch)
        lla = KTOTrainer()._compute_loss_liger(None, batch)
    lb = KTOTrainerFixed()._compute_loss(None, batch)
    llb = KTOTrainerFixed()._compute_loss_liger(None, batch)
    assert torch.allclose(la, lb) and torch.allclose(lla, llb)
    print("copy-construct warnings (buggy):", sum("copy construct" in str(x.message) for x in w))
