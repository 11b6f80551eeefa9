# source: meta-pytorch/torchrec PR #2814 ("Address 10% performance issue (~16 ms per call) when using batch_size_stages in TorchRec Metrics with GPU") — ThroughputMetric kept num_batch as a registered buffer, so after module.to(cuda) every update() compared it with a stage's python max_iters (aten::is_nonzero -> cudaStreamSynchronize); the fix keeps a python int
import copy
import math
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Deque, Dict, List, Optional

import torch
from torch import nn


@dataclass
class BatchSizeStage:
    batch_size: int
    max_iters: Optional[int] = None


class ThroughputMetric(nn.Module):
    def __init__(self, *, batch_size: int, world_size: int, window_seconds: int, warmup_steps: int = 100,
                 batch_size_stages: Optional[List[BatchSizeStage]] = None):
        super().__init__()
        self._batch_size = batch_size
        self._world_size = world_size
        self._window_seconds = window_seconds
        self._warmup_steps = warmup_steps
        self._batch_size_stages = copy.deepcopy(batch_size_stages)
        if self._batch_size_stages is not None:
            # Keep track of the number of batches if using batch_size_stages
            self.register_buffer("num_batch", torch.tensor(0, dtype=torch.long))
        self.register_buffer("total_examples", torch.tensor(0, dtype=torch.long))
        self.register_buffer("warmup_examples", torch.tensor(0, dtype=torch.long))
        self.register_buffer("time_lapse_after_warmup", torch.tensor(0, dtype=torch.double))
        self._window_time_lapse_buffer: Deque[float] = deque(maxlen=10_000)
        self._window_time_lapse = 0.0
        self._previous_ts = 0.0
        self._steps = 0

    def _get_batch_size(self) -> int:
        if not self._batch_size_stages:
            return self._batch_size
        while self._batch_size_stages:
            stage = self._batch_size_stages[0]
            if stage.max_iters is None:
                assert len(self._batch_size_stages) == 1
                return stage.batch_size
            if stage.max_iters < self.num_batch:  # want: D
                self._batch_size_stages.pop(0)
                continue
            return stage.batch_size
        raise AssertionError("Unreachable, batch_size_stages should always has 1 item")

    def _batch_examples(self) -> int:
        return self._get_batch_size() * self._world_size

    def _check_window(self) -> None:
        while self._window_time_lapse > self._window_seconds:
            self._window_time_lapse -= self._window_time_lapse_buffer.popleft()

    def update(self) -> None:
        ts = time.monotonic()
        self._steps += 1
        if self._batch_size_stages is not None:
            self.num_batch += 1  # stays on device
        batch_examples = self._batch_examples()
        self.total_examples += batch_examples
        if self._steps <= self._warmup_steps:  # python ints
            self.warmup_examples += batch_examples
            if self._steps == self._warmup_steps:
                self._previous_ts = ts
        else:
            time_lapse = ts - self._previous_ts
            self.time_lapse_after_warmup += time_lapse
            self._window_time_lapse += time_lapse
            self._window_time_lapse_buffer.append(time_lapse)
            self._check_window()
            self._previous_ts = ts

    def compute(self) -> Dict[str, torch.Tensor]:
        ret = {"throughput-total_examples": self.total_examples}
        # called when the trainer logs, not per batch
        if self._steps > self._warmup_steps and not math.isclose(self.time_lapse_after_warmup.item(), 0):
            ret["throughput-lifetime_qps"] = (self.total_examples - self.warmup_examples) / self.time_lapse_after_warmup
        return ret


class ThroughputMetricFixed(ThroughputMetric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if self._batch_size_stages is not None:
            del self.num_batch
            self._num_batch: int = 0
        self._register_load_state_dict_pre_hook(self.load_state_dict_hook)

    def _get_batch_size(self) -> int:
        if not self._batch_size_stages:
            return self._batch_size
        while self._batch_size_stages:
            stage = self._batch_size_stages[0]
            if stage.max_iters is None:
                return stage.batch_size
            if stage.max_iters < self._num_batch:  # python int
                self._batch_size_stages.pop(0)
                continue
            return stage.batch_size
        raise AssertionError("unreachable")

    def update(self) -> None:
        if self._batch_size_stages is not None:
            self._num_batch += 1
        self._steps += 1
        self.total_examples += self._batch_examples()

    def load_state_dict_hook(self, state_dict: "OrderedDict[str, torch.Tensor]", prefix: str, local_metadata: Dict[str, Any],
                             strict: bool, missing_keys: List[str], unexpected_keys: List[str], error_msgs: List[str]) -> None:
        key = f"{prefix}num_batch"
        if key in state_dict:
            num_batch_tensor = state_dict.pop(key)
            if self._batch_size_stages is not None:
                self._num_batch = int(num_batch_tensor.item())  # checkpoint load, once


def train(model, metric, batches, opt):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        metric.update()


if __name__ == "__main__":
    torch.manual_seed(0)
    stages = [BatchSizeStage(8, max_iters=2), BatchSizeStage(16, max_iters=4), BatchSizeStage(32)]
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(6)]
    slow = ThroughputMetric(batch_size=8, world_size=2, window_seconds=10, warmup_steps=2, batch_size_stages=stages)
    fast = ThroughputMetricFixed(batch_size=8, world_size=2, window_seconds=10, warmup_steps=2, batch_size_stages=stages)
    train(model, slow, data, opt)
    train(model, fast, data, opt)
    assert int(slow.total_examples) == int(fast.total_examples) == 2 * (8 * 2 + 16 * 2 + 32 * 2)
    fast.load_state_dict({"total_examples": torch.tensor(0), "warmup_examples": torch.tensor(0),
                          "time_lapse_after_warmup": torch.tensor(0.0, dtype=torch.double),
                          "num_batch": torch.tensor(3)}, strict=False)
    assert fast._num_batch == 3
    print("ok:", {k: float(v) for k, v in slow.compute().items()})
