# source: TorchDR/TorchDR https://github.com/TorchDR/TorchDR/issues/309 — AffinityMatcher._training_step read `self.chunk_indices_[0].item()` on every iteration of a distributed closed-form fit, draining the CUDA queue right before the gradient all-reduce; the fix hoists the (constant) chunk offset to a host int when the chunk indices are built.
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn


class AffinityMatcher(nn.Module):
    _use_closed_form_gradients = True

    def __init__(self, n_components=2, lr=1.0, max_iter=20, world_size=1, rank=0):
        super().__init__()
        self.n_components = n_components
        self.lr = lr
        self.max_iter = max_iter
        self.world_size = world_size
        self.rank = rank

    def on_affinity_computation_end(self, n_samples):
        base, remainder = divmod(n_samples, self.world_size)
        chunk_size = base + (1 if self.rank < remainder else 0)
        chunk_start = self.rank * base + min(self.rank, remainder)
        self.chunk_indices_ = torch.arange(chunk_start, chunk_start + chunk_size, device=self.embedding_.device)

    def _compute_gradients(self):
        # attraction of this rank's chunk towards the target positions (closed form)
        chunk = self.embedding_[self.chunk_indices_]
        return chunk - self.target_[self.chunk_indices_]

    def _training_step(self):
        self.optimizer_.zero_grad(set_to_none=True)
        gradients = self._compute_gradients()
        if getattr(self, "world_size", 1) > 1:
            expected_chunk_size = len(self.chunk_indices_)
            if gradients.shape[0] != expected_chunk_size:
                raise RuntimeError("Gradient size mismatch in distributed mode")
            full_gradients = torch.zeros_like(self.embedding_)
            chunk_start = self.chunk_indices_[0].item()  # want: D
            full_gradients[chunk_start : chunk_start + expected_chunk_size] = gradients
            dist.all_reduce(full_gradients, op=dist.ReduceOp.SUM)
            self.embedding_.grad = full_gradients
        else:
            self.embedding_.grad = gradients
        self.optimizer_.step()

    def fit(self, target):
        self.target_ = target
        self.embedding_ = nn.Parameter(torch.zeros_like(target))
        self.on_affinity_computation_end(target.shape[0])
        self.optimizer_ = torch.optim.SGD([self.embedding_], lr=self.lr)
        for _ in range(self.max_iter):
            self._training_step()
        return self.embedding_.detach()


class AffinityMatcherFixed(AffinityMatcher):
    def on_affinity_computation_end(self, n_samples):
        base, remainder = divmod(n_samples, self.world_size)
        chunk_size = base + (1 if self.rank < remainder else 0)
        chunk_start = self.rank * base + min(self.rank, remainder)
        self.chunk_start_ = chunk_start
        self.chunk_indices_ = torch.arange(chunk_start, chunk_start + chunk_size, device=self.embedding_.device)

    def _training_step(self):
        self.optimizer_.zero_grad(set_to_none=True)
        gradients = self._compute_gradients()
        if getattr(self, "world_size", 1) > 1:
            expected_chunk_size = len(self.chunk_indices_)
            if gradients.shape[0] != expected_chunk_size:
                raise RuntimeError("Gradient size mismatch in distributed mode")
            full_gradients = torch.zeros_like(self.embedding_)
            chunk_start = self.chunk_start_
            full_gradients[chunk_start : chunk_start + expected_chunk_size] = gradients
            dist.all_reduce(full_gradients, op=dist.ReduceOp.SUM)
            self.embedding_.grad = full_gradients
        else:
            self.embedding_.grad = gradients
        self.optimizer_.step()


if __name__ == "__main__":
    # one real gloo process standing in for rank 1 of a 2-rank job
    init_file = os.path.join(tempfile.mkdtemp(), "pg")
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=0, world_size=1)
    torch.manual_seed(0)
    target = torch.randn(9, 2)
    a = AffinityMatcher(lr=0.5, world_size=2, rank=1).fit(target)
    b = AffinityMatcherFixed(lr=0.5, world_size=2, rank=1).fit(target)
    assert torch.allclose(a, b)
    print("rows moved by this rank:", (b.abs().sum(1) > 0).nonzero().flatten().tolist())
    dist.destroy_process_group()
