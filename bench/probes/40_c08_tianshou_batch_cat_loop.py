# source: thu-ml/tianshou https://github.com/thu-ml/tianshou/pull/128 — `Batch.cat(batches)` built the result by calling `batch.cat_(batch_)` once per input, and `cat_` grew every key with `self.__dict__[k] = torch.cat([self.__dict__[k], v])` (np.concatenate for arrays), re-copying everything accumulated so far for each new batch ("Batch.cat implements a one-by-one for-loop, which is very inefficient"). The "Improve Batch" PR makes cat_ take the whole list, gathers each shared key's values across all batches and concatenates them once.
from copy import deepcopy
from typing import List, Union

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode


class Batch:
    def __init__(self, batch_dict=None, **kwargs):
        for k, v in {**(batch_dict or {}), **kwargs}.items():
            self.__dict__[k] = Batch(v) if isinstance(v, dict) else v

    def items(self):
        return self.__dict__.items()

    def keys(self):
        return self.__dict__.keys()

    def __getitem__(self, k):
        return self.__dict__[k]

    def cat_(self, batch: 'Batch') -> None:
        """Concatenate a :class:`~tianshou.data.Batch` object into current
        batch.
        """
        assert isinstance(batch, Batch), \
            'Only Batch is allowed to be concatenated in-place!'
        for k, v in batch.items():
            if v is None:
                continue
            if not hasattr(self, k) or self.__dict__[k] is None:
                self.__dict__[k] = deepcopy(v)
            elif isinstance(v, np.ndarray) and v.ndim > 0:
                self.__dict__[k] = np.concatenate([self.__dict__[k], v])  # maybe: C (same growth for numpy fields)
            elif isinstance(v, torch.Tensor):
                self.__dict__[k] = torch.cat([self.__dict__[k], v])  # want: C
            elif isinstance(v, Batch):
                self.__dict__[k].cat_(v)
            else:
                s = 'No support for method "cat" with type '\
                    f'{type(v)} in class Batch.'
                raise TypeError(s)

    @staticmethod
    def cat(batches: List[Union[dict, 'Batch']]) -> 'Batch':
        """Concatenate a list of :class:`~tianshou.data.Batch` object into a single
        new batch.
        """
        batch = Batch()
        for batch_ in batches:
            if isinstance(batch_, dict):
                batch_ = Batch(batch_)
            batch.cat_(batch_)
        return batch


class BatchFixed(Batch):
    def cat_(self, batches: Union['Batch', List[Union[dict, 'Batch']]]) -> None:
        """Concatenate a list of (or one) :class:`~tianshou.data.Batch` objects
        into current batch.
        """
        if isinstance(batches, Batch):
            batches = [batches]
        if len(batches) == 0:
            return
        batches = [x if isinstance(x, Batch) else BatchFixed(x) for x in batches]
        if len(self.__dict__) > 0:
            batches = [self] + list(batches)
        keys_map = list(map(lambda e: set(e.keys()), batches))
        keys_shared = set.intersection(*keys_map)
        values_shared = [
            [e[k] for e in batches] for k in keys_shared]
        for k, v in zip(keys_shared, values_shared):
            if all(isinstance(e, (dict, Batch)) for e in v):
                self.__dict__[k] = BatchFixed.cat(v)
            elif all(isinstance(e, torch.Tensor) for e in v):
                self.__dict__[k] = torch.cat(v)
            else:
                self.__dict__[k] = np.concatenate(v)

    @staticmethod
    def cat(batches: List[Union[dict, 'Batch']]) -> 'Batch':
        batch = BatchFixed()
        batch.cat_(batches)
        return batch


class _CatBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.copied = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.cat.default:
            self.copied += out.numel()
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    steps = [{"obs": torch.randn(4, 3), "info": {"rew": torch.randn(4)}} for _ in range(16)]
    with _CatBytes() as mode_b:
        out_b = Batch.cat(steps)
    with _CatBytes() as mode_f:
        out_f = BatchFixed.cat(steps)
    assert torch.equal(out_b.obs, out_f.obs) and torch.equal(out_b.info.rew, out_f.info.rew)
    total = out_f.obs.numel() + out_f.info.rew.numel()
    # buggy: every step re-copies the accumulated prefix (quadratic); fixed: each element copied once
    assert mode_f.copied == total
    assert mode_b.copied > 7 * total
    print("ok")
