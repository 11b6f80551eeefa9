# source: huggingface/transformers https://github.com/huggingface/transformers/issues/25911 — checkpoint_reshaping_and_interoperability.py split each GPT-2 weight with torch.chunk per target TP rank and stored params[i] (a view) in every rank's state dict before torch.save, so each rank file serialised the whole unsplit tensor; the fix stores params[i].clone().
import io
import re

import torch

layer_re = re.compile(r"transformer.h\.(\d+)\.([a-z0-9_.]+)\.([a-z]+)")

transformers_to_megatron = {
    "attn.c_attn": "self_attention.query_key_value",
    "attn.c_proj": "self_attention.dense",
    "mlp.c_fc": "mlp.dense_h_to_4h",
    "mlp.c_proj": "mlp.dense_4h_to_h",
}

tensor_parallel_params = [
    "self_attention.query_key_value.weight",
    "self_attention.query_key_value.bias",
    "self_attention.dense.weight",
    "mlp.dense_h_to_4h.weight",
    "mlp.dense_h_to_4h.bias",
    "mlp.dense_4h_to_h.weight",
]


def get_element_from_dict_by_path(d, path):
    for k in path.split("."):
        if k not in d:
            d[k] = {}
        d = d[k]
    return d


def convert_checkpoint_from_transformers_to_megatron(state_dict, target_tp):
    output_state_dict = [{} for _ in range(target_tp)]
    for name, params in state_dict.items():
        m = layer_re.match(name)
        if m is None:
            continue
        layer, op_name, weight_or_bias = int(m.group(1)), m.group(2), m.group(3)
        if op_name not in transformers_to_megatron:
            continue
        out_name = transformers_to_megatron[op_name]
        if weight_or_bias == "weight":
            params = params.transpose(0, 1).contiguous()
        layer_name = f"layers.{layer}.{out_name}.{weight_or_bias}"

        if out_name + "." + weight_or_bias in tensor_parallel_params:
            dim = 1 if op_name in ["attn.c_proj", "mlp.c_proj"] else 0
            params = torch.chunk(params, target_tp, dim=dim)

        for i in range(target_tp):
            params_dict = get_element_from_dict_by_path(output_state_dict[i], "model.language_model.encoder")
            params_dict[layer_name] = (
                params[i] if (out_name + "." + weight_or_bias in tensor_parallel_params) else params  # want: A
            )
    return output_state_dict


def convert_checkpoint_from_transformers_to_megatron_fixed(state_dict, target_tp):
    output_state_dict = [{} for _ in range(target_tp)]
    for name, params in state_dict.items():
        m = layer_re.match(name)
        if m is None:
            continue
        layer, op_name, weight_or_bias = int(m.group(1)), m.group(2), m.group(3)
        if op_name not in transformers_to_megatron:
            continue
        out_name = transformers_to_megatron[op_name]
        if weight_or_bias == "weight":
            params = params.transpose(0, 1).contiguous()
        layer_name = f"layers.{layer}.{out_name}.{weight_or_bias}"

        if out_name + "." + weight_or_bias in tensor_parallel_params:
            dim = 1 if op_name in ["attn.c_proj", "mlp.c_proj"] else 0
            params = torch.chunk(params, target_tp, dim=dim)

        for i in range(target_tp):
            params_dict = get_element_from_dict_by_path(output_state_dict[i], "model.language_model.encoder")
            params_dict[layer_name] = (
                params[i].clone() if (out_name + "." + weight_or_bias in tensor_parallel_params) else params
            )
    return output_state_dict


def saved_size(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.tell()


if __name__ == "__main__":
    hidden, n_layer, tp = 64, 2, 4
    sd = {}
    for i in range(n_layer):
        sd[f"transformer.h.{i}.attn.c_attn.weight"] = torch.randn(hidden, 3 * hidden)
        sd[f"transformer.h.{i}.attn.c_attn.bias"] = torch.randn(3 * hidden)
        sd[f"transformer.h.{i}.attn.c_proj.weight"] = torch.randn(hidden, hidden)
        sd[f"transformer.h.{i}.mlp.c_fc.weight"] = torch.randn(hidden, 4 * hidden)
        sd[f"transformer.h.{i}.mlp.c_proj.weight"] = torch.randn(4 * hidden, hidden)
    full = saved_size(sd)
    bad = convert_checkpoint_from_transformers_to_megatron(sd, tp)
    good = convert_checkpoint_from_transformers_to_megatron_fixed(sd, tp)
    print(f"full HF checkpoint: {full} bytes")
    print(f"rank-0 file, views : {saved_size(bad[0])} bytes")
    print(f"rank-0 file, clones: {saved_size(good[0])} bytes")
    w = bad[0]["model"]["language_model"]["encoder"]["layers.0.self_attention.query_key_value.weight"]
    print("payload", w.numel() * w.element_size(), "storage", w.untyped_storage().nbytes())
    assert saved_size(bad[0]) > 3 * saved_size(good[0])
