# source: sgl-project/SpecForge https://github.com/sgl-project/SpecForge/pull/222 — `_compute_metric_acc`, called for every TTT step inside OnlineEagle3Model.forward, returned `(...).sum().item() / (loss_mask.sum().item() + 1e-6)`, i.e. two device->host syncs (and a torch.compile graph break) per step of every training forward; the fix returns a device tensor `(...).sum() / loss_mask.sum().clamp_min(1e-6)` and the training script converts the stacked accuracies once per step for logging.
import torch
import torch.nn as nn
import torch.nn.functional as F


def _compute_metric_acc(logits, target_p, position_mask, loss_mask):
    return (
        (logits.argmax(-1) == target_p.argmax(-1)) * position_mask.squeeze(-1)
    ).sum().item() / (loss_mask.sum().item() + 1e-6)  # want: D


def _compute_metric_acc_fixed(logits, target_p, position_mask, loss_mask):
    return (
        (logits.argmax(-1) == target_p.argmax(-1)) * position_mask.squeeze(-1)
    ).sum() / loss_mask.sum().clamp_min(1e-6)


class OnlineEagle3Model(nn.Module):
    def __init__(self, hidden=16, vocab=32, length=3, metric_fn=_compute_metric_acc):
        super().__init__()
        self.length = length
        self.embed = nn.Embedding(vocab, hidden)
        self.backbone = nn.Linear(2 * hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab)
        self.metric_fn = metric_fn

    def forward(self, input_ids, hidden_states, target_p_padded, position_mask, loss_mask):
        seq_length = input_ids.shape[1]
        plosses, acces = [], []
        for idx in range(self.length):
            target_p = target_p_padded[:, idx : idx + seq_length, :]
            inputs_embeds = self.embed(input_ids).to(hidden_states.dtype)
            hidden_states = self.backbone(torch.cat([inputs_embeds, hidden_states], dim=-1))
            logits = self.lm_head(hidden_states)
            with torch.no_grad():
                acces.append(self.metric_fn(logits=logits, target_p=target_p,
                                            position_mask=position_mask, loss_mask=loss_mask))
            loss = -(target_p * F.log_softmax(logits, -1) * position_mask).sum(-1).mean()
            plosses.append(loss)
            if idx != self.length - 1:
                input_ids = F.pad(input_ids[:, 1:], (0, 1))
                position_mask = F.pad(position_mask[:, 1:], (0, 0, 0, 1))
                loss_mask = F.pad(loss_mask[:, 1:], (0, 0, 0, 1))
        return plosses, [], acces


def train_step(eagle3_model, data, log_dict, fixed=False):
    plosses, _, acces = eagle3_model(**data)
    if fixed:
        acces = torch.stack(acces).cpu().tolist()  # maybe: D (the fix keeps one batched read-back per step for logging)
    ploss_weight = [0.8**i for i in range(len(plosses))]
    ploss = sum([ploss_weight[i] * plosses[i] for i in range(len(plosses))])
    ploss.backward()
    for i in range(len(acces)):
        log_dict[f"train/acc_{i}"] += acces[i]
    return log_dict


if __name__ == "__main__":
    torch.manual_seed(0)
    B, S, H, V, T = 2, 6, 16, 32, 3
    data = dict(
        input_ids=torch.randint(0, V, (B, S)),
        hidden_states=torch.randn(B, S, H),
        target_p_padded=F.pad(torch.softmax(torch.randn(B, S, V), -1), (0, 0, 0, T), value=1 / V),
        position_mask=torch.ones(B, S, 1),
        loss_mask=torch.ones(B, S, 1),
    )
    buggy = OnlineEagle3Model(H, V, T)
    fixed = OnlineEagle3Model(H, V, T, metric_fn=_compute_metric_acc_fixed)
    fixed.load_state_dict(buggy.state_dict())
    a = train_step(buggy, dict(data), {f"train/acc_{i}": 0.0 for i in range(T)})
    b = train_step(fixed, dict(data), {f"train/acc_{i}": 0.0 for i in range(T)}, fixed=True)
    assert all(abs(a[k] - b[k]) < 1e-5 for k in a)
    print("same accuracies:", a)
