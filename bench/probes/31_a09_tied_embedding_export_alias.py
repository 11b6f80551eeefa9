# source: NVIDIA-NeMo/Megatron-Bridge https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/922 — with tie_word_embeddings, stream_weights_megatron_to_hf yielded the very same exported tensor a second time as `lm_head.weight`, so save_hf_weights handed two names backed by one storage to safetensors ("Some tensors share memory", issue #919); the fix yields a clone for the tied name.
import io
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import nn


class HFWeightTuple(NamedTuple):
    param_name: str
    weight: torch.Tensor


def save_file(tensors, f):
    """Minimal safetensors.torch.save_file: overlapping storages are rejected."""
    spans = {}
    for name, t in tensors.items():
        start = t.data_ptr()
        spans[name] = (t.untyped_storage().data_ptr(), start, start + t.numel() * t.element_size())
    names = list(spans)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            sa, sb = spans[a], spans[b]
            if sa[0] == sb[0] and sa[1] < sb[2] and sb[1] < sa[2]:
                raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on disk: [{{{a!r}, {b!r}}}]")
    torch.save({k: v.contiguous() for k, v in tensors.items()}, f)


@dataclass
class HFConfig:
    tie_word_embeddings: bool = True


class GPTModel(nn.Module):
    def __init__(self, vocab=32, hidden=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.linear_fc1 = nn.Linear(hidden, hidden, bias=False)


class MegatronModelBridge:
    param_mapping = {"embedding.weight": "model.embed_tokens.weight",
                     "linear_fc1.weight": "model.layers.0.mlp.up_proj.weight"}

    def __init__(self, hf_config):
        self.hf_config = hf_config

    def megatron_to_hf(self, megatron_name, param):
        return {self.param_mapping[megatron_name]: param.detach()}

    def stream_weights_megatron_to_hf(self, megatron_model, cpu=True):
        embeddings_are_tied = self.hf_config.tie_word_embeddings
        for megatron_name, param in megatron_model.named_parameters():
            converted_weights_dict = self.megatron_to_hf(megatron_name, param)
            for hf_name, tensor in converted_weights_dict.items():
                final_tensor = tensor.cpu() if cpu else tensor
                yield HFWeightTuple(hf_name, final_tensor)
                if embeddings_are_tied and hf_name == "model.embed_tokens.weight":
                    yield HFWeightTuple("lm_head.weight", final_tensor)  # want: A

    def save_hf_weights(self, megatron_model, f):
        state_dict = {}
        for name, weight in self.stream_weights_megatron_to_hf(megatron_model):
            state_dict[name] = weight
        save_file(state_dict, f)


class MegatronModelBridgeFixed(MegatronModelBridge):
    def stream_weights_megatron_to_hf(self, megatron_model, cpu=True):
        embeddings_are_tied = self.hf_config.tie_word_embeddings
        for megatron_name, param in megatron_model.named_parameters():
            converted_weights_dict = self.megatron_to_hf(megatron_name, param)
            for hf_name, tensor in converted_weights_dict.items():
                final_tensor = tensor.cpu() if cpu else tensor
                yield HFWeightTuple(hf_name, final_tensor)
                if embeddings_are_tied and hf_name == "model.embed_tokens.weight":
                    # clone so the exported lm_head does not share storage with embed_tokens
                    yield HFWeightTuple("lm_head.weight", final_tensor.clone())


if __name__ == "__main__":
    model = GPTModel()
    try:
        MegatronModelBridge(HFConfig()).save_hf_weights(model, io.BytesIO())
        bad_ok = True
    except RuntimeError as e:
        bad_ok = False
        print("buggy export:", str(e).splitlines()[0])
    buf = io.BytesIO()
    MegatronModelBridgeFixed(HFConfig()).save_hf_weights(model, buf)
    print("fixed export wrote", buf.tell(), "bytes")
    assert not bad_ok
