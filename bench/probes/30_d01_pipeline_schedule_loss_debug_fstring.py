# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/126829 — PipelineScheduleSingle._maybe_compute_loss called logger.debug(f"... Loss of microbatch {mb_index}: {loss}") for every microbatch; the f-string formats the (CUDA) loss tensor eagerly, forcing a device-to-host copy and stream sync even when DEBUG is off. The fix ("[pipelining] Do not print loss") dropped the loss from the debug log.
import logging
from typing import List, Optional

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class PipelineStage:
    def __init__(self, submodule, stage_index, num_stages, device):
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.device = device
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.fwd_cache = {}

    def forward_one_chunk(self, fwd_chunk_id, *args):
        output = self.submod(*args)
        self.fwd_cache[fwd_chunk_id] = output
        return output

    def backward_one_chunk(self, bwd_chunk_id, loss=None):
        output = self.fwd_cache.pop(bwd_chunk_id)
        if loss is not None:
            loss.backward()
        return output


class PipelineScheduleSingle:
    def __init__(self, stage, n_microbatches, loss_fn=None):
        self._stage = stage
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self._has_backward = self._loss_fn is not None
        # Holds the losses for each microbatch.
        self._internal_losses: List[torch.Tensor] = []
        logger.info(f"Using {self.__class__.__name__}")

    def _compute_loss(self, output, target):
        return self._loss_fn(output, target)  # type: ignore[misc]

    def _maybe_compute_loss(self, stage, output, target_mbs, mb_index):
        if stage.is_last and self._has_backward:
            loss = self._compute_loss(output, target_mbs[mb_index])  # type: ignore[index]
            self._internal_losses.append(loss)
            logger.debug(f"[{stage.stage_index}] Loss of microbatch {mb_index}: {loss}")  # want: D

    def _maybe_get_loss(self, stage, mb_index):
        valid_index = 0 <= mb_index < len(self._internal_losses)
        if stage.is_last and self._has_backward and valid_index:
            return self._internal_losses[mb_index]
        return None

    def _update_losses(self, stages, losses):
        if not isinstance(stages, list):
            stages = [stages]
        contains_last_stage = any(stage.is_last for stage in stages)
        if contains_last_stage and losses is not None:
            losses.extend(self._internal_losses)
        self._internal_losses.clear()

    def step(self, *args, target=None, losses: Optional[List] = None):
        args_split = torch.tensor_split(args[0], self._n_microbatches)
        targets_split = list(torch.tensor_split(target, self._n_microbatches)) if target is not None else None
        self._step_microbatches([(a,) for a in args_split], targets_split, losses)


class ScheduleGPipe(PipelineScheduleSingle):
    def _step_microbatches(self, arg_mbs, target_mbs=None, losses=None):
        for i in range(self._n_microbatches):
            output = self._stage.forward_one_chunk(i, *arg_mbs[i])
            logger.debug(f"[{self._stage.stage_index}] Forwarded microbatch {i}")
            self._maybe_compute_loss(self._stage, output, target_mbs, i)
        for i in range(self._n_microbatches):
            loss = self._maybe_get_loss(self._stage, i)
            self._stage.backward_one_chunk(i, loss=loss)
            logger.debug(f"[{self._stage.stage_index}] Backwarded microbatch {i}")
        self._update_losses(self._stage, losses)


class ScheduleGPipeFixed(ScheduleGPipe):
    def _maybe_compute_loss(self, stage, output, target_mbs, mb_index):
        if stage.is_last and self._has_backward:
            loss = self._compute_loss(output, target_mbs[mb_index])  # type: ignore[index]
            self._internal_losses.append(loss)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    results = {}
    for cls in (ScheduleGPipe, ScheduleGPipeFixed):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        stage = PipelineStage(model, stage_index=0, num_stages=1, device=torch.device("cpu"))
        schedule = cls(stage, n_microbatches=4, loss_fn=nn.functional.cross_entropy)
        x = torch.randn(32, 16)
        y = torch.randint(0, 4, (32,))
        losses = []
        schedule.step(x, target=y, losses=losses)
        results[cls.__name__] = torch.stack([l.detach() for l in losses])
        print(cls.__name__, "microbatch losses:", results[cls.__name__].shape)
    # DEBUG is off, yet the buggy f-string still formatted every loss tensor.
    assert torch.allclose(results["ScheduleGPipe"], results["ScheduleGPipeFixed"])
