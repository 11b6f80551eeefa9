# source: ml-explore/mlx-lm https://github.com/ml-explore/mlx-lm/pull/1701 — ArraysCache.extract(idx) returned [c[idx:idx + 1] for c in state], views of the batched recurrent state; extracted caches were kept for finished/paused sequences and re-merged later, so each kept the whole batch alive (and through it the previous batch); fix: copy the extracted rows. Note: in PyTorch a row slice of a contiguous batch is already contiguous, so .contiguous() is not a copy
import torch


class BatchedRecurrentCache:
    def __init__(self, states: list):
        self.states = states

    def extract(self, idx: int) -> list:
        return [s[idx:idx + 1] for s in self.states]

    def extract_contiguous(self, idx: int) -> list:
        return [s[idx:idx + 1].contiguous() for s in self.states]

    def extract_owned(self, idx: int) -> list:
        return [s[idx:idx + 1].clone() for s in self.states]

    @classmethod
    def merge(cls, per_sequence: list) -> "BatchedRecurrentCache":
        return cls([torch.cat(parts, dim=0) for parts in zip(*per_sequence)])


class PromptCacheScheduler:
    def __init__(self):
        self.prompt_cache = {}
        self.paused = {}
        self.done_lengths = {}

    def on_finished(self, batch_cache: BatchedRecurrentCache, finished: list, token_lists: list) -> None:
        for i in finished:
            self.prompt_cache[tuple(token_lists[i])] = batch_cache.extract(i)  # want: A

    def on_preempted(self, batch_cache: BatchedRecurrentCache, uids: list, rows: list) -> None:
        for uid, i in zip(uids, rows):
            self.paused[uid] = batch_cache.extract_contiguous(i)  # want: A

    def on_preempted_owned(self, batch_cache: BatchedRecurrentCache, uids: list, rows: list) -> None:
        for uid, i in zip(uids, rows):
            self.paused[uid] = batch_cache.extract_owned(i)

    def on_step(self, batch_cache: BatchedRecurrentCache, uids: list) -> None:
        for i, uid in enumerate(uids):
            conv, ssm = batch_cache.extract(i)
            self.done_lengths[uid] = conv.shape[1] + ssm.shape[1]

    def resume(self, uids: list) -> BatchedRecurrentCache:
        return BatchedRecurrentCache.merge([self.paused.pop(u) for u in uids])


if __name__ == "__main__":
    batch = BatchedRecurrentCache([torch.randn(8, 3, 64), torch.randn(8, 16, 64)])
    sched = PromptCacheScheduler()
    sched.on_finished(batch, [2], [[1, 2, 3]] * 8)
    kept = sched.prompt_cache[(1, 2, 3)][1]
    assert kept.untyped_storage().nbytes() == 8 * 16 * 64 * 4  # the whole batched state
    sched.on_preempted(batch, ["u5"], [5])
    assert sched.paused["u5"][1].untyped_storage().nbytes() == 8 * 16 * 64 * 4  # .contiguous() was a no-op
    sched.on_preempted_owned(batch, ["u6"], [6])
    assert sched.paused["u6"][1].untyped_storage().nbytes() == 16 * 64 * 4
    sched.on_step(batch, ["a", "b"])
    assert sched.resume(["u5", "u6"]).states[0].shape == (2, 3, 64)
    print("ok")
