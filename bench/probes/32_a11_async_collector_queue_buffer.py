# source: pytorch/rl https://github.com/pytorch/rl/pull/215 — the async multi-worker collector handed the caller the worker's shared output tensordict, which the worker reuses and overwrites in place for its next rollout, so batches the caller had kept changed under it (all kept batches end up equal); the bug fix clones the collected tensordict early, before yielding it.
import queue
import threading

import torch


class _Pipe(queue.Queue):
    def send(self, msg):
        self.put(msg)

    def recv(self):
        return self.get()


def rollout_worker(idx, pipe, queue_out, frames_per_batch, n_batches):
    """Stands in for _main_async_collector: one persistent (shared-memory) output
    buffer per worker, updated in place for every new batch."""
    torch.manual_seed(idx)
    tensordict = None
    for j in range(n_batches):
        msg = pipe.recv()
        if msg != "continue":
            break
        batch = {"obs": torch.randn(frames_per_batch, 4), "step": torch.full((frames_per_batch,), float(j))}
        if j == 0:
            tensordict = {k: v.share_memory_() for k, v in batch.items()}
            queue_out.put(((tensordict, idx), j))
        else:
            for k, v in batch.items():
                tensordict[k].copy_(v)  # update_ in place
            queue_out.put((idx, j))


class MultiaSyncDataCollector:
    def __init__(self, num_workers=2, frames_per_batch=8, batches_per_worker=3):
        self.num_workers, self.batches_per_worker = num_workers, batches_per_worker
        self.queue_out = queue.Queue()
        self.pipes = [_Pipe() for _ in range(num_workers)]
        self.out_tensordicts = {}
        self.procs = [threading.Thread(target=rollout_worker, args=(i, self.pipes[i], self.queue_out, frames_per_batch, batches_per_worker)) for i in range(num_workers)]
        for p in self.procs:
            p.start()

    def _get_from_queue(self, timeout=10.0):
        new_data, j = self.queue_out.get(timeout=timeout)
        if j == 0:
            data, idx = new_data
            self.out_tensordicts[idx] = data
        else:
            idx = new_data
        out = self.out_tensordicts[idx]  # want: A
        return idx, j, out

    def iterator(self):
        for i in range(self.num_workers):
            self.pipes[i].send("continue")
        for _ in range(self.num_workers * self.batches_per_worker):
            idx, j, out = self._get_from_queue()
            # send before yield so the worker keeps collecting while the batch is consumed
            if j + 1 < self.batches_per_worker:
                self.pipes[idx].send("continue")
            yield out
        for p in self.procs:
            p.join()


# ---------------------------------------------------------------- fixed version
class MultiaSyncDataCollectorFixed(MultiaSyncDataCollector):
    def _get_from_queue(self, timeout=10.0):
        new_data, j = self.queue_out.get(timeout=timeout)
        if j == 0:
            data, idx = new_data
            self.out_tensordicts[idx] = data
        else:
            idx = new_data
        out = {k: v.clone() for k, v in self.out_tensordicts[idx].items()}
        return idx, j, out


if __name__ == "__main__":
    for cls in (MultiaSyncDataCollector, MultiaSyncDataCollectorFixed):
        batches = list(cls().iterator())
        steps = sorted(b["step"][0].item() for b in batches)
        print(cls.__name__, "step ids of the 6 kept batches:", steps)
        if cls is MultiaSyncDataCollector:
            assert steps == [2.0] * 6
        else:
            assert steps == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]
