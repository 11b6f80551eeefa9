# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/issues/549 — With PipelineModule and an FP16 optimizer, every parameter of a stage is re-pointed (`p.data = q.data`) into one flattened fp16 buffer per param group, and `PipelineModule.save_state_dict` then does `torch.save(layer.state_dict(), ...)` once per layer. Each layer's state_dict tensors are views of the stage-wide flat buffer, so every layer file contains the whole stage and checkpoint size grows quadratically with layers per stage. It was acknowledged and fixed by cloning each state_dict tensor before saving.
import os
import tempfile

import torch
from torch import nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


class FP16_Optimizer:
    def __init__(self, init_optimizer):
        self.optimizer = init_optimizer
        self.fp16_groups = []
        self.fp16_groups_flat = []
        for param_group in self.optimizer.param_groups:
            self.fp16_groups.append(param_group["params"])
            self.fp16_groups_flat.append(_flatten_dense_tensors([p.clone().detach() for p in self.fp16_groups[-1]]))
            updated_params = _unflatten_dense_tensors(self.fp16_groups_flat[-1], self.fp16_groups[-1])
            for p, q in zip(self.fp16_groups[-1], updated_params):
                p.data = q.data


class PipelineModule(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.forward_funcs = nn.ModuleList(layers)

    def ckpt_layer_path(self, ckpt_dir, local_layer_idx):
        return os.path.join(ckpt_dir, f"layer_{local_layer_idx:02d}-model_states.pt")

    def save_state_dict(self, save_dir):
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, "state_dict"):
                continue
            torch.save(layer.state_dict(), model_ckpt_path)  # want: A


class PipelineModuleFixed(PipelineModule):
    def save_state_dict(self, save_dir):
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, "state_dict"):
                continue
            # We pass cloned tensors to torch.save() to avoid checkpoint bloat which occurs because torch.save()
            # saves the underlying storage rather than the slice of the storage corresponding to individual tensors.
            orig_state_dict = layer.state_dict()
            final_state_dict = type(orig_state_dict)({k: v.clone() for k, v in orig_state_dict.items()})
            torch.save(final_state_dict, model_ckpt_path)


def build(cls):
    torch.manual_seed(0)
    module = cls([nn.Linear(64, 64) for _ in range(8)])
    FP16_Optimizer(torch.optim.SGD(module.parameters(), lr=0.1))
    return module


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d_bug, tempfile.TemporaryDirectory() as d_fix:
        buggy = build(PipelineModule)
        buggy.save_state_dict(d_bug)
        fixed = build(PipelineModuleFixed)
        fixed.save_state_dict(d_fix)

        layer_bytes = sum(p.numel() * p.element_size() for p in buggy.forward_funcs[0].parameters())
        w = buggy.forward_funcs[0].weight
        assert w.untyped_storage().nbytes() > w.numel() * w.element_size()
        size_bug = os.path.getsize(buggy.ckpt_layer_path(d_bug, 0))
        size_fix = os.path.getsize(fixed.ckpt_layer_path(d_fix, 0))
        assert size_bug > 6 * layer_bytes
        assert size_fix < 2 * layer_bytes
        sd_bug = torch.load(buggy.ckpt_layer_path(d_bug, 3))
        sd_fix = torch.load(fixed.ckpt_layer_path(d_fix, 3))
        assert all(torch.equal(sd_bug[k], sd_fix[k]) for k in sd_bug)
    print("ok")
