# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/1324 — PipelineModule.save_state_dict did `torch.save(layer.state_dict(), path)` per layer, but with bf16/ZeRO flattening each param is a slice of one huge flat buffer, so every layer file serialised the whole buffer; the fix saves `{k: v.clone() for k, v in orig_state_dict.items()}` instead.
import os
import tempfile
import torch
import torch.nn as nn


class PipelineModule(nn.Module):

    def __init__(self, layers):
        super().__init__()
        self.forward_funcs = []
        for idx, layer in enumerate(layers):
            self.add_module(str(idx), layer)
            self.forward_funcs.append(layer)
        self._local_start = 0
        self._num_layers = len(layers)

    def forward(self, x):
        for f in self.forward_funcs:
            x = f(x)
        return x

    def ckpt_layer_path(self, ckpt_dir, local_layer_idx):
        idx = local_layer_idx + self._local_start
        return os.path.join(ckpt_dir, f'layer_{idx:02d}-model_states.pt')

    def save_state_dict(self, save_dir):
        os.makedirs(save_dir, exist_ok=True)
        layer_offset = self._local_start
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, 'state_dict'):
                continue
            torch.save(layer.state_dict(), model_ckpt_path)  # want: A


class PipelineModuleFixed(PipelineModule):

    def save_state_dict(self, save_dir):
        os.makedirs(save_dir, exist_ok=True)
        layer_offset = self._local_start
        for idx, layer in enumerate(self.forward_funcs):
            model_ckpt_path = self.ckpt_layer_path(save_dir, idx)
            if not hasattr(layer, 'state_dict'):
                continue
            # We pass cloned tensors to torch.save() to avoid checkpoint bloat which occurs because torch.save()
            # saves the underlying storage rather than the slice of the storage corresponding to individual tensors.
            # This is a problem in DeepSpeed because we often allocate tensors using slices of large flattened buffers.
            orig_state_dict = layer.state_dict()
            final_state_dict = type(orig_state_dict)({k: v.clone() for k, v in orig_state_dict.items()})
            torch.save(final_state_dict, model_ckpt_path)


def flatten_params_into_buffer(module):
    """What the bf16 / ZeRO optimizers do: one contiguous buffer, params become views."""
    params = [p for p in module.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    off = 0
    for p in params:
        n = p.numel()
        p.data = flat.narrow(0, off, n).view_as(p)
        off += n
    return flat


def dir_bytes(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (PipelineModule, PipelineModuleFixed):
        torch.manual_seed(0)
        model = cls([nn.Linear(64, 64) for _ in range(8)])
        flat = flatten_params_into_buffer(model)
        payload = flat.numel() * flat.element_size()
        with tempfile.TemporaryDirectory() as d:
            model.save_state_dict(d)
            total = dir_bytes(d)
            sd = torch.load(os.path.join(d, 'layer_03-model_states.pt'))
            assert torch.equal(sd['weight'], model.forward_funcs[3].weight)
        print('%-20s params %7d B, 8 layer files total %8d B' % (cls.__name__, payload, total))
        if cls is PipelineModule:
            assert total > 4 * payload
        else:
            assert total < 2 * payload
