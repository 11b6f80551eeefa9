# source: alibaba/Pai-Megatron-Patch https://github.com/alibaba/Pai-Megatron-Patch/pull/364 — save_mgmodel built each tensor-parallel rank's model_split dict from .view()/slice views of the full weights and save_state_dict torch.save'd it, so every TP shard file contained the full unsplit storages (issue #356); the fix saved torch.save(clone_state_dict(state_dict), ...).
import argparse
import os
import re
import tempfile
from collections.abc import Mapping, Sequence

import numpy as np
import torch


@torch.inference_mode()
def clone_state_dict(elem):
    """clone all tensors in the elem to cpu device."""
    elem_type = type(elem)
    if isinstance(elem, torch.Tensor):
        elem = elem.clone()
    elif isinstance(elem, (np.ndarray, str)):
        pass
    elif isinstance(elem, Mapping):
        elem = dict(elem)
        for k, v in elem.items():
            elem[k] = clone_state_dict(v)
        elem = elem_type(elem)
    elif isinstance(elem, Sequence):
        elem = list(elem)
        for i in range(len(elem)):
            elem[i] = clone_state_dict(elem[i])
        elem = elem_type(elem)
    return elem


def get_checkpoint_name(save_path, iteration, release=True, pipeline_parallel=None, tensor_rank=None):
    directory = "release" if release else f"iter_{iteration:07d}"
    if tensor_rank is None:
        return os.path.join(save_path, directory, "mp_rank_00", "model_optim_rng.pt")
    return os.path.join(save_path, directory, f"mp_rank_{tensor_rank:02d}", "model_optim_rng.pt")


def save_state_dict(args, model, checkpoint_name):
    args.tensor_model_parallel_size = args.target_tensor_model_parallel_size
    args.pipeline_model_parallel_size = args.target_pipeline_model_parallel_size
    state_dict = {}
    state_dict['args'] = args
    state_dict['checkpoint_version'] = 3.0
    state_dict['iteration'] = 0
    state_dict['model'] = model
    os.makedirs(os.path.dirname(checkpoint_name), exist_ok=True)
    print(f'save model part {checkpoint_name}')
    torch.save(state_dict, checkpoint_name)  # want: A


def save_state_dict_fixed(args, model, checkpoint_name):
    state_dict = {}
    state_dict['args'] = args
    state_dict['checkpoint_version'] = 3.0
    state_dict['iteration'] = 0
    state_dict['model'] = model
    os.makedirs(os.path.dirname(checkpoint_name), exist_ok=True)
    torch.save(clone_state_dict(state_dict), checkpoint_name)


def save_mgmodel(args, full_model, save_path, save_fn=save_state_dict):
    head_dim = args.hidden_size // args.num_attention_heads
    group_per_split = args.num_query_groups // args.target_tensor_model_parallel_size
    for k in list(full_model.keys()):
        if full_model[k] is None or "_extra_state" in k:
            full_model.pop(k)
    if (
            args.target_tensor_model_parallel_size == 1
            and args.target_pipeline_model_parallel_size == 1
    ):
        checkpoint_name = get_checkpoint_name(save_path, 0, True)
        save_fn(args, full_model, checkpoint_name)
    elif (
            args.target_tensor_model_parallel_size > 1
            and args.target_pipeline_model_parallel_size == 1
            and args.num_experts is None
    ):
        for tp_rank in range(args.target_tensor_model_parallel_size):
            model_split = {}
            checkpoint_name = get_checkpoint_name(save_path, 0, True, None, tp_rank)
            print(f'tensor_parallel, save model to {checkpoint_name}')
            for k, v in full_model.items():
                if not isinstance(v, torch.Tensor):
                    target_v = v
                elif 'linear_qkv.weight' in k and 'norm' not in k:
                    viewed = v.view(args.num_query_groups, -1, head_dim, args.hidden_size)
                    viewed = viewed[group_per_split * tp_rank: group_per_split * (tp_rank + 1)]
                    target_v = viewed.view(-1, args.hidden_size)
                elif 'linear_qkv.bias' in k and 'norm' not in k:
                    viewed = v.view(args.num_query_groups, -1, head_dim)
                    viewed = viewed[group_per_split * tp_rank: group_per_split * (tp_rank + 1)]
                    target_v = viewed.view(-1)
                elif 'linear_proj' in k or 'linear_fc2' in k:
                    seg = v.shape[1] // args.target_tensor_model_parallel_size
                    target_v = v[:, seg * tp_rank: seg * (tp_rank + 1)]
                elif 'embedding' in k or 'output_layer' in k:
                    seg = v.shape[0] // args.target_tensor_model_parallel_size
                    target_v = v[seg * tp_rank: seg * (tp_rank + 1)]
                elif 'linear_fc1' in k and 'norm' not in k:
                    viewed = v.view(-1, args.ffn_hidden_size, args.hidden_size)
                    seg = args.ffn_hidden_size // args.target_tensor_model_parallel_size
                    target_v = viewed[:, seg * tp_rank: seg * (tp_rank + 1), :].reshape(-1, args.hidden_size)
                else:
                    target_v = v
                model_split[k] = target_v
            save_fn(args, model_split, checkpoint_name)
    else:
        raise ValueError('not support pp convert')
    print(f'megatron model is save to {save_path}')


def build_full_model(args):
    h, ffn, v = args.hidden_size, args.ffn_hidden_size, args.vocab_size
    head_dim = h // args.num_attention_heads
    qkv_rows = args.num_query_groups * (args.num_attention_heads // args.num_query_groups + 2) * head_dim
    sd = {
        'embedding.word_embeddings.weight': torch.randn(v, h),
        'output_layer.weight': torch.randn(v, h),
        'decoder.final_layernorm.weight': torch.ones(h),
    }
    for i in range(args.num_layers):
        p = f'decoder.layers.{i}.'
        sd[p + 'self_attention.linear_qkv.weight'] = torch.randn(qkv_rows, h)
        sd[p + 'self_attention.linear_qkv.bias'] = torch.randn(qkv_rows)
        sd[p + 'self_attention.linear_qkv.layer_norm_weight'] = torch.ones(h)
        sd[p + 'self_attention.linear_proj.weight'] = torch.randn(h, h)
        sd[p + 'mlp.linear_fc1.weight'] = torch.randn(2 * ffn, h)
        sd[p + 'mlp.linear_fc2.weight'] = torch.randn(h, ffn)
        sd[p + 'self_attention.linear_proj._extra_state'] = None
    return sd


if __name__ == "__main__":
    args = argparse.Namespace(
        hidden_size=64, num_attention_heads=8, num_query_groups=4, ffn_hidden_size=128,
        vocab_size=512, num_layers=2, num_experts=None,
        target_tensor_model_parallel_size=4, target_pipeline_model_parallel_size=1,
    )
    for fn in (save_state_dict, save_state_dict_fixed):
        with tempfile.TemporaryDirectory() as d:
            save_mgmodel(args, build_full_model(args), d, save_fn=fn)
            sizes = [os.path.getsize(get_checkpoint_name(d, 0, True, None, r)) for r in range(4)]
            print(fn.__name__, sizes)
