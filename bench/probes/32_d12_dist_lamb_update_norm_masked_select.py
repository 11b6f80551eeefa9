# source: NVIDIA/apex https://github.com/NVIDIA/apex/pull/1055 — DistributedFusedLAMB gathered per-parameter update norms with `l2_norm.masked_scatter_(is_contrib, ...)` / `l2_norm.masked_select(is_contrib)` around the all-reduce and gated clipping on `math.isfinite(global_grad_norm)`, all host syncs inside every optimizer step; the "sync-free Distributed LAMB" fix scatters with precomputed index offsets, returns the full norm vector, and folds the finiteness check into device tensors.
import math

import torch
import torch.distributed as dist


class DistributedFusedLAMB:
    def __init__(self, params, lr=1e-3, max_grad_norm=1.0, clip_grad_norm=True, world_size=2, rank=0):
        self.params = list(params)
        self.lr = lr
        self.defaults = {"max_grad_norm": max_grad_norm}
        self._clip_grad_norm = clip_grad_norm
        self._model_params_num = len(self.params)
        device = self.params[0].device
        # this rank owns (contributes) every world_size-th parameter shard
        is_contrib = torch.tensor([i % world_size == rank for i in range(self._model_params_num)])
        self._model_param_is_contrib = is_contrib.to(device)
        self._contrib_ids = [i for i in range(self._model_params_num) if i % world_size == rank]
        self._offsets = torch.tensor(self._contrib_ids, dtype=torch.long, device=device)
        self._ag_pg = [None]
        self._one = torch.ones((), dtype=torch.int32, device=device)
        self._overflow_buf = torch.zeros((), dtype=torch.int32, device=device)
        self.global_scale = 1.0

    @property
    def L2_grad_norm(self):
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in self.params]))

    def _all_reduce(self, t):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(t, group=self._ag_pg[0])

    def _compute_contrib_update_norm(self, contrib_updates):
        l2_norm = torch.zeros(size=[self._model_params_num], dtype=torch.float32, device=contrib_updates[0].device)
        local_contrib_l2_norm = torch.stack([torch.linalg.vector_norm(u) for u in contrib_updates]) ** 2
        l2_norm.masked_scatter_(self._model_param_is_contrib, local_contrib_l2_norm)  # maybe: D (masked_scatter_ sizes its source from the mask on some backends)
        self._all_reduce(l2_norm)
        l2_norm = torch.sqrt(l2_norm)
        return l2_norm.masked_select(self._model_param_is_contrib)  # want: D

    def _combined_scale(self, global_grad_norm, max_grad_norm):
        combined_scale = self.global_scale
        if self._clip_grad_norm and max_grad_norm > 0 and math.isfinite(global_grad_norm):  # want: D
            combined_scale = max_grad_norm / (global_grad_norm / self.global_scale + 1e-6)
            combined_scale = self.global_scale / min(1, combined_scale)  # want: D
        return combined_scale

    def _contrib_update_norm(self, contrib_updates):
        return self._compute_contrib_update_norm(contrib_updates)

    @torch.no_grad()
    def step(self):
        max_grad_norm = self.defaults["max_grad_norm"]
        global_grad_norm = self.L2_grad_norm
        combined_scale = self._combined_scale(global_grad_norm, max_grad_norm)
        contrib = [self.params[i] for i in self._contrib_ids]
        updates = [p.grad / combined_scale for p in contrib]
        param_norm = torch.stack([torch.linalg.vector_norm(p) for p in contrib])
        upd_norm = self._contrib_update_norm(updates)
        trust = torch.where(upd_norm > 0, param_norm / upd_norm, torch.ones_like(upd_norm))
        for k, (p, u) in enumerate(zip(contrib, updates)):
            p.add_(u * trust[k], alpha=-self.lr)


class DistributedFusedLAMBSyncFree(DistributedFusedLAMB):
    def _compute_contrib_update_norm(self, contrib_updates):
        l2_norm = torch.zeros(size=[self._model_params_num], dtype=torch.float32, device=contrib_updates[0].device)
        local_contrib_l2_norm = torch.stack([torch.linalg.vector_norm(u) for u in contrib_updates]) ** 2
        l2_norm.scatter_(dim=0, index=self._offsets, src=local_contrib_l2_norm)
        self._all_reduce(l2_norm)
        l2_norm = torch.sqrt(l2_norm)
        return l2_norm

    def _contrib_update_norm(self, contrib_updates):
        return self._compute_contrib_update_norm(contrib_updates).index_select(0, self._offsets)

    def _combined_scale(self, global_grad_norm, max_grad_norm):
        # check global_grad_norm and fill overflow_buf, all on device
        is_finite = (global_grad_norm + 1 > global_grad_norm).int()
        self._overflow_buf = self._one * (is_finite ^ self._one)
        if not (self._clip_grad_norm and max_grad_norm > 0):
            return self.global_scale
        clip = max_grad_norm / (global_grad_norm / self.global_scale + 1e-6)
        scale = self.global_scale / torch.clamp(clip, max=1.0)
        return torch.where(is_finite.bool(), scale, torch.full_like(scale, self.global_scale))


if __name__ == "__main__":
    results = []
    for cls in (DistributedFusedLAMB, DistributedFusedLAMBSyncFree):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 4))
        opt = cls(model.parameters(), lr=0.05)
        for _ in range(3):
            for p in model.parameters():
                p.grad = None
            model(torch.randn(16, 8)).pow(2).mean().backward()
            opt.step()
        results.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    torch.testing.assert_close(results[0], results[1])
    print("distributed LAMB variants agree")
