# source: Biohub/esm https://github.com/Biohub/esm/issues/391 — HubPreTrainedModel._load_pretrained moved the freshly loaded fp32 checkpoint to the target device first and only then cast it to the requested dtype, so the full fp32 model was materialised on the GPU (OOM for ESMC-6B on 24 GB cards); the fix casts to the target dtype first and then transfers.
import torch
import torch.nn as nn


class ESMCConfig:
    def __init__(self, d_model=256, n_layers=4, vocab_size=64):
        self.d_model = d_model
        self.n_layers = n_layers
        self.vocab_size = vocab_size


class HubPreTrainedModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    @property
    def device(self):
        return next(self.parameters()).device

    @classmethod
    def _load_pretrained(cls, state_dict, config, *, device="cpu", dtype=None):
        model = cls(config)
        incompatible = model.load_state_dict(state_dict, strict=False, assign=True)
        if incompatible.missing_keys or incompatible.unexpected_keys:
            raise RuntimeError(f"{cls.__name__}.from_pretrained refused to load the checkpoint silently")
        del state_dict
        model.to(device)  # want: C
        if dtype is not None:
            model.to(dtype)  # want: C
        model.eval()
        return model


class HubPreTrainedModelFixed(HubPreTrainedModel):
    @classmethod
    def _load_pretrained(cls, state_dict, config, *, device="cpu", dtype=None):
        model = cls(config)
        incompatible = model.load_state_dict(state_dict, strict=False, assign=True)
        if incompatible.missing_keys or incompatible.unexpected_keys:
            raise RuntimeError(f"{cls.__name__}.from_pretrained refused to load the checkpoint silently")
        del state_dict
        if dtype is not None:
            model.to(dtype)
        model.to(device)
        model.eval()
        return model


class ESMC(HubPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = nn.ModuleList(nn.Linear(config.d_model, config.d_model) for _ in range(config.n_layers))
        self.head = nn.Linear(config.d_model, config.vocab_size)

    def forward(self, tokens):
        x = self.embed(tokens)
        for blk in self.blocks:
            x = x + torch.relu(blk(x))
        return self.head(x)


class ESMCFixed(HubPreTrainedModelFixed, ESMC):
    pass


if __name__ == "__main__":
    torch.manual_seed(0)
    config = ESMCConfig()
    checkpoint = ESMC(config).state_dict()  # published safetensors are fp32
    fp32_bytes = sum(t.numel() * t.element_size() for t in checkpoint.values())
    bf16_bytes = sum(t.numel() * 2 for t in checkpoint.values())

    device = "cuda" if torch.cuda.is_available() else "cpu"
    buggy = ESMC._load_pretrained({k: v.clone() for k, v in checkpoint.items()}, config, device=device, dtype=torch.bfloat16)
    fixed = ESMCFixed._load_pretrained({k: v.clone() for k, v in checkpoint.items()}, config, device=device, dtype=torch.bfloat16)

    print(f"bytes moved to {device}: buggy (fp32 first) = {fp32_bytes}, fixed (bf16 first) = {bf16_bytes}")
    tokens = torch.randint(0, config.vocab_size, (2, 16), device=device)
    with torch.no_grad():
        assert torch.equal(buggy(tokens), fixed(tokens))
    assert next(buggy.parameters()).dtype == next(fixed.parameters()).dtype == torch.bfloat16
