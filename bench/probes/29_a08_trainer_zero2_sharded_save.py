# source: huggingface/transformers https://github.com/huggingface/transformers/pull/24489 — under DeepSpeed ZeRO-1/2 the Trainer saved `model.state_dict()` whose bit16 params are views into the flattened parameter groups, so every torch.save'd shard serialised the whole flat buffer (checkpoints several times too large, issue #22822); the fix takes the state dict via `accelerator.get_state_dict`, which clones the tensors before saving.
import os
import tempfile

import torch
from torch import nn


def clone_tensors_for_torch_save(item):
    if torch.is_tensor(item):
        return item.detach().clone()
    if isinstance(item, dict):
        return type(item)({k: clone_tensors_for_torch_save(v) for k, v in item.items()})
    return item


class ZeroStage2Optimizer:
    """Flattens the bit16 params of each group and points every param at a slice of it."""

    def __init__(self, module):
        params = [p for p in module.parameters()]
        self.bit16_groups_flat = torch.cat([p.detach().reshape(-1) for p in params])
        self._update_model_bit16_weights(params)

    def _update_model_bit16_weights(self, params):
        offset = 0
        for p in params:
            n = p.numel()
            p.data = self.bit16_groups_flat[offset:offset + n].view_as(p)  # maybe: A (aliasing into the flat group is intended by ZeRO)
            offset += n


class PreTrainedModel(nn.Module):
    def __init__(self, n_layers=6, hidden=64):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(n_layers))

    def save_pretrained(self, save_directory, state_dict=None, max_shard_size=40_000):
        os.makedirs(save_directory, exist_ok=True)
        if state_dict is None:
            state_dict = self.state_dict()
        shards, current, size = [], {}, 0
        for key, weight in state_dict.items():
            weight_size = weight.numel() * weight.element_size()
            if current and size + weight_size > max_shard_size:
                shards.append(current)
                current, size = {}, 0
            current[key] = weight
            size += weight_size
        shards.append(current)
        for idx, shard in enumerate(shards):
            shard_file = f"pytorch_model-{idx + 1:05d}-of-{len(shards):05d}.bin"
            torch.save(shard, os.path.join(save_directory, shard_file))  # want: A


class Trainer:
    def __init__(self, model, is_deepspeed_enabled=True):
        self.model = model
        self.is_deepspeed_enabled = is_deepspeed_enabled
        if is_deepspeed_enabled:
            self.optimizer = ZeroStage2Optimizer(model)

    def _save(self, output_dir, state_dict=None):
        self.model.save_pretrained(output_dir, state_dict=state_dict)

    def save_model(self, output_dir):
        if self.is_deepspeed_enabled:
            # this takes care of everything as long as we aren't under zero3
            self._save(output_dir)  # maybe: A (fix site: passes no state dict, so the aliased params are saved)
        else:
            self.model.save_pretrained(output_dir)


class TrainerFixed(Trainer):
    def get_state_dict(self):
        return clone_tensors_for_torch_save(self.model.state_dict())

    def save_model(self, output_dir):
        if self.is_deepspeed_enabled:
            state_dict = self.get_state_dict()
            self._save(output_dir, state_dict=state_dict)
        else:
            self.model.save_pretrained(output_dir)


def _dir_bytes(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


if __name__ == "__main__":
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {}
        for cls in (Trainer, TrainerFixed):
            trainer = cls(PreTrainedModel())
            out = os.path.join(tmp, cls.__name__)
            trainer.save_model(out)
            sizes[cls.__name__] = _dir_bytes(out)
            n_files = len(os.listdir(out))
            reloaded = {}
            for f in sorted(os.listdir(out)):
                reloaded.update(torch.load(os.path.join(out, f)))
            assert torch.equal(reloaded["layers.0.weight"], trainer.model.layers[0].weight.detach())
            print(cls.__name__, "shards", n_files, "bytes on disk", sizes[cls.__name__])
        payload = sum(p.numel() * 4 for p in PreTrainedModel().parameters())
        print("payload bytes", payload)
        assert sizes["Trainer"] > 2 * sizes["TrainerFixed"]
