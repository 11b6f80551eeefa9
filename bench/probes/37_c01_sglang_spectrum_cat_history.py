# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/31491 — The Spectrum feature cache for diffusion denoising appended every observed (t, h) pair to its history with `torch.cat([self._H_buf, h_flat])`, reallocating and copying the whole flattened-feature history on every denoising step. The reviewer flagged "cat reallocates every step"; the fix (commit 7df60ce) preallocates a (K, N) ring buffer once and writes each new row in place.
import torch

DTYPE = torch.float32


def _flatten(h: torch.Tensor):
    shape = tuple(h.shape)
    return h.reshape(1, -1), shape


class ChebyshevSpectrum:
    def __init__(self, M: int = 3, K: int = 100, lam: float = 1e-3, t_min: float = 0.0, t_max: float = 1.0, device=None):
        self.M = M
        self.K = K
        self.lam = lam
        self.t_min_val = t_min
        self.t_max_val = t_max
        self.device = device
        self.t_buf = torch.empty(0, dtype=DTYPE)
        self._H_buf = None
        self._shape = None
        self._coef = None

    def _taus(self, t: torch.Tensor) -> torch.Tensor:
        mid, rng = 0.5 * (self.t_min_val + self.t_max_val), self.t_max_val - self.t_min_val
        return ((t - mid) * 2.0 / rng).reshape(-1, 1)

    def _build_design(self, taus: torch.Tensor) -> torch.Tensor:
        K = taus.shape[0]
        T0 = torch.ones((K, 1), device=taus.device, dtype=taus.dtype)
        if self.M == 0:
            return T0
        cols = [T0, taus]
        for _ in range(2, self.M + 1):
            cols.append(2 * taus * cols[-1] - cols[-2])
        return torch.cat(cols[: self.M + 1], dim=1)

    def update(self, t: float, h: torch.Tensor) -> None:
        """Append observation (t, h) to the sliding window."""
        device = self.device or h.device
        t_tensor = torch.as_tensor(t, dtype=DTYPE, device=device)
        h_flat, shape = _flatten(h)
        h_flat = h_flat.to(device)

        if self._shape is None:
            self._shape = shape
        else:
            assert shape == self._shape, "Spectrum feature shape must remain constant"

        if self.t_buf.numel() == 0:
            self.t_buf = t_tensor[None]
            self._H_buf = h_flat
        else:
            self.t_buf = torch.cat([self.t_buf, t_tensor[None]], dim=0)  # maybe: C (small time history also regrown by cat every step)
            self._H_buf = torch.cat([self._H_buf, h_flat], dim=0)  # want: C
            if self.t_buf.numel() > self.K:
                self.t_buf = self.t_buf[-self.K :]
                self._H_buf = self._H_buf[-self.K :]
        self._coef = None

    def _history(self):
        return self.t_buf, self._H_buf

    def _fit_if_needed(self) -> None:
        if self._coef is not None:
            return
        t_hist, h_hist = self._history()
        X = self._build_design(self._taus(t_hist)).to(torch.float32)
        H = h_hist.to(torch.float32)
        XtX = X.T @ X + self.lam * torch.eye(X.shape[1], device=X.device, dtype=X.dtype)
        L = torch.linalg.cholesky(XtX)
        self._coef = torch.cholesky_solve(X.T @ H, L).to(DTYPE)

    @torch.no_grad()
    def predict(self, t_star: float) -> torch.Tensor:
        self._fit_if_needed()
        x_star = self._build_design(self._taus(torch.as_tensor([t_star], dtype=DTYPE)))
        return (x_star @ self._coef).reshape(self._shape)


class ChebyshevSpectrumFixed(ChebyshevSpectrum):
    def update(self, t: float, h: torch.Tensor) -> None:
        device = self.device or h.device
        h_flat, shape = _flatten(h)
        h_flat = h_flat.to(device)
        if self._shape is None:
            self._shape = shape
            self._t_ring = torch.empty(self.K, dtype=DTYPE, device=device)
            self._H_ring = torch.empty((self.K, h_flat.shape[1]), dtype=h_flat.dtype, device=device)
            self._n = 0
        else:
            assert shape == self._shape, "Spectrum feature shape must remain constant"
        slot = self._n % self.K
        self._t_ring[slot] = t
        self._H_ring[slot].copy_(h_flat[0])
        self._n += 1
        self._coef = None

    def _history(self):
        n = min(self._n, self.K)
        return self._t_ring[:n], self._H_ring[:n]


if __name__ == "__main__":
    torch.manual_seed(0)
    feats = [torch.randn(2, 4, 8) for _ in range(6)]
    ts = [1.0 - i / 10 for i in range(6)]
    old, new = ChebyshevSpectrum(K=8), ChebyshevSpectrumFixed(K=8)
    old_ptrs, new_ptrs = [], []
    for t, h in zip(ts, feats):
        old.update(t, h)
        new.update(t, h)
        old_ptrs.append(old._H_buf.data_ptr())
        new_ptrs.append(new._H_ring.data_ptr())
    assert len(set(old_ptrs)) == len(old_ptrs)  # a fresh history tensor every step
    assert len(set(new_ptrs)) == 1
    assert torch.allclose(old.predict(0.3), new.predict(0.3), atol=1e-4)
    print("ok")
