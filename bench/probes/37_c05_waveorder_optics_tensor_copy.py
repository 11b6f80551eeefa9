# source: mehta-lab/waveorder https://github.com/mehta-lab/waveorder/issues/139 — optics.generate_propagation_kernel and generate_greens_function_z accept `z_position_list` as a list or a tensor and wrap it with `torch.tensor(z_position_list)`, which silently copy-constructs the tensor every call (PyTorch warns "To copy construct from a tensor..."); the maintainer noted "it is an implicit copy and can be quite expensive". The fix (PR #576) replaces the copy-constructs with `torch.as_tensor`, which reuses an existing tensor.
import warnings

import numpy as np
import torch


def generate_propagation_kernel(radial_frequencies, pupil_support, wavelength, z_position_list):
    oblique_factor = ((1 - wavelength**2 * radial_frequencies**2) * pupil_support) ** (1 / 2) / wavelength

    propagation_kernel = pupil_support[None, :, :] * torch.exp(
        1j
        * 2
        * np.pi
        * torch.tensor(z_position_list)[:, None, None]  # want: C
        * oblique_factor[None, :, :]
    )

    return propagation_kernel


def generate_greens_function_z(radial_frequencies, pupil_support, wavelength_illumination, z_position_list):
    oblique_factor = (
        (1 - wavelength_illumination**2 * radial_frequencies**2) * pupil_support
    ) ** (1 / 2) / wavelength_illumination

    greens_function_z = (
        -1j
        / 4
        / np.pi
        * pupil_support[None, :, :]
        * torch.exp(
            1j
            * 2
            * np.pi
            * torch.tensor(z_position_list)[:, None, None]  # want: C
            * oblique_factor[None, :, :]
        )
        / (oblique_factor[None, :, :] + 1e-15)
    )

    return greens_function_z


def generate_propagation_kernel_fixed(radial_frequencies, pupil_support, wavelength, z_position_list):
    oblique_factor = ((1 - wavelength**2 * radial_frequencies**2) * pupil_support) ** (1 / 2) / wavelength

    propagation_kernel = pupil_support[None, :, :] * torch.exp(
        1j * 2 * np.pi * torch.as_tensor(z_position_list)[:, None, None] * oblique_factor[None, :, :]
    )

    return propagation_kernel


def generate_greens_function_z_fixed(radial_frequencies, pupil_support, wavelength_illumination, z_position_list):
    oblique_factor = (
        (1 - wavelength_illumination**2 * radial_frequencies**2) * pupil_support
    ) ** (1 / 2) / wavelength_illumination

    greens_function_z = (
        -1j
        / 4
        / np.pi
        * pupil_support[None, :, :]
        * torch.exp(1j * 2 * np.pi * torch.as_tensor(z_position_list)[:, None, None] * oblique_factor[None, :, :])
        / (oblique_factor[None, :, :] + 1e-15)
    )

    return greens_function_z


if __name__ == "__main__":
    fy = torch.fft.fftfreq(16)
    radial_frequencies = torch.sqrt(fy[:, None] ** 2 + fy[None, :] ** 2) * 2
    pupil_support = (radial_frequencies < 0.9).to(torch.float32)
    z_position_list = (torch.arange(5) - 2) * 0.25
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = generate_propagation_kernel(radial_frequencies, pupil_support, 0.5, z_position_list)
        g = generate_greens_function_z(radial_frequencies, pupil_support, 0.5, z_position_list)
    assert any("copy construct" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught_fixed:
        warnings.simplefilter("always")
        b = generate_propagation_kernel_fixed(radial_frequencies, pupil_support, 0.5, z_position_list)
        h = generate_greens_function_z_fixed(radial_frequencies, pupil_support, 0.5, z_position_list)
    assert not any("copy construct" in str(w.message) for w in caught_fixed)
    assert torch.allclose(a, b) and torch.allclose(g, h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.tensor(z_position_list).data_ptr() != z_position_list.data_ptr()
    assert torch.as_tensor(z_position_list).data_ptr() == z_position_list.data_ptr()
    print("ok")
