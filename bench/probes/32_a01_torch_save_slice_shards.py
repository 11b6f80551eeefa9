# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/104523 — torch.save(x[:5], ...) of a 5-row slice of a (10000, 3) tensor wrote a file as large as saving the whole tensor (118K both) because the slice is a view and torch.save serializes its entire storage; the fix (issue closed as expected behaviour) is to .clone() the slice before saving.
import os
import tempfile

import torch


def save_head(x, path, n=5):
    # save the first n elements to a file
    torch.save(x[:n], path)  # want: A


def iter_shards(x, shard_rows):
    """Yield (index, rows) pieces of a large tensor, one per shard file."""
    for i, start in enumerate(range(0, x.shape[0], shard_rows)):
        yield i, x[start:start + shard_rows]  # want: A


def save_shards(x, out_dir, shard_rows):
    paths = []
    for i, shard in iter_shards(x, shard_rows):
        path = os.path.join(out_dir, "x_shard_{}.pt".format(i))
        torch.save(shard, path)
        paths.append(path)
    return paths


# ---------------------------------------------------------------- fixed version
def save_head_fixed(x, path, n=5):
    torch.save(x[:n].clone(), path)


def iter_shards_fixed(x, shard_rows):
    for i, start in enumerate(range(0, x.shape[0], shard_rows)):
        yield i, x[start:start + shard_rows].clone()


def save_shards_fixed(x, out_dir, shard_rows):
    paths = []
    for i, shard in iter_shards_fixed(x, shard_rows):
        path = os.path.join(out_dir, "x_shard_fixed_{}.pt".format(i))
        torch.save(shard, path)
        paths.append(path)
    return paths


if __name__ == "__main__":
    x = torch.randn(10000, 3)  # a random tensor of size (10000, 3)
    with tempfile.TemporaryDirectory() as d:
        full = os.path.join(d, "x.pt")
        torch.save(x, full)
        head = os.path.join(d, "x_first_5.pt")
        head_fixed = os.path.join(d, "x_first_5_fixed.pt")
        save_head(x, head)
        save_head_fixed(x, head_fixed)
        s_full, s_head, s_fixed = (os.path.getsize(p) for p in (full, head, head_fixed))
        print("full:", s_full, "slice:", s_head, "clone:", s_fixed)
        assert s_head > 0.9 * s_full and s_fixed < s_full / 20

        shards = save_shards(x, d, shard_rows=2500)
        shards_fixed = save_shards_fixed(x, d, shard_rows=2500)
        tot = sum(os.path.getsize(p) for p in shards)
        tot_fixed = sum(os.path.getsize(p) for p in shards_fixed)
        print("4 shards (views):", tot, " 4 shards (clones):", tot_fixed)
        assert tot > 3 * tot_fixed
        for a, b in zip(shards, shards_fixed):
            assert torch.equal(torch.load(a), torch.load(b))
