# source: deepmodeling/deepmd-kit https://github.com/deepmodeling/deepmd-kit/pull/3421 — `EnergyStdLoss.forward` (and the denoise/tensor losses) started every training step with `loss = torch.tensor(0.0, dtype=..., device=env.DEVICE)`, a host-to-device copy from pageable memory that makes the CPU wait on the stream (`cudaStreamSynchronize`) inside the loss. The fix builds the zero on device with `torch.zeros(1, ..., device=env.DEVICE)[0]` so all ops in the energy loss stay asynchronous.
import torch
import torch.nn.functional as F


class env:
    DEVICE = torch.device("cpu")
    GLOBAL_PT_FLOAT_PRECISION = torch.float64


class TaskLoss(torch.nn.Module):
    pass


class EnergyStdLoss(TaskLoss):
    def __init__(self, starter_learning_rate=1.0, start_pref_e=0.02, limit_pref_e=1.0,
                 start_pref_f=1000.0, limit_pref_f=1.0, start_pref_v=0.0, limit_pref_v=0.0,
                 inference=False):
        super().__init__()
        self.starter_learning_rate = starter_learning_rate
        self.has_e = (start_pref_e != 0.0 and limit_pref_e != 0.0) or inference
        self.has_f = (start_pref_f != 0.0 and limit_pref_f != 0.0) or inference
        self.has_v = (start_pref_v != 0.0 and limit_pref_v != 0.0) or inference
        self.start_pref_e, self.limit_pref_e = start_pref_e, limit_pref_e
        self.start_pref_f, self.limit_pref_f = start_pref_f, limit_pref_f
        self.start_pref_v, self.limit_pref_v = start_pref_v, limit_pref_v
        self.inference = inference

    def _zero(self):
        return torch.tensor(0.0, dtype=env.GLOBAL_PT_FLOAT_PRECISION, device=env.DEVICE)  # want: D

    def forward(self, model_pred, label, natoms, learning_rate, mae=False):
        coef = learning_rate / self.starter_learning_rate
        pref_e = self.limit_pref_e + (self.start_pref_e - self.limit_pref_e) * coef
        pref_f = self.limit_pref_f + (self.start_pref_f - self.limit_pref_f) * coef
        pref_v = self.limit_pref_v + (self.start_pref_v - self.limit_pref_v) * coef
        loss = self._zero()
        more_loss = {}
        atom_norm = 1.0 / natoms
        if self.has_e and "energy" in model_pred and "energy" in label:
            l2_ener_loss = torch.mean(torch.square(model_pred["energy"] - label["energy"]))
            if not self.inference:
                more_loss["l2_ener_loss"] = l2_ener_loss.detach()
            loss += atom_norm * (pref_e * l2_ener_loss)
            more_loss["rmse_e"] = (l2_ener_loss.sqrt() * atom_norm).detach()
        if self.has_f and "force" in model_pred and "force" in label:
            diff_f = label["force"] - model_pred["force"]
            l2_force_loss = torch.mean(torch.square(diff_f))
            if not self.inference:
                more_loss["l2_force_loss"] = l2_force_loss.detach()
            loss += (pref_f * l2_force_loss).to(env.GLOBAL_PT_FLOAT_PRECISION)
            more_loss["rmse_f"] = l2_force_loss.sqrt().detach()
        if self.has_v and "virial" in model_pred and "virial" in label:
            diff_v = label["virial"] - model_pred["virial"].reshape(-1, 9)
            l2_virial_loss = torch.mean(torch.square(diff_v))
            loss += atom_norm * (pref_v * l2_virial_loss)
            more_loss["rmse_v"] = (l2_virial_loss.sqrt() * atom_norm).detach()
        return loss, more_loss


class EnergyStdLossFixed(EnergyStdLoss):
    def _zero(self):
        return torch.zeros(1, dtype=env.GLOBAL_PT_FLOAT_PRECISION, device=env.DEVICE)[0]


if __name__ == "__main__":
    torch.manual_seed(0)
    nf, nloc = 2, 5
    pred = {"energy": torch.randn(nf, 1, dtype=torch.float64),
            "force": torch.randn(nf, nloc, 3, dtype=torch.float64)}
    lab = {"energy": torch.randn(nf, 1, dtype=torch.float64),
           "force": torch.randn(nf, nloc, 3, dtype=torch.float64)}
    for step in range(3):
        lr = 1e-3 * 0.9 ** step
        a, ma = EnergyStdLoss(starter_learning_rate=1e-3)(pred, lab, nloc, lr)
        b, mb = EnergyStdLossFixed(starter_learning_rate=1e-3)(pred, lab, nloc, lr)
        assert a.shape == b.shape == torch.Size([])
        assert torch.allclose(a, b) and torch.allclose(ma["rmse_f"], mb["rmse_f"])
    print("ok")
