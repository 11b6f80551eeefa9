# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/4099 — train_step all-reduced the global valid-token count through `dist_utils.dist_sum` -> `_dist_reduce`, which returned `float(funcol.all_reduce(...).item())` (a D2H sync every step before any forward); the fix adds `_dist_reduce_tensor`/`dist_sum_tensor` that keep the reduced count on device.
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed import _functional_collectives as funcol
from torch.distributed.device_mesh import DeviceMesh

IGNORE_INDEX = -100


# ---- torchtitan/distributed/utils.py (before) ----
def _dist_reduce(
    x: torch.Tensor,
    reduceOp: str,
    mesh: DeviceMesh | None,
    extra_pg: dist.ProcessGroup | None,
) -> float:
    """Perform distributed reduction on a tensor."""
    # Plain tensor path.
    if extra_pg is not None:
        x = funcol.all_reduce(x, reduceOp=reduceOp, group=extra_pg)
    if mesh is None:
        return float(x.item())  # maybe: D (same wrapper, real sync, but the mesh=None branch is not taken by this trainer)
    assert x.numel() == 1  # required by `.item()`
    return float(funcol.all_reduce(x, reduceOp=reduceOp, group=mesh).item())  # want: D


def dist_sum(
    x: torch.Tensor,
    mesh: DeviceMesh | None = None,
    extra_pg: dist.ProcessGroup | None = None,
) -> float:
    return _dist_reduce(x, reduceOp="SUM", mesh=mesh, extra_pg=extra_pg)


# ---- after the fix ----
def _dist_reduce_tensor(
    x: torch.Tensor,
    reduceOp: str,
    mesh: DeviceMesh | None,
    extra_pg: dist.ProcessGroup | None,
) -> torch.Tensor:
    """Perform a distributed reduction without moving the result to the CPU."""
    needs_wait = False
    if extra_pg is not None:
        x = funcol.all_reduce(x, reduceOp=reduceOp, group=extra_pg)
        needs_wait = True
    if mesh is not None:
        x = funcol.all_reduce(x, reduceOp=reduceOp, group=mesh)
        needs_wait = True
    return funcol.wait_tensor(x) if needs_wait else x


def dist_sum_tensor(
    x: torch.Tensor,
    mesh: DeviceMesh | None = None,
    extra_pg: dist.ProcessGroup | None = None,
) -> torch.Tensor:
    """Sum a tensor across process groups and keep the result on its device."""
    return _dist_reduce_tensor(x, reduceOp="SUM", mesh=mesh, extra_pg=extra_pg)


def log_trace_scalar(d):
    pass


class ParallelDims:
    def __init__(self, mesh):
        self._mesh = mesh
        self.dp_enabled = True

    def get_mesh(self, name):
        return self._mesh


class Trainer:
    def __init__(self, model, mesh, device="cpu", keep_on_device=False):
        self.model_parts = [model]
        self.device = torch.device(device)
        self.parallel_dims = ParallelDims(mesh)
        self.optimizers = torch.optim.SGD(model.parameters(), lr=1e-2)
        self.gradient_accumulation_steps = 2
        self.keep_on_device = keep_on_device
        self.losses = []

    def loss_fn(self, pred, labels, global_valid_tokens):
        loss_sum = nn.functional.cross_entropy(
            pred.flatten(0, 1).float(), labels.flatten(0, 1), reduction="sum", ignore_index=IGNORE_INDEX
        )
        return loss_sum / global_valid_tokens

    def forward_backward_step(self, *, input_dict, labels, global_valid_tokens):
        pred = self.model_parts[0](input_dict["input"])
        loss = self.loss_fn(pred, labels, global_valid_tokens)
        loss.backward()
        return loss

    def train_step(self, data_iterator):
        self.optimizers.zero_grad()
        parallel_dims = self.parallel_dims

        microbatches = []
        local_valid_tokens = torch.tensor(0, dtype=torch.int64)
        for _ in range(self.gradient_accumulation_steps):
            input_dict, labels = next(data_iterator)
            local_valid_tokens += (labels != IGNORE_INDEX).sum()
            microbatches.append((input_dict, labels))
        log_trace_scalar({"local_valid_tokens": int(local_valid_tokens)})

        # All-reduce to get global token count across DP ranks
        # Move to GPU for distributed communication
        if parallel_dims.dp_enabled:
            batch_mesh = parallel_dims.get_mesh("batch")
            if self.keep_on_device:
                global_valid_tokens = dist_sum_tensor(local_valid_tokens.to(self.device), batch_mesh)
            else:
                global_valid_tokens = dist_sum(
                    local_valid_tokens.to(self.device), batch_mesh
                )
        else:
            global_valid_tokens = float(local_valid_tokens.item())

        accumulated_losses = []
        for input_dict, labels in microbatches:
            input_dict = {k: v.to(self.device) for k, v in input_dict.items()}
            labels = labels.to(self.device)
            loss = self.forward_backward_step(
                input_dict=input_dict, labels=labels, global_valid_tokens=global_valid_tokens
            )
            accumulated_losses.append(loss.detach())
        self.optimizers.step()
        self.losses.append(torch.sum(torch.stack(accumulated_losses)))


def data_iter(vocab=32, seq=8, bs=2):
    while True:
        tokens = torch.randint(0, vocab, (bs, seq + 1))
        labels = tokens[:, 1:].clone()
        labels[:, -1] = IGNORE_INDEX
        yield {"input": tokens[:, :-1]}, labels


if __name__ == "__main__":
    store_file = tempfile.NamedTemporaryFile(delete=False).name
    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=0, world_size=1)
    try:
        mesh = dist.group.WORLD  # a 1-rank "batch" mesh stand-in (funcol accepts a ProcessGroup)
        for keep in (False, True):
            torch.manual_seed(0)
            model = nn.Sequential(nn.Embedding(32, 16), nn.Linear(16, 32))
            t = Trainer(model, mesh, keep_on_device=keep)
            it = data_iter()
            for _ in range(3):
                t.train_step(it)
            print(keep, torch.stack(t.losses))
    finally:
        dist.destroy_process_group()
        os.unlink(store_file)
