# source: ViCCo-Group/thingsvision https://github.com/ViCCo-Group/thingsvision/pull/150 — with extract_cls_token, extract_batch returned act[:, 0, :] (a view of the hooked [B, T, D] activation) and extract_features kept every batch's result until the final concat; fix: act[:, 0, :].clone()
import torch
from torch import nn


class HookedExtractor:
    """Runs `model`, grabs one module's output with a forward hook, keeps the [CLS] row."""

    def __init__(self, model: nn.Module, module_name: str, extract_cls_token: bool = True):
        self.model = model.eval()
        self.module_name = module_name
        self.extract_cls_token = extract_cls_token
        self.activations = {}
        self._handle = None

    def _get_activation(self, name):
        def hook(module, inputs, output):
            act = output[0] if isinstance(output, tuple) else output
            self.activations[name] = act.detach()

        return hook

    def _register(self):
        module = dict(self.model.named_modules())[self.module_name]
        self._handle = module.register_forward_hook(self._get_activation(self.module_name))

    @staticmethod
    def flatten_acts(act: torch.Tensor) -> torch.Tensor:
        return act.view(act.size(0), -1)

    @torch.no_grad()
    def extract_batch(self, batch: torch.Tensor) -> torch.Tensor:
        self._register()
        self.model(batch)
        self._handle.remove()
        act = self.activations.pop(self.module_name)
        if self.extract_cls_token:
            act = act[:, 0, :]
        return self.flatten_acts(act)

    def extract_features(self, batches) -> torch.Tensor:
        features = []
        for batch in batches:
            features.append(self.extract_batch(batch))  # want: A
        return torch.cat(features)

    def extract_features_fixed(self, batches) -> torch.Tensor:
        features = []
        for batch in batches:
            features.append(self.extract_batch(batch).clone())
        return torch.cat(features)

    def feature_dim(self, sample: torch.Tensor) -> int:
        probe = self.extract_batch(sample[:1])
        return probe.shape[-1]


class TinyViT(nn.Module):
    def __init__(self, tokens=16, dim=32):
        super().__init__()
        self.tokens = tokens
        self.patch = nn.Linear(3, dim)
        self.blocks = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        return self.blocks(self.patch(x))


if __name__ == "__main__":
    model = TinyViT()
    ex = HookedExtractor(model, "blocks")
    batches = [torch.randn(4, 16, 3) for _ in range(3)]
    kept = []
    for b in batches:
        kept.append(ex.extract_batch(b))
    for f in kept:
        assert f.untyped_storage().nbytes() > f.numel() * f.element_size()  # pins [4, 16, 32]
    owned = ex.extract_batch(batches[0]).clone()
    assert owned.untyped_storage().nbytes() == owned.numel() * owned.element_size()
    assert ex.extract_features(batches).shape == (12, 32)
    assert ex.feature_dim(batches[0]) == 32
    print("ok")
