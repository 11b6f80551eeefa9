# source: EleutherAI/DeeperSpeed https://github.com/EleutherAI/DeeperSpeed/pull/33 — PipelineModule.save_state_dict did torch.save(layer.state_dict(), path) per layer while the FP16 optimizer had re-pointed every parameter into one flat per-stage buffer, so each layer file contained the whole stage ("checkpoints quadratic in layers per stage"); the fix copies the tensors (moved to CPU) before saving.
import os
import tempfile

import torch
import torch.nn as nn


def flatten_params_into_buffer(modules):
    # what the fp16 optimizer does: one flat group, params become views into it
    params = [p for m in modules for p in m.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    offset = 0
    for p in params:
        n = p.numel()
        p.data = flat[offset:offset + n].view_as(p)  # maybe: A (intended aliasing into the fp16 flat group)
        offset += n
    return flat


class PipelineModule(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.forward_funcs = nn.ModuleList(layers)
        self._local_start = 0

    def ckpt_layer_path(self, ckpt_dir, local_layer_idx):
        idx = local_layer_idx + self._local_start
        return os.path.join(ckpt_dir, f"layer_{idx:02d}-model_00-model_states.pt")

    def save_state_dict(self, save_dir):
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, "state_dict"):
                continue
            torch.save(layer.state_dict(), model_ckpt_path)  # want: A

    def forward(self, x):
        for layer in self.forward_funcs:
            x = layer(x)
        return x


class PipelineModuleFixed(PipelineModule):
    def save_state_dict(self, save_dir):
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, "state_dict"):
                continue
            # Copy each tensor before saving: params are views into the flattened fp16 group,
            # and torch.save would otherwise write the whole group for every layer.
            orig_state_dict = layer.state_dict()
            final_state_dict = type(orig_state_dict)(
                {k: (v.cpu() if v.is_cuda else v.clone()) for k, v in orig_state_dict.items()}
            )
            torch.save(final_state_dict, model_ckpt_path)


def _build(cls, n_layers=12, width=64):
    torch.manual_seed(0)
    mod = cls([nn.Linear(width, width) for _ in range(n_layers)])
    flat = flatten_params_into_buffer(list(mod.forward_funcs))
    return mod, flat


if __name__ == "__main__":
    mod, flat = _build(PipelineModule)
    mod_fixed, flat_fixed = _build(PipelineModuleFixed)
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        mod.save_state_dict(d1)
        mod_fixed.save_state_dict(d2)
        b = sum(os.path.getsize(os.path.join(d1, f)) for f in os.listdir(d1))
        g = sum(os.path.getsize(os.path.join(d2, f)) for f in os.listdir(d2))
        print("flat group bytes", flat.numel() * flat.element_size())
        print("total layer ckpt bytes: buggy", b, "fixed", g)
        assert b > 5 * g
