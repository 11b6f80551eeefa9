# source: Lightning-AI/pytorch-lightning https://github.com/Lightning-AI/pytorch-lightning/pull/21079 — AsyncCheckpointIO.save_checkpoint handed the live checkpoint dict (tensors that alias the model parameters) to a background thread, so optimizer steps taken before the thread serialized it produced mixed-step checkpoints; the fix snapshots every tensor on the caller thread with apply_to_collection(..., torch.Tensor, lambda t: t.detach().clone()).
import io
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn


def apply_to_collection(data, dtype, function):
    if isinstance(data, dtype):
        return function(data)
    if isinstance(data, dict):
        return {k: apply_to_collection(v, dtype, function) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(apply_to_collection(v, dtype, function) for v in data)
    return data


class TorchCheckpointIO:
    def __init__(self, gate=None):
        self.files = {}
        self.gate = gate

    def save_checkpoint(self, checkpoint, path, storage_options=None):
        if self.gate is not None:
            self.gate.wait()  # slow filesystem
        buf = io.BytesIO()
        torch.save(checkpoint, buf)
        self.files[path] = buf.getvalue()


class AsyncCheckpointIO:
    def __init__(self, checkpoint_io=None):
        self.checkpoint_io = checkpoint_io
        self._executor = ThreadPoolExecutor(max_workers=1)
        self._error = None

    def save_checkpoint(self, *args, **kwargs):
        def _save_checkpoint(*args, **kwargs):
            try:
                self.checkpoint_io.save_checkpoint(*args, **kwargs)
            except BaseException as ex:
                self._error = ex

        self._executor.submit(_save_checkpoint, *args, **kwargs)  # want: A
        if self._error:
            raise self._error

    def teardown(self):
        self._executor.shutdown(wait=True)
        if self._error:
            raise self._error


class AsyncCheckpointIOFixed(AsyncCheckpointIO):
    def save_checkpoint(self, *args, **kwargs):
        def _save_checkpoint(*args, **kwargs):
            try:
                self.checkpoint_io.save_checkpoint(*args, **kwargs)
            except BaseException as ex:
                self._error = ex

        # snapshot the checkpoint payload on the caller thread
        def _clone_tensor(t):
            return t.detach().clone()

        args, kwargs = apply_to_collection((args, kwargs), torch.Tensor, _clone_tensor)
        self._executor.submit(_save_checkpoint, *args, **kwargs)
        if self._error:
            raise self._error


if __name__ == "__main__":
    for cls in (AsyncCheckpointIO, AsyncCheckpointIOFixed):
        torch.manual_seed(0)
        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        gate = threading.Event()
        ckpt_io = cls(TorchCheckpointIO(gate))
        step_weight = model.weight.detach().clone()
        ckpt_io.save_checkpoint({"state_dict": model.state_dict(), "global_step": 10}, "step10.ckpt")
        model(torch.randn(2, 4)).sum().backward()  # training keeps going
        opt.step()
        gate.set()
        ckpt_io.teardown()
        saved = torch.load(io.BytesIO(ckpt_io.checkpoint_io.files["step10.ckpt"]))
        ok = torch.equal(saved["state_dict"]["weight"], step_weight)
        print(f"{cls.__name__}: checkpoint holds step-10 weights={ok}")
