# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/71262 — `torch.save(mytensor[0], "tmp.pt")` on a (40, 32, 256, 256) tensor saved (and on load re-allocated) the storage of all 40 samples; the fix in the thread is `mytensor[0].clone()`. Reconstructed as a segmentation head that keeps the first sample of every batch on `self` for a visualisation callback which torch.save()s it each epoch.
import io

import torch
import torch.nn as nn


class SegHead(nn.Module):
    def __init__(self, cin=16, n_classes=32):
        super().__init__()
        self.conv = nn.Conv2d(cin, n_classes, 1)
        self.vis_sample = None

    def forward(self, feats):
        logits = self.conv(feats)
        # keep one prediction around for the epoch-end visualisation
        self.vis_sample = logits[0].detach()  # want: A
        return logits


class SegHeadFixed(SegHead):
    def forward(self, feats):
        logits = self.conv(feats)
        self.vis_sample = logits[0].detach().clone()
        return logits


class VisCallback:
    def __init__(self):
        self.files = []

    def on_epoch_end(self, model):
        f = io.BytesIO()
        torch.save(model.head.vis_sample, f)  # maybe: A (sink; the fix clones where the attribute is set)
        self.files.append(f)


class Net(nn.Module):
    def __init__(self, head):
        super().__init__()
        self.backbone = nn.Conv2d(3, 16, 3, padding=1)
        self.head = head

    def forward(self, x):
        return self.head(self.backbone(x))


def train_epoch(model, batches, opt, cb):
    for x, y in batches:
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    cb.on_epoch_end(model)


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.randn(40, 3, 32, 32), torch.randint(0, 32, (40, 32, 32))) for _ in range(2)]
    results = {}
    for name, head_cls in [("buggy", SegHead), ("fixed", SegHeadFixed)]:
        torch.manual_seed(1)
        model = Net(head_cls())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        cb = VisCallback()
        train_epoch(model, batches, opt, cb)
        results[name] = (model.head.vis_sample, cb.files[-1].tell())
    (v_bad, s_bad), (v_good, s_good) = results["buggy"], results["fixed"]
    print(f"sample payload {v_good.numel() * 4} B  kept storage: buggy {v_bad.untyped_storage().nbytes()} B  fixed {v_good.untyped_storage().nbytes()} B")
    print(f"saved file: buggy {s_bad} B  fixed {s_good} B")
    assert torch.allclose(v_bad, v_good)
    assert v_bad.untyped_storage().nbytes() == 40 * v_good.untyped_storage().nbytes()
    assert s_bad > 20 * s_good
