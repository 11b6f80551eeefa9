# source: sgl-project/SpecForge PR #222 — the Eagle3 draft-model training forward computed each test-time-training position's accuracy with `.sum().item() / (loss_mask.sum().item() + 1e-6)`: two syncs per TTT step and a torch.compile graph break
import torch
import torch.nn.functional as F
from torch import nn


def _compute_metric_acc(logits, target_p, position_mask, loss_mask):
    return (
        (logits.argmax(-1) == target_p.argmax(-1)) * position_mask.squeeze(-1)
    ).sum().item() / (loss_mask.sum().item() + 1e-6)  # want: D


def _compute_metric_acc_tensor(logits, target_p, position_mask, loss_mask):
    hits = (logits.argmax(-1) == target_p.argmax(-1)) * position_mask.squeeze(-1)
    return hits.sum() / (loss_mask.sum() + 1e-6)  # device scalar: no sync


def shift_left(t: torch.Tensor) -> torch.Tensor:
    return torch.cat([t[:, 1:], torch.zeros_like(t[:, :1])], dim=1)


class DraftLayer(nn.Module):
    def __init__(self, dim: int, vocab: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(2 * dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden, input_ids):
        return self.norm(F.silu(self.fc(torch.cat([hidden, self.embed(input_ids)], dim=-1))))


class OnlineEagle3(nn.Module):
    def __init__(self, dim=32, vocab=64, ttt_length=4, report_acc_as_float=True):
        super().__init__()
        self.draft = DraftLayer(dim, vocab)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.ttt_length = ttt_length
        self.report_acc_as_float = report_acc_as_float

    def forward(self, input_ids, hidden_states, target_logits, loss_mask):
        plosses, accs = [], []
        hidden = hidden_states
        position_mask = loss_mask.unsqueeze(-1)
        for idx in range(self.ttt_length):
            hidden = self.draft(hidden, input_ids)
            logits = self.lm_head(hidden)
            with torch.no_grad():
                target_p = target_logits.softmax(-1)
            log_q = F.log_softmax(logits.float(), dim=-1)
            per_tok = -(target_p * log_q).sum(-1) * position_mask.squeeze(-1)
            plosses.append(per_tok.sum() / (loss_mask.sum() + 1e-6))
            if self.report_acc_as_float:
                accs.append(_compute_metric_acc(logits, target_p, position_mask, loss_mask))
            else:
                accs.append(_compute_metric_acc_tensor(logits, target_p, position_mask, loss_mask))
            if idx < self.ttt_length - 1:
                input_ids = shift_left(input_ids)
                target_logits = shift_left(target_logits)
                loss_mask = shift_left(loss_mask)
                position_mask = shift_left(position_mask)
        return plosses, accs


def run_epoch(model, batches, opt, log_interval=50):
    logged = []
    for step, (ids, hidden, tgt, mask) in enumerate(batches):
        plosses, accs = model(ids, hidden, tgt, mask)
        weights = [0.8 ** i for i in range(len(plosses))]
        loss = sum(w * l for w, l in zip(weights, plosses))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % log_interval == 0:
            logged.append([float(a) for a in accs])  # every log_interval steps
    return logged


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, D, V = 2, 6, 32, 64
    data = [(torch.randint(0, V, (B, T)), torch.randn(B, T, D), torch.randn(B, T, V), torch.ones(B, T)) for _ in range(2)]
    for as_float in (True, False):
        m = OnlineEagle3(D, V, report_acc_as_float=as_float)
        print(run_epoch(m, data, torch.optim.AdamW(m.parameters(), lr=1e-3), log_interval=1))
