# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/53419 — data_small = data[:30000, :] of a (1e6, 300) int64 tensor, saved with torch.save, took 2.4 GB instead of 72 MB because the whole storage is serialized; workaround (serialization notes): clone before saving
import torch
from torch.utils.data import TensorDataset


def make_debug_split(features_path: str, out_path: str, n: int = 30000) -> None:
    blob = torch.load(features_path)
    features, labels = blob["features"], blob["labels"]
    small = TensorDataset(features[:n], labels[:n])
    torch.save(small, out_path)  # want: A


def make_debug_split_cloned(features_path: str, out_path: str, n: int = 30000) -> None:
    blob = torch.load(features_path)
    features, labels = blob["features"], blob["labels"]
    torch.save(TensorDataset(features[:n].clone(), labels[:n].clone()), out_path)


def make_train_val(features_path: str, out_path: str, val_fraction: float = 0.1) -> None:
    features = torch.load(features_path)["features"]
    cut = int(features.shape[0] * (1 - val_fraction))
    torch.save({"train": features[:cut], "val": features[cut:]}, out_path)


def describe(features_path: str) -> dict:
    features = torch.load(features_path)["features"]
    head = features[:5]
    return {"rows": features.shape[0], "head_mean": head.float().mean().item()}


if __name__ == "__main__":
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "all.pt")
        torch.save({"features": torch.ones(20000, 30, dtype=torch.int64), "labels": torch.zeros(20000, dtype=torch.int64)}, src)
        a, b, c = (os.path.join(tmp, name) for name in ("a.pt", "b.pt", "c.pt"))
        make_debug_split(src, a, n=300)
        make_debug_split_cloned(src, b, n=300)
        make_train_val(src, c)
        assert os.path.getsize(a) > 20 * os.path.getsize(b)  # whole storage serialized
        assert os.path.getsize(c) < 1.1 * 20000 * 30 * 8  # both halves share one storage: nothing extra
        assert describe(src)["rows"] == 20000
    print("ok")
