# source: allenai/open-instruct https://github.com/allenai/open-instruct/commit/7e5345e4abb31ebf25853c8ba2877565efb268cc — save_state_dict_as_hf converted an olmo-core state dict whose parameters are views into shared flat buffers and then did `{k: v.contiguous() ...}`; contiguous() returns self for an already contiguous view, so the storage sharing survived into the HF model, and save_pretrained (which groups tensors by storage pointer) wrote only one tensor per storage group and silently dropped the rest (the packed norms went missing and vLLM refused the checkpoint). The fix uses `v.detach().clone()` and verifies every converted key reached the file.
import collections
import os
import tempfile

import torch

OLMO_TO_HF = {
    "embeddings.weight": "model.embed_tokens.weight",
    "blocks.0.attention.w_q.weight": "model.layers.0.self_attn.q_proj.weight",
    "blocks.0.attention_norm.weight": "model.layers.0.post_attention_layernorm.weight",
    "blocks.0.feed_forward_norm.weight": "model.layers.0.post_feedforward_layernorm.weight",
    "lm_head.norm.weight": "model.norm.weight",
}


def load_model_and_optim_state(shapes):
    """Stand-in for olmo-core's loader: parameters are materialized from one flat buffer."""
    flat = torch.randn(sum(torch.Size(s).numel() for s in shapes.values()))
    state, offset = {}, 0
    for name, shape in shapes.items():
        n = torch.Size(shape).numel()
        state[name] = flat[offset: offset + n].view(shape)
        offset += n
    return state


def convert_state_to_hf(hf_config, state_dict):
    return {OLMO_TO_HF[k]: v for k, v in state_dict.items()}


class HFModel(torch.nn.Module):
    """Minimal stand-in for transformers.AutoModelForCausalLM (assign-load + save_pretrained)."""

    def load_state_dict(self, state_dict, assign=False):
        for k, v in state_dict.items():
            self.register_buffer(k.replace(".", "__"), v)

    def save_pretrained(self, save_dir):
        state_dict = {k.replace("__", "."): v for k, v in self.state_dict().items()}
        ptrs = collections.defaultdict(list)
        for name, tensor in state_dict.items():
            ptrs[tensor.untyped_storage().data_ptr()].append(name)
        for names in ptrs.values():
            for name in sorted(names)[1:]:
                del state_dict[name]
        torch.save(state_dict, os.path.join(save_dir, "model.bin"))


def save_state_dict_as_hf(state_dict, save_dir, hf_config=None):
    converted = convert_state_to_hf(hf_config, state_dict)
    converted = {k: v.contiguous() for k, v in converted.items()}  # want: A
    hf_model = HFModel()
    hf_model.load_state_dict(converted, assign=True)
    os.makedirs(save_dir, exist_ok=True)
    hf_model.save_pretrained(save_dir)
    return converted


def save_state_dict_as_hf_fixed(state_dict, save_dir, hf_config=None):
    converted = convert_state_to_hf(hf_config, state_dict)
    # clone(), not contiguous(): the parameters are views into shared flat buffers.
    converted = {k: v.detach().clone() for k, v in converted.items()}
    hf_model = HFModel()
    hf_model.load_state_dict(converted, assign=True)
    os.makedirs(save_dir, exist_ok=True)
    hf_model.save_pretrained(save_dir)
    saved = set(torch.load(os.path.join(save_dir, "model.bin")).keys())
    dropped = sorted(set(converted) - saved)
    if dropped:
        raise RuntimeError(f"save_pretrained dropped {len(dropped)} tensors (e.g. {dropped[:5]})")
    return converted


if __name__ == "__main__":
    torch.manual_seed(0)
    shapes = {
        "embeddings.weight": (64, 16),
        "blocks.0.attention.w_q.weight": (16, 16),
        "blocks.0.attention_norm.weight": (16,),
        "blocks.0.feed_forward_norm.weight": (16,),
        "lm_head.norm.weight": (16,),
    }
    state = load_model_and_optim_state(shapes)
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        conv = save_state_dict_as_hf(state, d1)
        norm = conv["model.norm.weight"]
        assert norm.untyped_storage().nbytes() > norm.numel() * norm.element_size()
        written = torch.load(os.path.join(d1, "model.bin"))
        assert len(written) == 1, sorted(written)  # every other weight was silently dropped

        conv_fixed = save_state_dict_as_hf_fixed(state, d2)
        written_fixed = torch.load(os.path.join(d2, "model.bin"))
        assert set(written_fixed) == set(OLMO_TO_HF.values())
        for k, v in conv_fixed.items():
            assert v.untyped_storage().nbytes() == v.numel() * v.element_size()
            assert torch.equal(written_fixed[k], conv[k])
    print("ok")
