# source: ViCCo-Group/thingsvision https://github.com/ViCCo-Group/thingsvision/pull/150 — PyTorchExtractor._extract_batch sliced the hooked activation down to the [cls] token with act[:, 0, :] and returned that view, which BaseExtractor.extract_features appended to its features list (pinning every full [B, T, D] activation); the fix made the slice act[:, 0, :].clone().
import os
import tempfile
from typing import Callable, Dict, Iterator, List, Optional, Union

import numpy as np
import torch
import torch.nn as nn

Array = np.ndarray


class BaseExtractor:
    def __init__(self, device, preprocess) -> None:
        self.device = device
        self.preprocess = preprocess

    def _extract_batch(self, batch, module_name: str, flatten_acts: bool):
        raise NotImplementedError

    @staticmethod
    def _to_numpy(features: torch.Tensor) -> Array:
        return features.numpy()

    def extract_features(
        self,
        batches: Iterator,
        module_name: str,
        flatten_acts: bool,
        output_type: str = "ndarray",
        output_dir: Optional[str] = None,
        step_size: Optional[int] = None,
    ):
        if output_dir and step_size is None:
            step_size = 2
        features = []
        image_ct, last_image_ct = 0, 0
        for i, batch in enumerate(batches, start=1):
            features.append(
                self._extract_batch(
                    batch=batch, module_name=module_name, flatten_acts=flatten_acts
                )
            )
            image_ct += len(batch)
            if output_dir and (i % step_size == 0):
                features_subset = torch.cat(features)
                if output_type == "ndarray":
                    features_subset = self._to_numpy(features_subset)
                    features_subset_file = os.path.join(
                        output_dir, f"features_{last_image_ct}-{image_ct}.npy"
                    )
                    np.save(features_subset_file, features_subset)
                else:
                    features_subset_file = os.path.join(
                        output_dir, f"features_{last_image_ct}-{image_ct}.pt"
                    )
                    torch.save(features_subset, features_subset_file)
                features = []
                last_image_ct = image_ct
        if output_dir is None:
            features = torch.cat(features)
            if output_type == "ndarray":
                features = self._to_numpy(features)
            print(f"...Features shape: {features.shape}")
        return features


class PyTorchExtractor(BaseExtractor):
    def __init__(self, model_name, model, device="cpu", model_parameters=None, preprocess=None):
        super().__init__(device, preprocess)
        self.model_name = model_name
        self.model = model
        self.model_parameters = model_parameters or {}
        self.activations = {}
        self.hook_handle = None
        if isinstance(self.model_parameters, dict):
            if "extract_cls_token" in self.model_parameters:
                self.extract_cls_token = self.model_parameters["extract_cls_token"]
        self.model.eval()

    def extract_features(self, batches, module_name, flatten_acts, output_type="ndarray",
                         output_dir=None, step_size=None):
        self.model = self.model.to(self.device)
        self.activations = {}
        self.register_hook(module_name=module_name)
        features = super().extract_features(
            batches=batches,
            module_name=module_name,
            flatten_acts=flatten_acts,
            output_type=output_type,
            output_dir=output_dir,
            step_size=step_size,
        )
        if self.hook_handle:
            self._unregister_hook()
        return features

    def get_activation(self, name: str) -> Callable:
        """Store copy of activations for a specific layer of the model."""

        def hook(model, input, output) -> None:
            # store copy of tensor rather than tensor itself
            if isinstance(output, tuple):
                act = output[0]
            else:
                act = output
            try:
                self.activations[name] = act.clone().detach()
            except AttributeError:
                self.activations[name] = act.clone()

        return hook

    def register_hook(self, module_name: str) -> None:
        for n, m in self.model.named_modules():
            if n == module_name:
                self.hook_handle = m.register_forward_hook(self.get_activation(n))
                break

    def _unregister_hook(self) -> None:
        self.hook_handle.remove()

    @torch.no_grad()
    def _extract_batch(self, batch, module_name: str, flatten_acts: bool):
        # move current batch to torch device
        batch = batch.to(self.device)
        _ = self.forward(batch)
        act = self.activations[module_name]
        if hasattr(self, "extract_cls_token"):
            # we are only interested in the representations of the first token, i.e., [cls] token
            act = act[:, 0, :]  # want: A
        if flatten_acts:
            act = self.flatten_acts(act)
        if act.is_cuda or act.get_device() >= 0:
            torch.cuda.empty_cache()
            act = act.cpu()
        return act

    def forward(self, batch):
        return self.model(batch)

    @staticmethod
    def flatten_acts(act):
        return act.view(act.size(0), -1)


class FixedPyTorchExtractor(PyTorchExtractor):
    """The merged version of _extract_batch."""

    @torch.no_grad()
    def _extract_batch(self, batch, module_name: str, flatten_acts: bool):
        batch = batch.to(self.device)
        _ = self.forward(batch)
        act = self.activations[module_name]
        if hasattr(self, "extract_cls_token"):
            act = act[:, 0, :].clone()
        if flatten_acts:
            act = self.flatten_acts(act)
        if act.is_cuda or act.get_device() >= 0:
            act = act.cpu()
        return act


class TinyViT(nn.Module):
    def __init__(self, dim=64, patch=4):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(3 * patch * patch, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.encoder = nn.TransformerEncoderLayer(dim, 4, 128, batch_first=True)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        b = x.size(0)
        p = x.unfold(2, self.patch, self.patch).unfold(3, self.patch, self.patch)
        p = p.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, 3 * self.patch * self.patch)
        tokens = torch.cat([self.cls.expand(b, -1, -1), self.proj(p)], dim=1)
        tokens = self.encoder(tokens)
        return self.head(tokens[:, 0])


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [torch.randn(8, 3, 32, 32) for _ in range(4)]
    for cls in (PyTorchExtractor, FixedPyTorchExtractor):
        ex = cls("vit_tiny", TinyViT(), model_parameters={"extract_cls_token": True})
        feats = ex.extract_features(iter(batches), module_name="encoder", flatten_acts=False,
                                    output_type="tensor")
        print(cls.__name__, tuple(feats.shape))
    with tempfile.TemporaryDirectory() as d:
        ex = PyTorchExtractor("vit_tiny", TinyViT(), model_parameters={"extract_cls_token": True})
        ex.extract_features(iter(batches), module_name="encoder", flatten_acts=True,
                            output_dir=d, step_size=2)
        print(sorted(os.listdir(d)))
