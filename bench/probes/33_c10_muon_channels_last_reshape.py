# source: ultralytics/ultralytics https://github.com/ultralytics/ultralytics/pull/26035 — muon_update flattened every conv update with reshape(len(u), -1); with channels_last training the NHWC update cannot be viewed as 2-D, so each step materialised a copy of every conv update (then padded + stacked them by row count); the PR flattens NHWC as permute(0, 2, 3, 1).flatten(1) (a view), buckets by column count and fills one zeroed buffer.
import torch
import torch.nn.functional as F


def zeropower_via_newtonschulz5(G, steps=5, eps=1e-7):
    """Batched Newton-Schulz orthogonalisation of a (G, M, N) stack with M <= N."""
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.float()
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + eps)
    for _ in range(steps):
        A = X @ X.mT
        B = torch.baddbmm(A, A, A, beta=b, alpha=c)
        X = torch.baddbmm(X, B, X, beta=a, alpha=1.0)
    return X


def muon_update(grads, momentum_bufs, beta=0.95, ns_steps=5, nesterov=True):
    torch._foreach_lerp_(momentum_bufs, grads, 1 - beta)
    updates = torch._foreach_lerp(grads, momentum_bufs, beta) if nesterov else momentum_bufs
    mats = [u.reshape(len(u), -1) for u in updates]  # want: C
    groups = {}
    for i, m in enumerate(mats):
        m = m.mT if m.shape[0] > m.shape[1] else m
        groups.setdefault(m.shape[0], []).append((i, m))
    out = [None] * len(mats)
    for rows, items in groups.items():
        width = max(m.shape[1] for _, m in items)
        batch = torch.stack([F.pad(m, (0, width - m.shape[1])) for _, m in items])  # maybe: C (pad + stack copies every matrix)
        ortho = zeropower_via_newtonschulz5(batch, ns_steps)
        for (i, m), o in zip(items, ortho):
            o = o[:, : m.shape[1]]
            o = o.mT if mats[i].shape[0] > mats[i].shape[1] else o
            out[i] = (o * max(1, o.shape[0] / o.shape[1]) ** 0.5).reshape(updates[i].shape)
    return out


def _flat(u):
    if u.ndim == 4 and u.is_contiguous(memory_format=torch.channels_last):
        return u.permute(0, 2, 3, 1).flatten(1)
    return u.flatten(1)


def _unflat(o, u):
    if u.ndim == 4 and u.is_contiguous(memory_format=torch.channels_last):
        n, c, h, w = u.shape
        return o.view(n, h, w, c).permute(0, 3, 1, 2)
    return o.view(u.shape)


def muon_update_fixed(grads, momentum_bufs, beta=0.95, ns_steps=5, nesterov=True):
    torch._foreach_lerp_(momentum_bufs, grads, 1 - beta)
    updates = torch._foreach_lerp(grads, momentum_bufs, beta) if nesterov else momentum_bufs
    mats = [_flat(u) for u in updates]
    groups = {}
    for i, m in enumerate(mats):
        m = m.mT if m.shape[0] > m.shape[1] else m
        groups.setdefault(m.shape[1], []).append((i, m))
    out = [None] * len(mats)
    for cols, items in groups.items():
        height = max(m.shape[0] for _, m in items)
        batch = mats[items[0][0]].new_zeros(len(items), height, cols)
        torch._foreach_add_([batch[j, : m.shape[0]] for j, (_, m) in enumerate(items)], [m for _, m in items])
        ortho = zeropower_via_newtonschulz5(batch, ns_steps)
        for (i, m), o in zip(items, ortho):
            o = o[: m.shape[0]]
            o = o.mT if mats[i].shape[0] > mats[i].shape[1] else o
            out[i] = _unflat(o * max(1, o.shape[0] / o.shape[1]) ** 0.5, updates[i])
    return out


class MuSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.02, momentum=0.95, update_fn=muon_update):
        super().__init__(params, dict(lr=lr, momentum=momentum))
        self.update_fn = update_fn

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            grads = [p.grad for p in params]
            bufs = [self.state[p].setdefault("momentum_buffer", torch.zeros_like(p)) for p in params]
            updates = self.update_fn(grads, bufs, group["momentum"])
            torch._foreach_add_(params, updates, alpha=-group["lr"])


if __name__ == "__main__":
    torch.manual_seed(0)
    shapes = [(16, 8, 3, 3), (32, 16, 3, 3), (16, 32, 1, 1), (64, 8, 1, 1)]
    ws = [torch.randn(s).to(memory_format=torch.channels_last) for s in shapes]
    pb = [torch.nn.Parameter(w.clone(memory_format=torch.channels_last)) for w in ws]
    pf = [torch.nn.Parameter(w.clone(memory_format=torch.channels_last)) for w in ws]
    opt_b, opt_f = MuSGD(pb), MuSGD(pf, update_fn=muon_update_fixed)
    for _ in range(2):
        for p in pb + pf:
            p.grad = torch.sin(p.detach() * 3).contiguous(memory_format=torch.channels_last)
        opt_b.step()
        opt_f.step()
    for a, b in zip(pb, pf):
        assert torch.allclose(a, b, atol=1e-4)
    g = pb[1].grad
    print("buggy reshape of an NHWC update is a copy:", g.reshape(len(g), -1).data_ptr() != g.data_ptr())
    print("fixed permute+flatten is a view:", _flat(g).data_ptr() == g.data_ptr())
