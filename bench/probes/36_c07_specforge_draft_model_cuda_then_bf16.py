# source: sgl-project/SpecForge https://github.com/sgl-project/SpecForge/pull/228 — train_eagle3_online.py built the Eagle3 draft model with `AutoEagle3DraftModel.from_config(...).cuda().to(torch.bfloat16)`, so the float32 weights were first copied to the GPU and only then converted, allocating a full float32 copy plus a bf16 copy on the device; the fix passes `torch_dtype=torch.bfloat16` to `from_config`/`from_pretrained`, converting before the move.
import argparse

import torch
from torch import nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # stands in for `.cuda()`


class LlamaConfig:
    hidden_size = 64
    vocab_size = 256
    intermediate_size = 128


class LlamaForCausalLMEagle3(nn.Module):
    def __init__(self, config, attention_backend="sdpa"):
        super().__init__()
        self.attention_backend = attention_backend
        self.fc = nn.Linear(3 * config.hidden_size, config.hidden_size, bias=False)
        self.mlp = nn.Sequential(nn.Linear(config.hidden_size, config.intermediate_size), nn.SiLU(),
                                 nn.Linear(config.intermediate_size, config.hidden_size))
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)


class AutoEagle3DraftModel:
    _model_mapping = {LlamaConfig: LlamaForCausalLMEagle3}

    @classmethod
    def from_config(cls, config, **config_kwargs):
        _model_cls = cls._model_mapping[type(config)]
        return _model_cls(config, **config_kwargs)

    @classmethod
    def from_config_fixed(cls, config, torch_dtype=None, **config_kwargs):
        _model_cls = cls._model_mapping[type(config)]
        model = _model_cls(config, **config_kwargs)
        # Convert model to specified dtype if provided
        if torch_dtype is not None:
            model = model.to(dtype=torch_dtype)
        return model


def build_draft_model(args, draft_model_config):
    draft_model = AutoEagle3DraftModel.from_config(draft_model_config, attention_backend=args.attention_backend).to(DEVICE).to(torch.bfloat16)  # want: C
    return draft_model


def build_draft_model_fixed(args, draft_model_config):
    draft_model = AutoEagle3DraftModel.from_config_fixed(
        draft_model_config, attention_backend=args.attention_backend, torch_dtype=torch.bfloat16
    ).to(DEVICE)
    return draft_model


def bytes_when_landing_on_device(model):
    return sum(p.numel() * p.element_size() for p in model.parameters())


if __name__ == "__main__":
    torch.manual_seed(0)
    args = argparse.Namespace(attention_backend="flex_attention")
    cfg = LlamaConfig()
    bug = build_draft_model(args, cfg)
    fix = build_draft_model_fixed(args, cfg)
    assert all(p.dtype == torch.bfloat16 for p in bug.parameters())
    assert all(p.dtype == torch.bfloat16 for p in fix.parameters())
    # what was transferred to the device before the dtype conversion ran
    landed_bug = bytes_when_landing_on_device(AutoEagle3DraftModel.from_config(cfg).to(DEVICE))
    landed_fix = bytes_when_landing_on_device(
        AutoEagle3DraftModel.from_config_fixed(cfg, torch_dtype=torch.bfloat16).to(DEVICE))
    assert landed_bug == 2 * landed_fix
    print("float32 bytes moved before the cast:", landed_bug, "vs bf16 bytes:", landed_fix)
