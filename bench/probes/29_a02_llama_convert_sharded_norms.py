# source: huggingface/transformers https://github.com/huggingface/transformers/pull/22236 — in convert_llama_weights_to_hf.write_model the sharded (13B+) branch copied loaded[0][...attention_norm/ffn_norm.weight] straight into each per-layer state_dict; those loaded tensors share one storage, so every pytorch_model-{i}.bin carried it ("37GB instead of 26GB"); the fix adds .clone() to the two norm weights.
import io
import os
import tempfile

import torch


def permute(w, n_heads, dim1, dim2):
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def write_model(tmp_model_path, input_base_path, params):
    n_layers = params["n_layers"]
    n_heads = params["n_heads"]
    dim = params["dim"]
    num_shards = params["num_shards"]
    loaded = [
        torch.load(os.path.join(input_base_path, f"consolidated.{i:02d}.pth"), map_location="cpu")
        for i in range(num_shards)
    ]
    for layer_i in range(n_layers):
        filename = f"pytorch_model-{layer_i + 1}-of-{n_layers + 1}.bin"
        # Sharded
        state_dict = {
            f"model.layers.{layer_i}.input_layernorm.weight": loaded[0][f"layers.{layer_i}.attention_norm.weight"],  # want: A
            f"model.layers.{layer_i}.post_attention_layernorm.weight": loaded[0][f"layers.{layer_i}.ffn_norm.weight"],  # want: A
        }
        state_dict[f"model.layers.{layer_i}.self_attn.q_proj.weight"] = permute(
            torch.cat([loaded[i][f"layers.{layer_i}.attention.wq.weight"] for i in range(num_shards)], dim=0),
            n_heads, dim, dim,
        )
        state_dict[f"model.layers.{layer_i}.mlp.up_proj.weight"] = torch.cat(
            [loaded[i][f"layers.{layer_i}.feed_forward.w3.weight"] for i in range(num_shards)], dim=0
        )
        torch.save(state_dict, os.path.join(tmp_model_path, filename))


def write_model_fixed(tmp_model_path, input_base_path, params):
    n_layers = params["n_layers"]
    n_heads = params["n_heads"]
    dim = params["dim"]
    num_shards = params["num_shards"]
    loaded = [
        torch.load(os.path.join(input_base_path, f"consolidated.{i:02d}.pth"), map_location="cpu")
        for i in range(num_shards)
    ]
    for layer_i in range(n_layers):
        filename = f"pytorch_model-{layer_i + 1}-of-{n_layers + 1}.bin"
        # Note that in the 13B checkpoint, not cloning the two following weights will result in the checkpoint
        # becoming 37GB instead of 26GB for some reason.
        state_dict = {
            f"model.layers.{layer_i}.input_layernorm.weight": loaded[0][
                f"layers.{layer_i}.attention_norm.weight"
            ].clone(),
            f"model.layers.{layer_i}.post_attention_layernorm.weight": loaded[0][
                f"layers.{layer_i}.ffn_norm.weight"
            ].clone(),
        }
        state_dict[f"model.layers.{layer_i}.self_attn.q_proj.weight"] = permute(
            torch.cat([loaded[i][f"layers.{layer_i}.attention.wq.weight"] for i in range(num_shards)], dim=0),
            n_heads, dim, dim,
        )
        state_dict[f"model.layers.{layer_i}.mlp.up_proj.weight"] = torch.cat(
            [loaded[i][f"layers.{layer_i}.feed_forward.w3.weight"] for i in range(num_shards)], dim=0
        )
        torch.save(state_dict, os.path.join(tmp_model_path, filename))


def _make_original_shards(path, params):
    # The original consolidated shards store all norm vectors inside one storage.
    n_layers, dim, num_shards = params["n_layers"], params["dim"], params["num_shards"]
    for s in range(num_shards):
        norms = torch.ones(n_layers * 2 * dim)
        sd = {}
        for l in range(n_layers):
            sd[f"layers.{l}.attention_norm.weight"] = norms[(2 * l) * dim:(2 * l + 1) * dim]
            sd[f"layers.{l}.ffn_norm.weight"] = norms[(2 * l + 1) * dim:(2 * l + 2) * dim]
            sd[f"layers.{l}.attention.wq.weight"] = torch.randn(dim // num_shards, dim)
            sd[f"layers.{l}.feed_forward.w3.weight"] = torch.randn(dim // num_shards, dim)
        torch.save(sd, os.path.join(path, f"consolidated.{s:02d}.pth"))


if __name__ == "__main__":
    params = {"n_layers": 32, "n_heads": 4, "dim": 32, "num_shards": 2}
    with tempfile.TemporaryDirectory() as src, tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        _make_original_shards(src, params)
        write_model(d1, src, params)
        write_model_fixed(d2, src, params)
        f = "pytorch_model-1-of-33.bin"
        b, g = os.path.getsize(os.path.join(d1, f)), os.path.getsize(os.path.join(d2, f))
        print("layer-0 file bytes: buggy", b, "fixed", g)
        assert b > g
