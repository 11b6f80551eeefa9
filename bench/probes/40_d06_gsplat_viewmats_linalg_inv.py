# source: nerfstudio-project/gsplat https://github.com/nerfstudio-project/gsplat/commit/187c562b633eb16191e6acb3718b0911a4c3d706 — `Runner.rasterize_splats` in examples/simple_trainer.py (and the 2DGS normal rendering in gsplat/rendering.py) built the view matrices on every training step with `torch.linalg.inv(camtoworlds)`. `linalg.inv` checks the LAPACK/cuSOLVER `info` result on the host to raise on singular input, so each call is a hidden device-to-host sync. The commit "Switch from linalg.inv to the equivalent linalg.inv_ex to avoid unnecessary sync" uses `torch.linalg.inv_ex(camtoworlds).inverse`, which returns the info as a tensor instead of checking it.
import torch
import torch.nn.functional as F


def rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height):
    # minimal pinhole splatting stand-in: project means and accumulate weighted colors
    C = viewmats.shape[0]
    means_h = torch.cat([means, torch.ones_like(means[:, :1])], dim=-1)  # [N, 4]
    means_c = torch.einsum("cij,nj->cni", viewmats, means_h)[..., :3]  # [C, N, 3]
    uv = torch.einsum("cij,cnj->cni", Ks, means_c)
    uv = uv[..., :2] / uv[..., 2:].clamp_min(1e-6)
    px = uv[..., 0].round().long().clamp(0, width - 1)
    py = uv[..., 1].round().long().clamp(0, height - 1)
    flat = (torch.arange(C)[:, None] * height + py) * width + px  # [C, N]
    w = opacities * torch.exp(-scales.norm(dim=-1))  # [N]
    render = torch.zeros(C * height * width, 3, dtype=means.dtype)
    render.index_add_(0, flat.reshape(-1), (w[:, None] * colors).repeat(C, 1))
    return render.view(C, height, width, 3), {"means2d": uv}


class Runner:
    def __init__(self, splats):
        self.splats = splats

    def rasterize_splats(self, camtoworlds, Ks, width, height, **kwargs):
        means = self.splats["means"]  # [N, 3]
        quats = self.splats["quats"]  # [N, 4]
        scales = torch.exp(self.splats["scales"])  # [N, 3]
        opacities = torch.sigmoid(self.splats["opacities"])  # [N,]
        colors = torch.sigmoid(self.splats["colors"])  # [N, 3]
        render_colors, info = rasterization(
            means=means,
            quats=quats,
            scales=scales,
            opacities=opacities,
            colors=colors,
            viewmats=torch.linalg.inv(camtoworlds),  # want: D
            Ks=Ks,  # [C, 3, 3]
            width=width,
            height=height,
        )
        return render_colors, info


class RunnerFixed(Runner):
    def rasterize_splats(self, camtoworlds, Ks, width, height, **kwargs):
        means = self.splats["means"]  # [N, 3]
        quats = self.splats["quats"]  # [N, 4]
        scales = torch.exp(self.splats["scales"])  # [N, 3]
        opacities = torch.sigmoid(self.splats["opacities"])  # [N,]
        colors = torch.sigmoid(self.splats["colors"])  # [N, 3]
        render_colors, info = rasterization(
            means=means,
            quats=quats,
            scales=scales,
            opacities=opacities,
            colors=colors,
            viewmats=torch.linalg.inv_ex(camtoworlds).inverse,  # [C, 4, 4]
            Ks=Ks,  # [C, 3, 3]
            width=width,
            height=height,
        )
        return render_colors, info


if __name__ == "__main__":
    torch.manual_seed(0)
    N = 64
    splats = {
        "means": torch.randn(N, 3) * 0.5,
        "quats": F.normalize(torch.randn(N, 4), dim=-1),
        "scales": torch.full((N, 3), -2.0),
        "opacities": torch.zeros(N),
        "colors": torch.randn(N, 3),
    }
    camtoworlds = torch.eye(4).repeat(2, 1, 1)
    camtoworlds[:, 2, 3] = torch.tensor([-4.0, -5.0])
    Ks = torch.tensor([[40.0, 0.0, 16.0], [0.0, 40.0, 16.0], [0.0, 0.0, 1.0]]).repeat(2, 1, 1)
    a, _ = Runner(splats).rasterize_splats(camtoworlds, Ks, 32, 32)
    b, _ = RunnerFixed(splats).rasterize_splats(camtoworlds, Ks, 32, 32)
    assert torch.allclose(a, b)
    print("ok", tuple(a.shape), float(a.abs().sum()))
