# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/33101 — the reporter was "saving intermediate activation of a neural network per image" with `torch.save(big_tensor[0], ...)`-style row views of the batch output; each per-image .pth contained the whole batch's activation storage (8 MB vs 80 KB, and the file size changed with the batch size). The maintainers' answer (expected behaviour, see serialization notes) is to `.clone()` the per-image slice before saving.
import os
import tempfile

import torch
import torch.nn as nn


class ActivationDumper:
    """Forward hook that writes one activation file per image of the batch."""

    def __init__(self, out_dir, clone=False):
        self.out_dir, self.clone, self.names = out_dir, clone, []

    def set_batch(self, names):
        self.names = names

    def __call__(self, module, inputs, output):
        for i, name in enumerate(self.names):
            path = os.path.join(self.out_dir, f"{name}.pth")
            if self.clone:
                torch.save(output[i].clone(), path)
            else:
                torch.save(output[i], path)  # want: A


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        f = self.features(x)
        return self.head(f.mean(dim=(2, 3)))


def extract(out_dir, clone, batch_size=16):
    torch.manual_seed(0)
    model = Backbone().eval()
    dumper = ActivationDumper(out_dir, clone=clone)
    handle = model.features.register_forward_hook(dumper)
    with torch.no_grad():
        for b in range(2):
            dumper.set_batch([f"img_{b}_{i}" for i in range(batch_size)])
            model(torch.randn(batch_size, 3, 24, 24))
    handle.remove()
    return {f: os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir)}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        buggy, fixed = extract(d1, clone=False), extract(d2, clone=True)
        a = torch.load(os.path.join(d1, "img_1_3.pth"))
        b = torch.load(os.path.join(d2, "img_1_3.pth"))
        assert torch.equal(a, b)
        print("per-image file bytes buggy:", buggy["img_1_3.pth"], "fixed:", fixed["img_1_3.pth"])
        assert buggy["img_1_3.pth"] > 10 * fixed["img_1_3.pth"]
