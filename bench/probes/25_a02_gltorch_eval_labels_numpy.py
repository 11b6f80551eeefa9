# source: alibaba/graphlearn-for-pytorch https://github.com/alibaba/graphlearn-for-pytorch/pull/81 — examples/igbh/dist_train_rgnn.py evaluate() appended batch['paper'].y[:batch_size].cpu().numpy() per sampled batch and concatenated after the loop; .cpu() is a no-op on CPU and .numpy() shares memory, so each kept array pinned the whole sampled subgraph's label tensor; fix: .cpu().clone().numpy() ("such that batch sampling results can be garbage-collected")
import gc
import numpy as np
import torch
from torch import nn


class SampledBatch(dict):
    """Stands in for a HeteroData mini-batch: node store 'paper' holds y for every sampled node."""


def make_loader(num_batches, batch_size, num_sampled, num_classes=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(num_batches):
        paper = {
            "x": torch.randn(num_sampled, 16, generator=g),
            "y": torch.randint(0, num_classes, (num_sampled,), generator=g),
            "batch_size": batch_size,
        }
        yield SampledBatch(paper=paper)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 8)

    def forward(self, x):
        return self.lin(x)


def evaluate(model, dataloader):
    predictions = []
    labels = []
    with torch.no_grad():
        for batch in dataloader:
            batch_size = batch["paper"]["batch_size"]
            out = model(batch["paper"]["x"])[:batch_size]
            labels.append(batch["paper"]["y"][:batch_size].cpu().numpy())  # want: A
            predictions.append(out.argmax(1).cpu().numpy())  # argmax allocates: not a view of out
        predictions = np.concatenate(predictions)
        labels = np.concatenate(labels)
    return (predictions == labels).sum() / labels.shape[0]


def evaluate_fixed(model, dataloader):
    predictions = []
    labels = []
    with torch.no_grad():
        for batch in dataloader:
            batch_size = batch["paper"]["batch_size"]
            out = model(batch["paper"]["x"])[:batch_size]
            labels.append(batch["paper"]["y"][:batch_size].cpu().clone().numpy())
            predictions.append(out.argmax(1).cpu().clone().numpy())
        predictions = np.concatenate(predictions)
        labels = np.concatenate(labels)
    return (predictions == labels).sum() / labels.shape[0]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Model().eval()
    acc_bug = evaluate(model, make_loader(4, 32, 4096))
    acc_fix = evaluate_fixed(model, make_loader(4, 32, 4096))
    assert acc_bug == acc_fix

    kept = []
    for batch in make_loader(4, 32, 4096):
        kept.append(batch["paper"]["y"][:32].cpu().numpy())
    kept_fix = []
    for batch in make_loader(4, 32, 4096):
        kept_fix.append(batch["paper"]["y"][:32].cpu().clone().numpy())
    del batch
    gc.collect()
    for a, b in zip(kept, kept_fix):
        assert np.array_equal(a, b)
        # the numpy array's base is the y[:32] view, which owns a reference to all 4096 sampled labels
        assert a.base.untyped_storage().nbytes() == 4096 * 8
        assert b.base.untyped_storage().nbytes() == 32 * 8
    print("ok: numpy views of y[:batch_size] kept every sampled batch's labels alive")
