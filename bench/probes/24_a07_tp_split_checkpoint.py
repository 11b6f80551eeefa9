# source: alibaba/Pai-Megatron-Patch https://github.com/alibaba/Pai-Megatron-Patch/pull/364 (issue #356) — hf2mcore's save_mgmodel built each tensor-parallel rank's model_split from view()/slice views of the full HF->mcore weights and torch.save'd it, so with TP > 1 every mp_rank_XX file carried the full unsplit tensors ("abnormal storage size caused by tensor.view()"); fix: torch.save(clone_state_dict(state_dict), ...)
import io
from types import SimpleNamespace

import torch


def clone_state_dict(elem):
    if isinstance(elem, torch.Tensor):
        return elem.clone()
    if isinstance(elem, dict):
        return type(elem)({k: clone_state_dict(v) for k, v in elem.items()})
    return elem


def save_state_dict(args, model, files, checkpoint_name):
    state_dict = {"checkpoint_version": 3.0, "iteration": 0, "model": model}
    files[checkpoint_name] = buf = io.BytesIO()
    torch.save(clone_state_dict(state_dict) if args.clone_before_save else state_dict, buf)  # want: A (the fix cloned here)


def split_for_tp_rank(args, full_model, tp_rank):
    head_dim = args.hidden_size // args.num_attention_heads
    group_per_split = args.num_query_groups // args.target_tensor_model_parallel_size
    model_split = {}
    for k, v in full_model.items():
        if not isinstance(v, torch.Tensor):
            target_v = v
        elif "linear_qkv.weight" in k and "norm" not in k:
            viewed = v.view(args.num_query_groups, -1, head_dim, args.hidden_size)
            viewed = viewed[group_per_split * tp_rank: group_per_split * (tp_rank + 1)]
            target_v = viewed.view(-1, args.hidden_size)
        elif "linear_proj" in k or "linear_fc2" in k:
            seg = v.shape[1] // args.target_tensor_model_parallel_size
            target_v = v[:, seg * tp_rank: seg * (tp_rank + 1)]
        elif "embedding" in k or "output_layer" in k:
            seg = v.shape[0] // args.target_tensor_model_parallel_size
            target_v = v[seg * tp_rank: seg * (tp_rank + 1)]
        elif "linear_fc1" in k and "norm" not in k:
            viewed = v.view(-1, args.ffn_hidden_size, args.hidden_size)
            seg = args.ffn_hidden_size // args.target_tensor_model_parallel_size
            target_v = viewed[:, seg * tp_rank: seg * (tp_rank + 1), :].reshape(-1, args.hidden_size)
        else:
            target_v = v
        model_split[k] = target_v  # maybe: A (the views are made here; the file is written by save_state_dict)
    return model_split


def save_mgmodel(args, full_model, files):
    for tp_rank in range(args.target_tensor_model_parallel_size):
        save_state_dict(args, split_for_tp_rank(args, full_model, tp_rank), files, f"mp_rank_{tp_rank:02d}/model_optim_rng.pt")


if __name__ == "__main__":
    args = SimpleNamespace(hidden_size=32, num_attention_heads=4, num_query_groups=4, ffn_hidden_size=64,
                           target_tensor_model_parallel_size=4, clone_before_save=False)
    h, f = args.hidden_size, args.ffn_hidden_size
    full_model = {
        "embedding.word_embeddings.weight": torch.randn(128, h),
        "decoder.layers.0.self_attention.linear_qkv.weight": torch.randn(3 * h, h),
        "decoder.layers.0.self_attention.linear_proj.weight": torch.randn(h, h),
        "decoder.layers.0.mlp.linear_fc1.weight": torch.randn(2 * f, h),
        "decoder.layers.0.mlp.linear_fc2.weight": torch.randn(h, f),
        "decoder.final_layernorm.weight": torch.ones(h),
        "output_layer.weight": torch.randn(128, h),
    }
    full_bytes = sum(v.numel() * 4 for v in full_model.values())
    files, lean = {}, {}
    save_mgmodel(args, full_model, files)
    args.clone_before_save = True
    save_mgmodel(args, full_model, lean)
    for name in files:
        bloated, small = len(files[name].getvalue()), len(lean[name].getvalue())
        assert bloated > 0.75 * full_bytes and small < 0.35 * full_bytes, (name, bloated, small)
    sd = torch.load(io.BytesIO(files["mp_rank_01/model_optim_rng.pt"].getvalue()), weights_only=True)["model"]
    emb = sd["embedding.word_embeddings.weight"]
    assert emb.shape == (32, h) and emb.untyped_storage().nbytes() == 128 * h * 4
    fc1 = sd["decoder.layers.0.mlp.linear_fc1.weight"]  # reshape of a strided slice: already a copy
    assert fc1.untyped_storage().nbytes() == fc1.numel() * 4
    print("ok: each TP rank file carried the unsplit tensors")
