# source: mehta-lab/waveorder https://github.com/mehta-lab/waveorder/pull/576 — waveorder's model functions wrapped inputs that are already torch tensors in `torch.tensor(...)` (sometimes followed by `.clone()`), which always copy-constructs the data (a double copy with the clone), detaches it from autograd and raises the "To copy construct from a tensor" UserWarning. The PR replaces these copy-constructs with `torch.as_tensor`, which returns the tensor itself when dtype/device already match.
import warnings

import torch


def generate_frequencies(img_dim, ps):
    fy = torch.fft.fftfreq(img_dim[0], ps)
    fx = torch.fft.fftfreq(img_dim[1], ps)
    fyy, fxx = torch.meshgrid(fy, fx, indexing="ij")
    return fyy, fxx


def generate_pupil(frr, NA, lamb_in):
    pupil = torch.zeros(frr.shape)
    pupil[frr < NA / lamb_in] = 1
    return pupil


def calculate_transfer_function(yx_shape, yx_pixel_size, z_position_list, wavelength_emission, numerical_aperture_detection):
    z_positions = torch.tensor(z_position_list)  # want: C
    fyy, fxx = generate_frequencies(yx_shape, yx_pixel_size)
    frr = torch.sqrt(fyy**2 + fxx**2)
    det_pupil = generate_pupil(frr, numerical_aperture_detection, wavelength_emission)
    defocus = torch.exp(1j * 2 * torch.pi * z_positions[:, None, None] * frr[None] ** 2)
    return torch.abs(torch.fft.ifft2(det_pupil[None] * defocus)) ** 2


def apply_inverse_transfer_function(zyx_data, optical_transfer_function, regularization_strength=1e-3):
    zyx_data = torch.tensor(zyx_data).clone()  # want: C
    zyx_data_hat = torch.fft.fftn(zyx_data, dim=(-2, -1))
    otf = torch.fft.fftn(optical_transfer_function, dim=(-2, -1))
    inverse_filter = otf.conj() / (otf.abs() ** 2 + regularization_strength)
    return torch.real(torch.fft.ifftn(zyx_data_hat * inverse_filter, dim=(-2, -1))), zyx_data


def calculate_transfer_function_fixed(yx_shape, yx_pixel_size, z_position_list, wavelength_emission, numerical_aperture_detection):
    z_positions = torch.as_tensor(z_position_list)
    fyy, fxx = generate_frequencies(yx_shape, yx_pixel_size)
    frr = torch.sqrt(fyy**2 + fxx**2)
    det_pupil = generate_pupil(frr, numerical_aperture_detection, wavelength_emission)
    defocus = torch.exp(1j * 2 * torch.pi * z_positions[:, None, None] * frr[None] ** 2)
    return torch.abs(torch.fft.ifft2(det_pupil[None] * defocus)) ** 2


def apply_inverse_transfer_function_fixed(zyx_data, optical_transfer_function, regularization_strength=1e-3):
    zyx_data = torch.as_tensor(zyx_data)
    zyx_data_hat = torch.fft.fftn(zyx_data, dim=(-2, -1))
    otf = torch.fft.fftn(optical_transfer_function, dim=(-2, -1))
    inverse_filter = otf.conj() / (otf.abs() ** 2 + regularization_strength)
    return torch.real(torch.fft.ifftn(zyx_data_hat * inverse_filter, dim=(-2, -1))), zyx_data


if __name__ == "__main__":
    torch.manual_seed(0)
    z_list = torch.linspace(-2.0, 2.0, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        otf = calculate_transfer_function((16, 16), 0.1, z_list, 0.5, 0.9)
        data = torch.rand(5, 16, 16)
        rec_bug, used_bug = apply_inverse_transfer_function(data, otf)
    assert any("copy construct" in str(w.message) for w in caught)

    otf_fix = calculate_transfer_function_fixed((16, 16), 0.1, z_list, 0.5, 0.9)
    rec_fix, used_fix = apply_inverse_transfer_function_fixed(data, otf_fix)
    assert torch.allclose(otf, otf_fix)
    assert torch.allclose(rec_bug, rec_fix)
    assert used_bug.data_ptr() != data.data_ptr()
    assert used_fix.data_ptr() == data.data_ptr()
    print("ok")
