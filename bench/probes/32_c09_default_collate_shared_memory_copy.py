# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/1323 — In DataLoader worker processes default_collate built each batch with a plain `torch.stack(batch, 0)`, and putting that tensor on the worker's data queue then copied the whole batch again into shared memory; the fix ("Concatenate directly into shared memory when constructing batches") stacks straight into a shared-memory `out=` tensor when running in a worker.
import queue

import torch

_use_shared_memory = False
"""Whether to use shared memory in default_collate"""


def default_collate(batch):
    "Puts each data field into a tensor with outer dimension batch size"
    if torch.is_tensor(batch[0]):
        return torch.stack(batch, 0)  # maybe: C (copy happens when the worker queue moves this batch into shared memory)
    elif isinstance(batch[0], int):
        return torch.LongTensor(batch)
    elif isinstance(batch[0], float):
        return torch.DoubleTensor(batch)
    elif isinstance(batch[0], dict):
        return {key: default_collate([d[key] for d in batch]) for key in batch[0]}
    elif isinstance(batch[0], (list, tuple)):
        transposed = zip(*batch)
        return [default_collate(samples) for samples in transposed]
    raise TypeError("batch must contain tensors, numbers, dicts or lists; found {}".format(type(batch[0])))


def default_collate_fixed(batch):
    "Puts each data field into a tensor with outer dimension batch size"
    if torch.is_tensor(batch[0]):
        out = None
        if _use_shared_memory:
            # If we're in a background process, concatenate directly into a
            # shared memory tensor to avoid an extra copy
            elem = batch[0]
            numel = sum([x.numel() for x in batch])
            storage = elem._typed_storage()._new_shared(numel, device=elem.device)
            out = elem.new(storage).resize_(len(batch), *list(elem.size()))
        return torch.stack(batch, 0, out=out)
    elif isinstance(batch[0], int):
        return torch.LongTensor(batch)
    elif isinstance(batch[0], float):
        return torch.DoubleTensor(batch)
    elif isinstance(batch[0], dict):
        return {key: default_collate_fixed([d[key] for d in batch]) for key in batch[0]}
    elif isinstance(batch[0], (list, tuple)):
        transposed = zip(*batch)
        return [default_collate_fixed(samples) for samples in transposed]
    raise TypeError("batch must contain tensors, numbers, dicts or lists; found {}".format(type(batch[0])))


def _worker_loop(dataset, index_queue, data_queue, collate_fn):
    global _use_shared_memory
    _use_shared_memory = True
    torch.set_num_threads(1)
    while True:
        r = index_queue.get()
        if r is None:
            data_queue.put(None)
            break
        idx, batch_indices = r
        samples = collate_fn([dataset[i] for i in batch_indices])
        data_queue.put((idx, samples))


def _reduce_for_ipc(samples):
    # what ForkingPickler does to a CPU tensor sent through a torch.multiprocessing queue
    for t in samples:
        before = t.data_ptr()
        t.share_memory_()
        yield before != t.data_ptr()


if __name__ == "__main__":
    torch.manual_seed(0)
    dataset = [(torch.randn(3, 32, 32), torch.randn(10)) for _ in range(64)]
    results = {}
    for name, fn in (("buggy", default_collate), ("fixed", default_collate_fixed)):
        index_queue, data_queue = queue.Queue(), queue.Queue()
        for i in range(4):
            index_queue.put((i, list(range(i * 16, (i + 1) * 16))))
        index_queue.put(None)
        _worker_loop(dataset, index_queue, data_queue, fn)
        batches = []
        while (item := data_queue.get()) is not None:
            batches.append(item[1])
        extra_copies = sum(sum(_reduce_for_ipc(b)) for b in batches)
        results[name] = batches
        print(name, "batch tensors copied again into shared memory:", extra_copies)
    for b_bug, b_fix in zip(results["buggy"], results["fixed"]):
        assert all(torch.equal(u, v) for u, v in zip(b_bug, b_fix))
