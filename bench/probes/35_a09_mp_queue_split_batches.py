# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/95606 — a producer split each loaded batch with `torch.split` and put the resulting views on a `torch.multiprocessing.JoinableQueue`; every queued chunk carried (and moved to shared memory) the storage of the whole batch it came from, which kept every batch alive until its last chunk was consumed and caused hangs/failures on 2.0; giving each queued chunk its own storage (`chunk.clone()`) avoids it.
import queue

import torch
from torch.multiprocessing.reductions import reduce_tensor


class LoaderProcess:
    """Producer side of the repro: reads batches and feeds workers through a queue."""

    def __init__(self, q, micro_batch):
        self.queue = q
        self.micro_batch = micro_batch

    def make_batch(self, step):
        return torch.randint(-3, 3, (4096, 64), dtype=torch.int64) + step

    def produce(self, n_steps):
        for step in range(n_steps):
            batch = self.make_batch(step)
            for chunk in torch.split(batch, self.micro_batch):
                self.queue.put(chunk)  # want: A


class LoaderProcessFixed(LoaderProcess):
    def produce(self, n_steps):
        for step in range(n_steps):
            batch = self.make_batch(step)
            for chunk in torch.split(batch, self.micro_batch):
                self.queue.put(chunk.clone())


def shared_bytes(q):
    """What pickling each queued tensor through the multiprocessing reducer would share."""
    storages = {}
    items = []
    while True:
        try:
            t = q.get_nowait()
        except queue.Empty:
            break
        items.append(t)
        rebuild, args = reduce_tensor(t)
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    payload = sum(t.numel() * t.element_size() for t in items)
    return payload, sum(storages.values()), items


if __name__ == "__main__":
    for cls in (LoaderProcess, LoaderProcessFixed):
        q = queue.Queue()
        cls(q, micro_batch=512).produce(n_steps=3)
        # a consumer that has only kept the first chunk of each batch so far
        payload, shared, items = shared_bytes(q)
        kept = items[::8]
        kept_storage = sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in kept}.values())
        kept_payload = sum(t.numel() * t.element_size() for t in kept)
        print(f"{cls.__name__:19s} one chunk per batch kept: payload={kept_payload:8d} B storage alive={kept_storage:8d} B")
