# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/1326 — PipelineModule.save_state_dict did torch.save(layer.state_dict(), path) while ZeRO had re-pointed every parameter's .data at a slice of one big flattened fp16 buffer, so each per-layer checkpoint file carried the whole flat buffer; the fix cloned every state_dict value before torch.save.
import os
import tempfile

import torch
import torch.nn as nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


class LayerSpec:
    def __init__(self, typename, *module_args):
        self.typename = typename
        self.module_args = module_args

    def build(self):
        return self.typename(*self.module_args)


class PipelineModule(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.forward_funcs = []
        for idx, layer in enumerate(layers):
            if isinstance(layer, LayerSpec):
                module = layer.build()
                self.add_module(str(idx), module)
                self.forward_funcs.append(module)
            elif isinstance(layer, nn.Module):
                self.add_module(str(idx), layer)
                self.forward_funcs.append(layer)
            else:
                self.forward_funcs.append(layer)

    def forward(self, x):
        for f in self.forward_funcs:
            x = f(x)
        return x

    def ckpt_layer_path(self, ckpt_dir, local_layer_idx):
        return os.path.join(ckpt_dir, f'layer_{local_layer_idx:02d}-model_states.pt')

    def save_state_dict(self, save_dir):
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, 'state_dict'):
                continue
            torch.save(layer.state_dict(), model_ckpt_path)  # want: A

    def save_state_dict_fixed(self, save_dir):
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, 'state_dict'):
                continue
            # We pass cloned tensors to torch.save() to avoid checkpoint bloat which occurs because torch.save()
            # saves the underlying storage rather than the slice of the storage corresponding to individual tensors.
            orig_state_dict = layer.state_dict()
            final_state_dict = type(orig_state_dict)(
                {k: v.clone()
                 for k,
                 v in orig_state_dict.items()})
            torch.save(final_state_dict, model_ckpt_path)


class FP16_DeepSpeedZeroOptimizer:
    """Just the part of ZeRO stage 1/2 that flattens the bit16 params into one buffer."""

    def __init__(self, init_optimizer):
        self.optimizer = init_optimizer
        self.flatten = _flatten_dense_tensors
        self.unflatten = _unflatten_dense_tensors
        self.bit16_groups = []
        self.round_robin_bit16_groups = []
        self.bit16_groups_flat = []
        for i, param_group in enumerate(self.optimizer.param_groups):
            trainable_parameters = [p for p in param_group['params'] if p.requires_grad]
            self.bit16_groups.append(trainable_parameters)
            self.round_robin_bit16_groups.append(trainable_parameters)
            self.bit16_groups_flat.append(self.flatten(self.round_robin_bit16_groups[i]))
            self._update_model_bit16_weights(i)

    def _update_model_bit16_weights(self, group_index):
        updated_params = self.unflatten(self.bit16_groups_flat[group_index],
                                        self.round_robin_bit16_groups[group_index])
        for p, q in zip(self.round_robin_bit16_groups[group_index], updated_params):
            p.data = q.data


if __name__ == "__main__":
    torch.manual_seed(0)
    specs = [LayerSpec(nn.Linear, 128, 128) for _ in range(8)] + [torch.tanh]
    net = PipelineModule(specs)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    zero = FP16_DeepSpeedZeroOptimizer(opt)
    net(torch.randn(2, 128))
    with tempfile.TemporaryDirectory() as d:
        net.save_state_dict(d)
        print("buggy  :", sorted(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))[:3])
    with tempfile.TemporaryDirectory() as d:
        net.save_state_dict_fixed(d)
        print("fixed  :", sorted(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))[:3])
