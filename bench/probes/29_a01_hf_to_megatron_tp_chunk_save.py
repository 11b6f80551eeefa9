# source: huggingface/transformers https://github.com/huggingface/transformers/pull/25950 — convert_checkpoint_from_transformers_to_megatron split each tensor-parallel weight with torch.chunk and stored the chunk views in the per-rank state dicts that are torch.save'd, so every TP rank file contained the full unsplit tensor; the fix clones each chunk (word embeddings and layer params) before storing it (fixes #25911).
import io
import os
import tempfile

import torch

tensor_parallel_params = [
    "self_attention.query_key_value.weight",
    "self_attention.dense.weight",
    "mlp.dense_h_to_4h.weight",
    "mlp.dense_4h_to_h.weight",
]


def get_element_from_dict_by_path(d, path):
    path = path.split(".")
    for k in path:
        if k not in d:
            d[k] = {}
        d = d[k]
    return d


def convert_checkpoint_from_transformers_to_megatron(state_dict, args, dtype):
    output_state_dict = [{} for _ in range(args["target_tensor_model_parallel_size"])]

    # Convert and store the word embeddings.
    word_embedding = state_dict["transformer.wte.weight"].to(dtype)
    out_word_embed = torch.chunk(word_embedding, args["target_tensor_model_parallel_size"], dim=0)
    for i in range(args["target_tensor_model_parallel_size"]):
        word_emb_dict = get_element_from_dict_by_path(
            output_state_dict[i], "model.language_model.embedding.word_embeddings"
        )
        word_emb_dict["weight"] = out_word_embed[i]  # want: A

    for layer_name, val in state_dict.items():
        if not layer_name.startswith("transformer.h."):
            continue
        op_name = ".".join(layer_name.split(".")[3:])
        params = val.to(dtype)
        if op_name in tensor_parallel_params:
            dim = 1 if op_name in ["self_attention.dense.weight", "mlp.dense_4h_to_h.weight"] else 0
            params = torch.chunk(params, args["target_tensor_model_parallel_size"], dim=dim)
        for i in range(args["target_tensor_model_parallel_size"]):
            params_dict = get_element_from_dict_by_path(output_state_dict[i], "model.language_model.encoder")
            params_dict[layer_name] = params[i] if op_name in tensor_parallel_params else params  # want: A

    for tp_rank in range(args["target_tensor_model_parallel_size"]):
        checkpoint_name = "model_optim_rng.pt"
        checkpoint_dir = os.path.join(args["save_path"], f"mp_rank_{tp_rank:02d}")
        os.makedirs(checkpoint_dir, exist_ok=True)
        torch.save(output_state_dict[tp_rank], os.path.join(checkpoint_dir, checkpoint_name))
    return output_state_dict


def convert_checkpoint_from_transformers_to_megatron_fixed(state_dict, args, dtype):
    output_state_dict = [{} for _ in range(args["target_tensor_model_parallel_size"])]

    word_embedding = state_dict["transformer.wte.weight"].to(dtype)
    out_word_embed = torch.chunk(word_embedding, args["target_tensor_model_parallel_size"], dim=0)
    for i in range(args["target_tensor_model_parallel_size"]):
        word_emb_dict = get_element_from_dict_by_path(
            output_state_dict[i], "model.language_model.embedding.word_embeddings"
        )
        word_emb_dict["weight"] = out_word_embed[i].clone()

    for layer_name, val in state_dict.items():
        if not layer_name.startswith("transformer.h."):
            continue
        op_name = ".".join(layer_name.split(".")[3:])
        params = val.to(dtype)
        if op_name in tensor_parallel_params:
            dim = 1 if op_name in ["self_attention.dense.weight", "mlp.dense_4h_to_h.weight"] else 0
            params = torch.chunk(params, args["target_tensor_model_parallel_size"], dim=dim)
        for i in range(args["target_tensor_model_parallel_size"]):
            params_dict = get_element_from_dict_by_path(output_state_dict[i], "model.language_model.encoder")
            params_dict[layer_name] = params[i].clone() if op_name in tensor_parallel_params else params

    for tp_rank in range(args["target_tensor_model_parallel_size"]):
        checkpoint_dir = os.path.join(args["save_path"], f"mp_rank_{tp_rank:02d}")
        os.makedirs(checkpoint_dir, exist_ok=True)
        torch.save(output_state_dict[tp_rank], os.path.join(checkpoint_dir, "model_optim_rng.pt"))
    return output_state_dict


def _rank_file_size(root, rank):
    return os.path.getsize(os.path.join(root, f"mp_rank_{rank:02d}", "model_optim_rng.pt"))


if __name__ == "__main__":
    hidden = 64
    sd = {
        "transformer.wte.weight": torch.randn(512, hidden),
        "transformer.h.0.self_attention.query_key_value.weight": torch.randn(3 * hidden, hidden),
        "transformer.h.0.mlp.dense_h_to_4h.weight": torch.randn(4 * hidden, hidden),
        "transformer.h.0.mlp.dense_4h_to_h.weight": torch.randn(hidden, 4 * hidden),
        "transformer.h.0.input_layernorm.weight": torch.ones(hidden),
    }
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        args = {"target_tensor_model_parallel_size": 4, "save_path": d1}
        out = convert_checkpoint_from_transformers_to_megatron(sd, args, torch.float32)
        args_fixed = dict(args, save_path=d2)
        out_fixed = convert_checkpoint_from_transformers_to_megatron_fixed(sd, args_fixed, torch.float32)
        w = out[0]["model"]["language_model"]["embedding"]["word_embeddings"]["weight"]
        print("rank0 emb payload", w.numel() * w.element_size(), "storage", w.untyped_storage().nbytes())
        s_bug, s_fix = _rank_file_size(d1, 0), _rank_file_size(d2, 0)
        print("rank0 file bytes: buggy", s_bug, "fixed", s_fix)
        assert s_bug > 2.5 * s_fix
