# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/21926 — a prediction dumper indexed each element of a (40, 100, 256, 256) model output and torch.save()d it to its own file "so that they can be read individually from disk", but each file carried the whole batch storage (saving one element cost as much as the full batch); the resolution is to save an owning copy (.clone()) of each element. Reconstructed with a generator that yields the per-sample pieces.
import os
import tempfile

import torch
import torch.nn as nn


class VolumePredictor(nn.Module):
    def __init__(self, cin=3, cout=20):
        super().__init__()
        self.head = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x):
        return self.head(x).sigmoid()


def iter_samples(outputs, names):
    for name, sample in zip(names, outputs):
        yield name, sample  # want: A


def iter_samples_fixed(outputs, names):
    for name, sample in zip(names, outputs):
        yield name, sample.clone()


def dump_predictions(model, loader, out_dir, split=iter_samples):
    model.eval()
    written = []
    with torch.no_grad():
        for images, names in loader:
            out = model(images)
            for name, sample in split(out, names):
                path = os.path.join(out_dir, f"{name}.pt")
                torch.save(sample, path)  # maybe: A (the sink; in this code base the fix lives in the generator)
                written.append(path)
    return written


def dump_predictions_fixed(model, loader, out_dir):
    return dump_predictions(model, loader, out_dir, split=iter_samples_fixed)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = VolumePredictor()
    loader = [(torch.randn(16, 3, 64, 64), [f"vol{b}_{i}" for i in range(16)]) for b in range(2)]
    with tempfile.TemporaryDirectory() as d_bad, tempfile.TemporaryDirectory() as d_good:
        bad = dump_predictions(model, loader, d_bad)
        good = dump_predictions_fixed(model, loader, d_good)
        size_bad = sum(os.path.getsize(p) for p in bad)
        size_good = sum(os.path.getsize(p) for p in good)
        one = 20 * 64 * 64 * 4
        print(f"{len(bad)} files, one sample {one} B  buggy total {size_bad} B  fixed total {size_good} B")
        assert torch.equal(torch.load(bad[3]), torch.load(good[3]))
        assert size_bad > 10 * size_good
