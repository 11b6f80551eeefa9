# source: kohya-ss/sd-scripts https://github.com/kohya-ss/sd-scripts/issues/1614 (fix commit https://github.com/kohya-ss/sd-scripts/commit/822fe578591e44ac949830e03a8841e222483052) — convert_flux_lora.py put torch.split/torch.chunk views of the fused qkv LoRA weights straight into the output state dict and handed it to safetensors save_file, which refuses/duplicates tensors sharing one storage ("Some tensors share memory"); the fix .detach().clone()s every tensor before saving.
import argparse
import logging
import os
import tempfile

import torch

try:
    from safetensors import safe_open
    from safetensors.torch import save_file
except ImportError:  # minimal stand-in with the same contract as safetensors.torch

    def save_file(tensors, filename, metadata=None):
        seen = {}
        for name, t in tensors.items():
            ptr = t.untyped_storage().data_ptr()
            if ptr in seen:
                raise RuntimeError(
                    f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
                    f"differences when loading them again: [{{{seen[ptr]!r}, {name!r}}}]."
                )
            seen[ptr] = name
        torch.save({"tensors": tensors, "metadata": metadata}, filename)

    class safe_open:
        def __init__(self, filename, framework="pt"):
            self._obj = torch.load(filename)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def metadata(self):
            return self._obj["metadata"]

        def keys(self):
            return list(self._obj["tensors"].keys())

        def get_tensor(self, k):
            return self._obj["tensors"][k]


logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)

HIDDEN = 64  # 3072 in FLUX


def convert_to_ai_toolkit(sds_sd, ait_sd, sds_key, ait_key):
    if sds_key + ".lora_down.weight" not in sds_sd:
        return
    down_weight = sds_sd.pop(sds_key + ".lora_down.weight")

    # scale weight by alpha and dim
    rank = down_weight.shape[0]
    alpha = sds_sd.pop(sds_key + ".alpha").item()  # alpha is scalar
    scale = alpha / rank

    scale_down = scale
    scale_up = 1.0
    while scale_down * 2 < scale_up:
        scale_down *= 2
        scale_up /= 2

    ait_sd[ait_key + ".lora_A.weight"] = down_weight * scale_down
    ait_sd[ait_key + ".lora_B.weight"] = sds_sd.pop(sds_key + ".lora_up.weight") * scale_up


def convert_to_ai_toolkit_cat(sds_sd, ait_sd, sds_key, ait_keys, dims=None):
    if sds_key + ".lora_down.weight" not in sds_sd:
        return
    down_weight = sds_sd.pop(sds_key + ".lora_down.weight")
    up_weight = sds_sd.pop(sds_key + ".lora_up.weight")
    sd_lora_rank = down_weight.shape[0]

    # scale weight by alpha and dim
    alpha = sds_sd.pop(sds_key + ".alpha")
    scale = alpha / sd_lora_rank

    scale_down = scale
    scale_up = 1.0
    while scale_down * 2 < scale_up:
        scale_down *= 2
        scale_up /= 2

    down_weight = down_weight * scale_down
    up_weight = up_weight * scale_up

    # calculate dims if not provided
    num_splits = len(ait_keys)
    if dims is None:
        dims = [up_weight.shape[0] // num_splits] * num_splits
    else:
        assert sum(dims) == up_weight.shape[0]

    # check upweight is sparse or not
    is_sparse = False
    if sd_lora_rank % num_splits == 0:
        ait_rank = sd_lora_rank // num_splits
        is_sparse = True
        i = 0
        for j in range(len(dims)):
            for k in range(len(dims)):
                if j == k:
                    continue
                is_sparse = is_sparse and torch.all(up_weight[i : i + dims[j], k * ait_rank : (k + 1) * ait_rank] == 0)
            i += dims[j]
        if is_sparse:
            logger.info(f"weight is sparse: {sds_key}")

    # make ai-toolkit weight
    ait_down_keys = [k + ".lora_A.weight" for k in ait_keys]
    ait_up_keys = [k + ".lora_B.weight" for k in ait_keys]
    if not is_sparse:
        # down_weight is copied to each split
        ait_sd.update({k: down_weight for k in ait_down_keys})

        # up_weight is split to each split
        ait_sd.update({k: v for k, v in zip(ait_up_keys, torch.split(up_weight, dims, dim=0))})  # want: A
    else:
        # down_weight is chunked to each split
        ait_sd.update({k: v for k, v in zip(ait_down_keys, torch.chunk(down_weight, num_splits, dim=0))})  # want: A

        # up_weight is sparse: only non-zero values are copied to each split
        i = 0
        for j in range(len(dims)):
            ait_sd[ait_up_keys[j]] = up_weight[i : i + dims[j], j * ait_rank : (j + 1) * ait_rank].contiguous()
            i += dims[j]


def convert_sd_scripts_to_ai_toolkit(sds_sd):
    ait_sd = {}
    for i in range(1):  # 19 double blocks in FLUX
        convert_to_ai_toolkit(
            sds_sd, ait_sd, f"lora_unet_double_blocks_{i}_img_attn_proj", f"transformer.transformer_blocks.{i}.attn.to_out.0"
        )
        convert_to_ai_toolkit_cat(
            sds_sd,
            ait_sd,
            f"lora_unet_double_blocks_{i}_img_attn_qkv",
            [
                f"transformer.transformer_blocks.{i}.attn.to_q",
                f"transformer.transformer_blocks.{i}.attn.to_k",
                f"transformer.transformer_blocks.{i}.attn.to_v",
            ],
        )
    for i in range(1):  # 38 single blocks in FLUX
        convert_to_ai_toolkit_cat(
            sds_sd,
            ait_sd,
            f"lora_unet_single_blocks_{i}_linear1",
            [
                f"transformer.single_transformer_blocks.{i}.attn.to_q",
                f"transformer.single_transformer_blocks.{i}.attn.to_k",
                f"transformer.single_transformer_blocks.{i}.attn.to_v",
                f"transformer.single_transformer_blocks.{i}.proj_mlp",
            ],
            dims=[HIDDEN, HIDDEN, HIDDEN, 4 * HIDDEN],
        )

    if len(sds_sd) > 0:
        logger.warning(f"Unsuppored keys for ai-toolkit: {sds_sd.keys()}")
    return ait_sd


def main(args):
    # load source safetensors
    logger.info(f"Loading source file {args.src_path}")
    state_dict = {}
    with safe_open(args.src_path, framework="pt") as f:
        metadata = f.metadata()
        for k in f.keys():
            state_dict[k] = f.get_tensor(k)

    logger.info(f"Converting {args.src} to {args.dst} format")
    if args.src == "sd-scripts" and args.dst == "ai-toolkit":
        state_dict = convert_sd_scripts_to_ai_toolkit(state_dict)
    else:
        raise NotImplementedError(f"Conversion from {args.src} to {args.dst} is not supported")

    # save destination safetensors
    logger.info(f"Saving destination file {args.dst_path}")
    save_file(state_dict, args.dst_path, metadata=metadata)  # want: A


def main_fixed(args):
    """Post-fix version (look-alike, correct)."""
    state_dict = {}
    with safe_open(args.src_path, framework="pt") as f:
        metadata = f.metadata()
        for k in f.keys():
            state_dict[k] = f.get_tensor(k)

    if args.src == "sd-scripts" and args.dst == "ai-toolkit":
        state_dict = convert_sd_scripts_to_ai_toolkit(state_dict)

        # eliminate 'shared tensors'
        for k in list(state_dict.keys()):
            state_dict[k] = state_dict[k].detach().clone()
    else:
        raise NotImplementedError(f"Conversion from {args.src} to {args.dst} is not supported")

    save_file(state_dict, args.dst_path, metadata=metadata)


def make_source(path, rank):
    sd = {}
    sd["lora_unet_double_blocks_0_img_attn_proj.lora_down.weight"] = torch.randn(rank, HIDDEN)
    sd["lora_unet_double_blocks_0_img_attn_proj.lora_up.weight"] = torch.randn(HIDDEN, rank)
    sd["lora_unet_double_blocks_0_img_attn_proj.alpha"] = torch.tensor(float(rank))
    sd["lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight"] = torch.randn(rank, HIDDEN)
    sd["lora_unet_double_blocks_0_img_attn_qkv.lora_up.weight"] = torch.randn(3 * HIDDEN, rank)
    sd["lora_unet_double_blocks_0_img_attn_qkv.alpha"] = torch.tensor(float(rank))
    sd["lora_unet_single_blocks_0_linear1.lora_down.weight"] = torch.randn(rank, HIDDEN)
    sd["lora_unet_single_blocks_0_linear1.lora_up.weight"] = torch.randn(7 * HIDDEN, rank)
    sd["lora_unet_single_blocks_0_linear1.alpha"] = torch.tensor(float(rank))
    save_file(sd, path, metadata={"format": "pt"})


if __name__ == "__main__":
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "sds_lora")
        make_source(src, rank=6)
        args = argparse.Namespace(src="sd-scripts", dst="ai-toolkit", src_path=src, dst_path=os.path.join(d, "ait_lora"))
        try:
            main(args)
            print("buggy main: saved (shared storages serialized)")
        except RuntimeError as e:
            print("buggy main failed as in #1614:", str(e)[:60], "...")
        main_fixed(args)
        print("fixed main: saved", os.path.getsize(args.dst_path), "bytes")
