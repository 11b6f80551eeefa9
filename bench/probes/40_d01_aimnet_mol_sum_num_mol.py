# source: isayevlab/aimnetcentral https://github.com/isayevlab/aimnetcentral/commit/84436cb9db3c56d8e502b451b2c96e05e304377d — In the packed (nb_mode 1) layout, `nbops.mol_sum` sized its per-molecule scatter buffer with `int(idx[-1].item()) + 1` and `ops.nse` broadcast molecule totals back to atoms with `torch.repeat_interleave(F_u, data["mol_sizes"])`; both read device data on the host, so every charge-equilibration call in an MD/optimization step paid device-to-host syncs. The fix ("Remove per-call GPU syncs on the packed hot path") caches the molecule count as a CPU tensor in `calc_masks` and broadcasts with an `index_select` gather on `mol_idx`.
import torch
from torch import Tensor


def set_nb_mode(data: dict[str, Tensor]) -> dict[str, Tensor]:
    if "nbmat" in data:
        data["_nb_mode"] = torch.tensor(1) if data["nbmat"].ndim == 2 else torch.tensor(2)
    else:
        data["_nb_mode"] = torch.tensor(0)
    return data


def get_nb_mode(data: dict[str, Tensor]) -> int:
    """Get the neighbor model."""
    return int(data["_nb_mode"].item())


def calc_masks(data: dict[str, Tensor]) -> dict[str, Tensor]:
    # packed layout only: padding must be the last atom
    data["mask_i"] = torch.zeros(data["numbers"].shape[0], device=data["numbers"].device, dtype=torch.bool)
    data["mask_i"][-1] = True
    data["mask_ij"] = data["nbmat"] == data["numbers"].shape[0] - 1
    data["_input_padded"] = torch.tensor(True)
    data["mol_sizes"] = torch.bincount(data["mol_idx"])
    # last atom is padding
    data["mol_sizes"][-1] -= 1
    return data


def mol_sum(x: Tensor, data: dict[str, Tensor]) -> Tensor:
    nb_mode = get_nb_mode(data)
    if nb_mode in (0, 2):
        return x.sum(dim=1)
    idx = data["mol_idx"]
    # assuming mol_idx is sorted, replace with max if not
    out_size = int(idx[-1].item()) + 1  # want: D
    if x.ndim == 1:
        res = torch.zeros(out_size, device=x.device, dtype=x.dtype)
    else:
        idx = idx.unsqueeze(-1).expand(-1, x.shape[1])
        res = torch.zeros(out_size, x.shape[1], device=x.device, dtype=x.dtype)
    res.scatter_add_(0, idx, x)
    return res


def nse(Q: Tensor, q_u: Tensor, f_u: Tensor, data: dict[str, Tensor], epsilon: float = 1.0e-6) -> Tensor:
    F_u = mol_sum(f_u, data) + epsilon
    Q_u = mol_sum(q_u, data)
    dQ = Q - Q_u
    data["_dQ"] = dQ
    data["mol_sizes"][-1] += 1
    F_u = torch.repeat_interleave(F_u, data["mol_sizes"], dim=0)  # want: D
    dQ = torch.repeat_interleave(dQ, data["mol_sizes"], dim=0)  # maybe: D (same data-dependent output size read on the host)
    data["mol_sizes"][-1] -= 1
    f = f_u / F_u
    return q_u + f * dQ


def calc_masks_fixed(data: dict[str, Tensor]) -> dict[str, Tensor]:
    data = calc_masks(data)
    # cache number of molecules as a CPU tensor (same pattern as _nb_mode)
    data["_num_mol"] = torch.tensor(data["mol_sizes"].shape[0])
    return data


def mol_sum_fixed(x: Tensor, data: dict[str, Tensor]) -> Tensor:
    nb_mode = get_nb_mode(data)
    if nb_mode in (0, 2):
        return x.sum(dim=1)
    idx = data["mol_idx"]
    # number of molecules is cached by calc_masks as a CPU tensor
    out_size = int(data["_num_mol"].item())
    if x.ndim == 1:
        res = torch.zeros(out_size, device=x.device, dtype=x.dtype)
    else:
        idx = idx.unsqueeze(-1).expand(-1, x.shape[1])
        res = torch.zeros(out_size, x.shape[1], device=x.device, dtype=x.dtype)
    res.scatter_add_(0, idx, x)
    return res


def nse_fixed(Q: Tensor, q_u: Tensor, f_u: Tensor, data: dict[str, Tensor], epsilon: float = 1.0e-6) -> Tensor:
    F_u = mol_sum_fixed(f_u, data) + epsilon
    Q_u = mol_sum_fixed(q_u, data)
    dQ = Q - Q_u
    data["_dQ"] = dQ
    # broadcast per-molecule values to atoms with a gather on mol_idx
    mol_idx = data["mol_idx"]
    F_u = torch.index_select(F_u, 0, mol_idx)
    dQ = torch.index_select(dQ, 0, mol_idx)
    f = f_u / F_u
    return q_u + f * dQ


def _packed_batch():
    torch.manual_seed(0)
    numbers = torch.tensor([6, 1, 1, 1, 8, 1, 1, 0])
    mol_idx = torch.tensor([0, 0, 0, 0, 1, 1, 1, 2])  # last atom is padding
    nbmat = torch.randint(0, 8, (8, 4))
    return set_nb_mode({"numbers": numbers, "mol_idx": mol_idx, "nbmat": nbmat})


if __name__ == "__main__":
    q_u = torch.randn(8, 1)
    f_u = torch.rand(8, 1)
    Q = torch.tensor([[0.0], [-1.0], [0.0]])
    out = nse(Q, q_u, f_u, calc_masks(_packed_batch()))
    out_fixed = nse_fixed(Q, q_u, f_u, calc_masks_fixed(_packed_batch()))
    assert torch.allclose(out, out_fixed, atol=1e-6)
    print("ok", out.flatten().tolist())
