# source: Lightning-AI/pytorch-lightning https://github.com/Lightning-AI/pytorch-lightning/pull/21191 — `ModelPruning.apply_lottery_ticket_hypothesis` resets the surviving weights to their initial values via `_copy_param`, which did `dst = getattr(new, name)` and `dst.data = src.data.to(dst.device)`. Once `torch.nn.utils.prune` has been applied, `module.weight` is only a plain tensor recomputed from `weight_orig * weight_mask` by a forward pre-hook, so the reset wrote into that temporary and the next forward restored the trained values. The fix copies into `name + "_orig"` when the parameter has been pruned.
from copy import deepcopy
from typing import Any, Optional, TypedDict

import torch
import torch.nn.utils.prune as pytorch_prune
from torch import Tensor, nn


class _LayerRef(TypedDict):
    data: nn.Module
    names: list


class ModelPruning:
    def __init__(self, parameters_to_prune, amount: float = 0.5, use_lottery_ticket_hypothesis: bool = True,
                 resample_parameters: bool = False) -> None:
        self._parameters_to_prune = list(parameters_to_prune)
        self.amount = amount
        self._use_lottery_ticket_hypothesis = use_lottery_ticket_hypothesis
        self._resample_parameters = resample_parameters
        self._original_layers: Optional[dict[int, _LayerRef]] = None
        self.pruning_fn = pytorch_prune.l1_unstructured

    @staticmethod
    def _copy_param(new: nn.Module, old: nn.Module, name: str) -> None:
        dst = getattr(new, name)  # maybe: B (after pruning this is the recomputed weight, not weight_orig)
        src = getattr(old, name)
        if dst is None or src is None or not isinstance(dst, Tensor) or not isinstance(src, Tensor):
            return
        dst.data = src.data.to(dst.device)  # want: B

    def apply_lottery_ticket_hypothesis(self) -> None:
        assert self._original_layers is not None
        for d in self._original_layers.values():
            copy = d["data"]
            names = d["names"]
            if self._resample_parameters and hasattr(copy, "reset_parameters") and callable(copy.reset_parameters):
                copy = deepcopy(copy)  # keep the original parameters
                copy.reset_parameters()
            for i, name in names:
                new, _ = self._parameters_to_prune[i]
                self._copy_param(new, copy, name)

    def _apply_local_pruning(self, amount: float) -> None:
        for module, name in self._parameters_to_prune:
            self.pruning_fn(module, name=name, amount=amount)

    def setup(self, pl_module: nn.Module) -> None:
        if self._use_lottery_ticket_hypothesis:
            # group modules by id. Each entry has a copy of the initial data
            # and a list of the associated parameter names to prune
            self._original_layers = {}
            for i, (module, name) in enumerate(self._parameters_to_prune):
                id_ = id(module)
                self._original_layers.setdefault(id_, _LayerRef(data=deepcopy(module), names=[]))
                self._original_layers[id_]["names"].append((i, name))

    def on_train_epoch_end(self, pl_module: nn.Module) -> None:
        self._apply_local_pruning(self.amount)
        if self._use_lottery_ticket_hypothesis:
            self.apply_lottery_ticket_hypothesis()


class ModelPruningFixed(ModelPruning):
    @staticmethod
    def _copy_param(new: nn.Module, old: nn.Module, name: str) -> None:
        # Check if the parameter has been pruned (has _orig suffix)
        dst = getattr(new, name + "_orig") if hasattr(new, name + "_orig") else getattr(new, name)
        src = getattr(old, name)
        if dst is None or src is None or not isinstance(dst, Tensor) or not isinstance(src, Tensor):
            return
        dst.data = src.data.to(dst.device)


def run(callback_cls: Any):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    init_weight = model[0].weight.detach().clone()
    callback = callback_cls([(model[0], "weight")], amount=0.5)
    callback.setup(model)
    with torch.no_grad():  # stand-in for an epoch of training
        model[0].weight.add_(1.0)
    callback.on_train_epoch_end(model)
    model(torch.randn(3, 4))  # the pruning pre-hook recomputes weight = weight_orig * weight_mask
    return model[0], init_weight


if __name__ == "__main__":
    layer, init_weight = run(ModelPruning)
    assert torch.allclose(layer.weight_orig, init_weight + 1.0)
    layer, init_weight = run(ModelPruningFixed)
    assert torch.allclose(layer.weight_orig, init_weight)
    assert torch.allclose(layer.weight, init_weight * layer.weight_mask)
    print("ok")
