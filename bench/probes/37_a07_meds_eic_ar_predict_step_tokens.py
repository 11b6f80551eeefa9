# source: mmcdermott/MEDS_EIC_AR https://github.com/mmcdermott/MEDS_EIC_AR/pull/141 — Trainer.predict accumulates every predict_step return value in a Python list for the whole run, and predict_step returned the generated `tokens` (a slice of the generation buffer) together with per-row index tensors straight off the prediction device. With the dataset expanded n_trajectories-fold, each kept batch output pinned its per-batch generation allocation for the full pass. The fix detaches and moves the returned tensors to CPU inside predict_step so device memory is released batch by batch.
from dataclasses import dataclass
from typing import Dict, List

import torch
from torch import nn


@dataclass
class MEDSTorchBatch:
    code: torch.Tensor
    subject_idx: torch.Tensor
    trajectory_idx: torch.Tensor


class TinyGenerator(nn.Module):
    def __init__(self, vocab_size=128, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.head = nn.Linear(hidden, vocab_size)

    def generate(self, input_ids: torch.Tensor, max_new_tokens: int) -> torch.Tensor:
        out = torch.empty(input_ids.shape[0], input_ids.shape[1] + max_new_tokens, dtype=torch.long)
        out[:, : input_ids.shape[1]] = input_ids
        for i in range(input_ids.shape[1], out.shape[1]):
            logits = self.head(self.embed(out[:, :i]).mean(dim=1))
            out[:, i] = logits.argmax(dim=-1)
        return out


class MEICARModule(nn.Module):
    def __init__(self, max_new_tokens=8):
        super().__init__()
        self.model = TinyGenerator()
        self.max_new_tokens = max_new_tokens

    def _generate_chunk(self, batch: MEDSTorchBatch) -> torch.Tensor:
        generated = self.model.generate(batch.code, max_new_tokens=self.max_new_tokens)
        return generated[:, batch.code.shape[1]:]

    def predict_step(self, batch: MEDSTorchBatch) -> Dict[str, torch.Tensor]:
        tokens = self._generate_chunk(batch)
        return {"tokens": tokens, "subject_idxs": batch.subject_idx, "trajectory_idxs": batch.trajectory_idx}  # want: A


class MEICARModuleFixed(MEICARModule):
    def predict_step(self, batch: MEDSTorchBatch) -> Dict[str, torch.Tensor]:
        """Returned tensors are detached and moved to CPU so Trainer.predict's accumulated list holds no device memory."""
        tokens = self._generate_chunk(batch)
        return {
            "tokens": tokens.detach().cpu(),
            "subject_idxs": batch.subject_idx.detach().cpu(),
            "trajectory_idxs": batch.trajectory_idx.detach().cpu(),
        }


def trainer_predict(module: nn.Module, dataloader: List[MEDSTorchBatch]) -> List[Dict[str, torch.Tensor]]:
    predictions = []
    with torch.no_grad():
        for batch in dataloader:
            predictions.append(module.predict_step(batch))
    return predictions


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = [
        MEDSTorchBatch(torch.randint(0, 128, (4, 256)), torch.arange(4) + 4 * b, torch.zeros(4, dtype=torch.long))
        for b in range(3)
    ]
    m = MEICARModule().eval()
    preds = trainer_predict(m, loader)
    tok = preds[0]["tokens"]
    assert tok.untyped_storage().nbytes() > 20 * tok.numel() * tok.element_size()

    m_fixed = MEICARModuleFixed().eval()
    m_fixed.load_state_dict(m.state_dict())
    preds_fixed = trainer_predict(m_fixed, loader)
    assert all(torch.equal(a["tokens"], b["tokens"]) for a, b in zip(preds, preds_fixed))
    print("ok")
