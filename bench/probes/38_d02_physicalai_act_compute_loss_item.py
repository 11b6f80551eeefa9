# source: open-edge-platform/physical-ai-studio https://github.com/open-edge-platform/physical-ai-studio/pull/877 — ACT.forward (training mode) calls compute_loss(), which filled the returned loss_dict with `l1_loss.item()`, `mean_kld.item()` and `loss.item()`, forcing a device-to-host sync (and a torch.compile graph break) inside every training forward. The fix returns the detached loss tensors instead of Python floats, so the scalar is only read lazily at the logging boundary.
from __future__ import annotations

from dataclasses import dataclass
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

ACTION = "action"
STATE = "observation.state"
EXTRA = "extra"


@dataclass
class _ACTConfig:
    state_dim: int = 6
    action_dim: int = 6
    chunk_size: int = 8
    dim_model, latent_dim = 32, 4
    use_vae: bool = True
    kl_weight: float = 10.0


class FeatureNormalizeTransform(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("std", torch.ones(dim))

    def forward(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {**batch, STATE: (batch[STATE] - self.mean) / self.std}


class _ACT(nn.Module):
    def __init__(self, config: _ACTConfig):
        super().__init__()
        self.config = config
        self.vae_encoder = nn.Linear(config.state_dim + config.action_dim, 2 * config.latent_dim)
        self.encoder = nn.Linear(config.state_dim + config.latent_dim, config.dim_model)
        self.action_head = nn.Linear(config.dim_model, config.chunk_size * config.action_dim)

    def forward(self, batch: dict[str, torch.Tensor]):
        state, mu, log_sigma_x2 = batch[STATE], None, None
        latent_sample = state.new_zeros(state.shape[0], self.config.latent_dim)
        if self.config.use_vae and self.training:
            mu, log_sigma_x2 = self.vae_encoder(torch.cat([state, batch[ACTION].mean(1)], -1)).chunk(2, -1)
            latent_sample = mu + log_sigma_x2.div(2).exp() * torch.randn_like(mu)
        x = torch.relu(self.encoder(torch.cat([state, latent_sample], -1)))
        return self.action_head(x).view(-1, self.config.chunk_size, self.config.action_dim), (mu, log_sigma_x2)


class ACT(nn.Module):
    """Action Chunking Transformer (ACT) model."""
    def __init__(self, config: _ACTConfig):
        super().__init__()
        self._config = config
        self._input_normalizer = FeatureNormalizeTransform(config.state_dim)
        self._model = _ACT(config)

    def forward(self, batch: dict[str, torch.Tensor]):
        if self._model.training:
            return self.compute_loss(batch)
        return self.predict_action_chunk(batch)

    def compute_loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = self._input_normalizer(batch)
        actions_hat, (mu_hat, log_sigma_x2_hat) = self._model(batch)
        l1_loss = (
            F.l1_loss(batch[ACTION], actions_hat, reduction="none") * ~batch[EXTRA + ".action_is_pad"].unsqueeze(-1)
        ).mean()
        loss_dict: dict[str, float] = {"l1_loss": l1_loss.item()}  # want: D
        if self._config.use_vae:
            mean_kld = (-0.5 * (1 + log_sigma_x2_hat - mu_hat.pow(2) - (log_sigma_x2_hat).exp())).sum(-1).mean()
            loss_dict["kld_loss"] = mean_kld.item()  # want: D
            loss = l1_loss + mean_kld * self._config.kl_weight
        else:
            loss = l1_loss
        loss_dict["loss"] = loss.item()  # want: D
        return loss, loss_dict

    @torch.no_grad()
    def predict_action_chunk(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        batch = self._input_normalizer(batch)
        return self._model(batch)[0]


class ACTFixed(ACT):
    def compute_loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor | float]]:
        batch = self._input_normalizer(batch)
        actions_hat, (mu_hat, log_sigma_x2_hat) = self._model(batch)
        l1_loss = (
            F.l1_loss(batch[ACTION], actions_hat, reduction="none") * ~batch[EXTRA + ".action_is_pad"].unsqueeze(-1)
        ).mean()
        loss_dict: dict[str, torch.Tensor | float] = {"l1_loss": l1_loss.detach()}
        if self._config.use_vae:
            mean_kld = (-0.5 * (1 + log_sigma_x2_hat - mu_hat.pow(2) - (log_sigma_x2_hat).exp())).sum(-1).mean()
            loss_dict["kld_loss"] = mean_kld.detach()
            loss = l1_loss + mean_kld * self._config.kl_weight
        else:
            loss = l1_loss
        loss_dict["loss"] = loss.detach()
        return loss, loss_dict


if __name__ == "__main__":
    config, _ = _ACTConfig(), torch.manual_seed(0)
    model, model_fixed = ACT(config).train(), ACTFixed(config).train()
    model_fixed.load_state_dict(model.state_dict())

    is_pad = torch.arange(config.chunk_size).expand(4, -1) >= config.chunk_size - 2
    batch = {STATE: torch.randn(4, config.state_dim), ACTION: torch.randn(4, config.chunk_size, config.action_dim),
             EXTRA + ".action_is_pad": is_pad}
    torch.manual_seed(1)
    loss, loss_dict = model(batch)
    torch.manual_seed(1)
    loss_fixed, loss_dict_fixed = model_fixed(batch)
    assert torch.allclose(loss, loss_fixed)
    assert all(abs(loss_dict[k] - float(loss_dict_fixed[k])) < 1e-5 for k in loss_dict)
    assert isinstance(loss_dict_fixed["l1_loss"], torch.Tensor) and not loss_dict_fixed["l1_loss"].requires_grad
    print("ok", {k: round(v, 4) for k, v in loss_dict.items()})
