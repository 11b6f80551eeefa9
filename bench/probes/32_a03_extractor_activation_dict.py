# source: ViCCo-Group/thingsvision https://github.com/ViCCo-Group/thingsvision/issues/44 — the extractor's forward hook put the module output itself (a detached alias) into the `activations` dict, so a following ReLU(inplace=True) rewrote the stored features.0 activations (all non-negative); fixed by storing a copy of `output` in the dict.
import numpy as np
import torch
import torch.nn as nn


class TinyAlexNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 5, stride=2, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(inplace=True),
        )
        self.classifier = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class Extractor:
    def __init__(self, model, module_names):
        self.model = model.eval()
        self.activations = {}
        for name, module in self.model.named_modules():
            if name in module_names:
                module.register_forward_hook(self.get_activation(name))

    def get_activation(self, name):
        def hook(model, input, output):
            self.activations[name] = output.detach()  # want: A
        return hook

    @torch.no_grad()
    def extract_features(self, batches, module_name):
        features = []
        for batch in batches:
            self.model(batch)
            act = self.activations[module_name]
            features.append(act)
        return torch.cat(features).flatten(1).numpy()


# ---------------------------------------------------------------- fixed version
class ExtractorFixed(Extractor):
    def get_activation(self, name):
        def hook(model, input, output):
            self.activations[name] = output.detach().clone()
        return hook


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyAlexNet()
    batches = [torch.randn(4, 3, 32, 32) for _ in range(3)]
    bad = Extractor(model, ["features.0"]).extract_features(batches, "features.0")
    model2 = TinyAlexNet()
    model2.load_state_dict(model.state_dict())
    good = ExtractorFixed(model2, ["features.0"]).extract_features(batches, "features.0")
    print("features.0 min (alias):", bad.min(), " (copy):", good.min())
    assert bad.min() >= 0 and good.min() < 0
    assert np.allclose(np.maximum(good, 0), bad)
