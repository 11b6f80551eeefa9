# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/182105 — the reporter's RAM "was blowing up when moving tensor views between ray processes": pickling or copy.deepcopy() of a small view copies the entire underlying storage; the workaround is to .clone() the view first (the follow-up PR only adds a warning). Reconstructed as a weight-sync helper that snapshots each worker's shard of a flat parameter vector with copy.deepcopy into a cache keyed by id(worker).
import copy

import torch


class InferenceWorker:
    def __init__(self, rank):
        self.rank = rank
        self.weights = None

    def receive(self, shard):
        self.weights = shard


class ShardedWeightSync:
    def __init__(self):
        # last pushed shard per worker, kept so a failed step can be rolled back
        self._snapshots = {}

    def push(self, workers, flat_weights):
        shards = flat_weights.chunk(len(workers))
        for worker, shard in zip(workers, shards):
            self._snapshots[id(worker)] = copy.deepcopy(shard)  # want: A
            worker.receive(self._snapshots[id(worker)])

    def rollback(self, workers):
        for worker in workers:
            worker.receive(self._snapshots[id(worker)])

    def snapshot_bytes(self):
        return sum(t.untyped_storage().nbytes() for t in self._snapshots.values())


class ShardedWeightSyncFixed(ShardedWeightSync):
    def push(self, workers, flat_weights):
        shards = flat_weights.chunk(len(workers))
        for worker, shard in zip(workers, shards):
            self._snapshots[id(worker)] = shard.detach().clone()
            worker.receive(self._snapshots[id(worker)])


def train_and_sync(sync, workers, steps, numel):
    flat = torch.zeros(numel)
    for step in range(steps):
        flat = flat + 0.01 * torch.randn(numel)  # stand-in for an optimizer step
        sync.push(workers, flat)
    return sync


if __name__ == "__main__":
    workers = [InferenceWorker(r) for r in range(16)]
    numel = 1 << 18
    torch.manual_seed(0)
    bad = train_and_sync(ShardedWeightSync(), workers, steps=3, numel=numel)
    got_bad = [w.weights for w in workers]
    torch.manual_seed(0)
    good = train_and_sync(ShardedWeightSyncFixed(), workers, steps=3, numel=numel)
    got_good = [w.weights for w in workers]
    print(f"flat {numel * 4} B  snapshots: buggy {bad.snapshot_bytes()} B  fixed {good.snapshot_bytes()} B")
    assert all(torch.equal(a, b) for a, b in zip(got_bad, got_good))
    assert bad.snapshot_bytes() == 16 * good.snapshot_bytes()
