# source: mehta-lab/waveorder PR #576 ("fix: replace `torch.tensor` copy-constructs with `as_tensor`") — waveorder/stokes.py built the Stokes/retardance outputs with `torch.tensor(transmittance).clone()` (the input is already a tensor: torch.tensor copies it, then clone copies the copy) and sized the forward Mueller matrix with `torch.tensor(s0).shape`, a full copy of s0 just to read its shape; every birefringence reconstruction runs these on whole (Z, Y, X) volumes
import numpy as np
import torch


def calculate_stokes_to_intensity_matrix(swing, scheme="5-State"):
    chi = swing * 2 * np.pi
    if scheme == "5-State":
        rows = [
            [1, 0, 0, -1],
            [1, np.sin(chi), 0, -np.cos(chi)],
            [1, 0, np.sin(chi), -np.cos(chi)],
            [1, -np.sin(chi), 0, -np.cos(chi)],
            [1, 0, -np.sin(chi), -np.cos(chi)],
        ]
    else:
        rows = [
            [1, 0, 0, -1],
            [1, np.sin(chi), 0, -np.cos(chi)],
            [1, -0.5 * np.sin(chi), np.sqrt(3) * np.cos(chi) * np.sin(chi), -np.cos(chi)],
            [1, -0.5 * np.sin(chi), -np.sqrt(3) / 2 * np.sin(chi), -np.cos(chi)],
        ]
    return 0.5 * torch.tensor(rows, dtype=torch.float32)  # nested python lists: a real construction


def calculate_intensity_to_stokes_matrix(swing, scheme="5-State"):
    return torch.linalg.pinv(calculate_stokes_to_intensity_matrix(swing, scheme=scheme))


def stokes_after_adr(retardance, orientation, transmittance, depolarization, input="cpl"):
    if input != "cpl":
        raise NotImplementedError("input != cpl")
    # without copying transmittance, downstream changes to s0 will affect transmittance
    s0 = torch.tensor(transmittance).clone()  # want: C
    s1 = transmittance * depolarization * torch.sin(retardance) * torch.sin(2 * orientation)
    s2 = transmittance * depolarization * -torch.sin(retardance) * torch.cos(2 * orientation)
    s3 = transmittance * depolarization * torch.cos(retardance)
    return s0, s1, s2, s3


def _s12_to_orientation(s1, s2):
    return (torch.arctan2(s1, -s2) % (2 * np.pi)) / 2


def estimate_adr_from_stokes(s0, s1, s2, s3, input="cpl"):
    if input != "cpl":
        raise NotImplementedError("input != cpl")
    len_pol = (s1**2 + s2**2 + s3**2) ** 0.5
    retardance = torch.arcsin(((s1**2 + s2**2) ** 0.5) / len_pol)
    orientation = _s12_to_orientation(s1, s2)
    # without copying s0, downstream changes to transmittance will affect s0
    transmittance = torch.tensor(s0).clone()  # want: C
    depolarization = len_pol / s0
    return retardance, orientation, transmittance, depolarization


def mueller_from_stokes(s0, s1, s2, s3, input="cpl", model="adr", direction="forward"):
    if direction != "forward":
        raise NotImplementedError
    M = torch.zeros((4, 4) + torch.tensor(s0).shape, device=s0.device)  # want: C
    denom = s1**2 + s2**2
    M[0, 0] = s0
    M[1, 1] = (s0 * s2**2 + s1**2 * s3) / denom
    M[1, 2] = s1 * s2 * (s3 - s0) / denom
    M[1, 3] = s1
    M[2, 1] = M[1, 2]
    M[2, 2] = (s0 * s1**2 + s2**2 * s3) / denom
    M[2, 3] = s2
    M[3, 1] = -M[1, 3]
    M[3, 2] = -M[2, 3]
    M[3, 3] = s3
    return M


def estimate_ar_from_stokes012_fixed(s0, s1, s2):
    """After the PR: one copy, no warning."""
    retardance = torch.arcsin(((s1**2 + s2**2) ** 0.5) / s0)
    orientation = _s12_to_orientation(s1, s2)
    transmittance = torch.as_tensor(s0).clone()
    return retardance, orientation, transmittance


def reconstruct_birefringence(czyx_data: np.ndarray, swing=0.1, scheme="5-State", device="cpu"):
    """api/birefringence.py: numpy volume -> tensors -> Stokes -> ADR parameters."""
    czyx = torch.tensor(czyx_data, dtype=torch.float32, device=device)  # from numpy: needed
    I2S = calculate_intensity_to_stokes_matrix(swing, scheme).to(device)
    s0, s1, s2, s3 = torch.einsum("sc,czyx->szyx", I2S, czyx)
    ret, ori, tra, dep = estimate_adr_from_stokes(s0, s1, s2, s3)
    tra = tra / tra.mean()  # the clone protects s0 from this kind of downstream edit
    return ret, ori, tra, dep, (s0, s1, s2, s3)


if __name__ == "__main__":
    import warnings

    rng = np.random.default_rng(0)
    ret = torch.tensor(rng.uniform(0.1, 1.0, (3, 8, 8)), dtype=torch.float32)
    ori = torch.tensor(rng.uniform(0.0, np.pi, (3, 8, 8)), dtype=torch.float32)
    tra = torch.tensor(rng.uniform(0.5, 1.0, (3, 8, 8)), dtype=torch.float32)
    dep = torch.tensor(rng.uniform(0.5, 1.0, (3, 8, 8)), dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        s = stokes_after_adr(ret, ori, tra, dep)
        S2I = calculate_stokes_to_intensity_matrix(0.1)
        czyx = torch.einsum("cs,szyx->czyx", S2I, torch.stack(s)).numpy()
        r2, o2, t2, d2, stokes = reconstruct_birefringence(czyx)
        M = mueller_from_stokes(*stokes)
    assert torch.allclose(r2, ret, atol=1e-3) and torch.allclose(d2, dep, atol=1e-3)
    assert M.shape == (4, 4, 3, 8, 8)
    _, _, t3 = estimate_ar_from_stokes012_fixed(*stokes[:3])
    assert t3.data_ptr() != stokes[0].data_ptr()
    print("ok")
