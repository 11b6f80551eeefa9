# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/issues/2389 — With ZeRO-2 the MoE expert parameters of a layer are views into one shared flat storage, and DeepSpeedEngine._save_moe_checkpoint put `moe_state_dict.pop(key)` (those views) into a per-expert dict that it torch.save'd to layer_N_expert_E_*_model_states.pt. torch.save serializes the whole underlying storage, so every expert file carried the storage of all experts of the layer ("Bloated MoE expert checkpoint files"). The fix (PR #2411) stores `moe_state_dict.pop(key).clone().detach()` to truncate the shared storage.
import os
import re
import tempfile
from collections import defaultdict

import torch


class Experts(torch.nn.Module):
    def __init__(self, expert, num_local_experts):
        super().__init__()
        self.deepspeed_experts = torch.nn.ModuleList(
            [torch.nn.Linear(expert.in_features, expert.out_features) for _ in range(num_local_experts)])


class MoE(torch.nn.Module):
    def __init__(self, hidden_size, expert, num_experts):
        super().__init__()
        self.num_local_experts = num_experts
        self.deepspeed_moe = torch.nn.Module()
        self.deepspeed_moe.gate = torch.nn.Module()
        self.deepspeed_moe.gate.wg = torch.nn.Linear(hidden_size, num_experts, bias=False)
        self.deepspeed_moe.experts = Experts(expert, num_experts)


def flatten_like_zero2(module: torch.nn.Module):  # ZeRO-2 keeps params as views into one flat buffer
    params = list(module.parameters())
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    offset = 0
    for p in params:
        n = p.numel()
        p.data = flat.narrow(0, offset, n).view_as(p)
        offset += n
    return flat


class CheckpointEngine:
    def save(self, state_dict, path: str):
        torch.save(state_dict, path)


class DeepSpeedEngine:
    def __init__(self, module):
        self.module = module
        self.checkpoint_engine = CheckpointEngine()

    @staticmethod
    def _get_expert_ckpt_name(checkpoints_path, layer_id, expert_id, tag):
        return os.path.join(checkpoints_path, str(tag), f'layer_{layer_id}_expert_{expert_id}_mp_rank_00_model_states.pt')

    def _save_moe_checkpoint(self, save_dir, tag, expp_rank=0):
        moe_layer_id = 0
        for n_module, module in self.module.named_modules():
            if isinstance(module, MoE):
                num_local_experts = module.num_local_experts
                moe_state_dict = {}
                for n, p in module.state_dict().items():
                    if 'expert' in n and 'moe.gate.wg.weight' not in n:
                        moe_state_dict[n_module + '.' + n] = p
                moe_str_prefix = '.deepspeed_moe.experts.deepspeed_experts.'
                experts_state_dict = defaultdict(dict)
                for key in list(moe_state_dict.keys()):
                    local_expert_id = re.match(f".*{moe_str_prefix}([0-9]+).*", key).group(1)
                    global_expert_id = expp_rank * num_local_experts + int(local_expert_id)
                    expert_key = key.replace(f'{moe_str_prefix}{local_expert_id}', f'{moe_str_prefix}{global_expert_id}')
                    experts_state_dict[str(global_expert_id)][expert_key] = moe_state_dict.pop(key)  # want: A
                for global_expert_id, expert_state_dict in experts_state_dict.items():
                    moe_save_path = self._get_expert_ckpt_name(save_dir, moe_layer_id, global_expert_id, tag)
                    self.checkpoint_engine.save(expert_state_dict, moe_save_path)
                moe_layer_id += 1


class DeepSpeedEngineFixed(DeepSpeedEngine):
    def _save_moe_checkpoint(self, save_dir, tag, expp_rank=0):
        moe_layer_id = 0
        for n_module, module in self.module.named_modules():
            if isinstance(module, MoE):
                num_local_experts = module.num_local_experts
                moe_state_dict = {}
                for n, p in module.state_dict().items():
                    if 'expert' in n and 'moe.gate.wg.weight' not in n:
                        moe_state_dict[n_module + '.' + n] = p
                moe_str_prefix = '.deepspeed_moe.experts.deepspeed_experts.'
                experts_state_dict = defaultdict(dict)
                for key in list(moe_state_dict.keys()):
                    local_expert_id = re.match(f".*{moe_str_prefix}([0-9]+).*", key).group(1)
                    global_expert_id = expp_rank * num_local_experts + int(local_expert_id)
                    expert_key = key.replace(f'{moe_str_prefix}{local_expert_id}', f'{moe_str_prefix}{global_expert_id}')
                    # truncating extra tensor (shared) storage
                    truncated = moe_state_dict.pop(key).clone().detach()
                    experts_state_dict[str(global_expert_id)][expert_key] = truncated
                for global_expert_id, expert_state_dict in experts_state_dict.items():
                    moe_save_path = self._get_expert_ckpt_name(save_dir, moe_layer_id, global_expert_id, tag)
                    self.checkpoint_engine.save(expert_state_dict, moe_save_path)
                moe_layer_id += 1


def _save(engine_cls, d):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), MoE(32, torch.nn.Linear(32, 32), num_experts=8))
    flatten_like_zero2(model[1])
    os.makedirs(os.path.join(d, "global_step1"), exist_ok=True)
    engine_cls(model)._save_moe_checkpoint(d, "global_step1")
    return os.path.join(d, "global_step1", "layer_0_expert_3_mp_rank_00_model_states.pt")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        bad, good = _save(DeepSpeedEngine, d1), _save(DeepSpeedEngineFixed, d2)
        expert = torch.load(good)
        needed = sum(t.numel() * t.element_size() for t in expert.values())
        stored = sum(t.untyped_storage().nbytes() for t in torch.load(bad).values()) / len(expert)
        assert stored > needed * 4, (stored, needed)  # each file holds the whole layer's flat buffer
        assert os.path.getsize(bad) > 4 * os.path.getsize(good), (os.path.getsize(bad), os.path.getsize(good))
        for k, v in torch.load(bad).items():
            assert torch.equal(v, expert[k])
    print("ok")
