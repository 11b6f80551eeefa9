# source: ModelCloud/GPTQModel https://github.com/ModelCloud/GPTQModel/pull/1506 — `GPTQ.fasterquant` dampens the Hessian before the Cholesky factorization with `diag = torch.arange(self.columns); H[diag, diag].add_(damp)`, a line that PR #1504 ("reduce allocation") had turned from `H[diag, diag] += damp` into an in-place call. Indexing with the `diag` index tensors returns a copy, so the damping was added to a temporary and never reached H (rank-deficient Hessians then fail Cholesky even after the damp auto-increment loop). The "revert add_" PR restores `H[diag, diag] += damp`, which goes through `__setitem__`.
import math
import threading

import torch
import torch.nn as nn

CUDA_1 = torch.device("cpu")
lock = threading.Lock()


class QuantizeConfig:
    def __init__(self, damp_percent=0.01, damp_auto_increment=0.25):
        self.damp_percent = damp_percent
        self.damp_auto_increment = damp_auto_increment


class GPTQ:
    def __init__(self, module: nn.Linear, qcfg: QuantizeConfig):
        self.module = module
        self.qcfg = qcfg
        self.columns = module.weight.shape[1]
        self.nsamples = 0

    def add_batch(self, inp):
        batch_size = inp.shape[0]
        inp = inp.reshape(-1, inp.shape[-1]).t()
        if not hasattr(self, "H"):
            self.H = torch.zeros((self.columns, self.columns), dtype=torch.float32, device=CUDA_1)
        else:
            self.H *= self.nsamples / (self.nsamples + batch_size)

        self.nsamples += batch_size
        inp = math.sqrt(2 / self.nsamples) * inp.float()
        self.H.add_(inp.matmul(inp.t()))

    def _hessian_inverse(self, H):
        damp_percent = self.qcfg.damp_percent
        while 1 > damp_percent > 0:
            try:
                damp = damp_percent * torch.mean(torch.diag(H))
                diag = torch.arange(self.columns, device=CUDA_1)
                H[diag, diag].add_(damp)  # want: B

                with lock:
                    H = torch.linalg.cholesky(H)
                    H = torch.cholesky_inverse(H)
                    H = torch.linalg.cholesky(H, upper=True)
                    Hinv = H
                break
            except torch._C._LinAlgError as e:
                if self.qcfg.damp_auto_increment != 0:
                    damp_percent += self.qcfg.damp_auto_increment
                else:
                    raise e

        if not (0 < damp_percent < 1):
            raise ValueError(f"Quantization: `damp_percent` must between 0 and 1. current is {damp_percent}")
        return Hinv

    def fasterquant(self):
        H = self.H
        del self.H
        dead = torch.diag(H) == 0
        H[dead, dead] = 1
        return self._hessian_inverse(H)


class GPTQFixed(GPTQ):
    def _hessian_inverse(self, H):
        damp_percent = self.qcfg.damp_percent
        while 1 > damp_percent > 0:
            try:
                damp = damp_percent * torch.mean(torch.diag(H))
                diag = torch.arange(self.columns, device=CUDA_1)
                H[diag, diag] += damp

                with lock:
                    H = torch.linalg.cholesky(H)
                    H = torch.cholesky_inverse(H)
                    H = torch.linalg.cholesky(H, upper=True)
                    Hinv = H
                break
            except torch._C._LinAlgError as e:
                if self.qcfg.damp_auto_increment != 0:
                    damp_percent += self.qcfg.damp_auto_increment
                else:
                    raise e

        if not (0 < damp_percent < 1):
            raise ValueError(f"Quantization: `damp_percent` must between 0 and 1. current is {damp_percent}")
        return Hinv


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = nn.Linear(6, 4, bias=False)
    x = torch.randn(2, 8, 3)
    calib = torch.cat([x, x], dim=-1)  # duplicated features -> rank-deficient Hessian

    buggy = GPTQ(layer, QuantizeConfig())
    buggy.add_batch(calib)
    try:
        buggy.fasterquant()
        raised = False
    except ValueError:
        raised = True
    assert raised

    fixed = GPTQFixed(layer, QuantizeConfig())
    fixed.add_batch(calib)
    Hinv = fixed.fasterquant()
    assert torch.isfinite(Hinv).all() and Hinv.shape == (6, 6)
    print("ok")
