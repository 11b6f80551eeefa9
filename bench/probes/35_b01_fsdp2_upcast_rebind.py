# source: huggingface/accelerate https://github.com/huggingface/accelerate/pull/3985 — fsdp2_prepare_model upcast low-precision trainable params with `param = param.to(torch.float32)`, which only rebinds the loop variable so the model kept bf16 master weights (issue #3979); the fix casts the real parameters (param.data / model.to) before fully_shard.
import torch
import torch.nn as nn


class FSDP2Plugin:
    def __init__(self, mixed_precision="bf16"):
        self.mixed_precision = mixed_precision


def fsdp2_prepare_model(plugin, model):
    """Buggy: warns that params were upcast, but nothing in `model` changes."""
    upcasted_params = []
    if plugin.mixed_precision in ("bf16", "fp16"):
        for name, param in model.named_parameters():
            if param.requires_grad and param.dtype != torch.float32:
                upcasted_params.append(name)
                param = param.to(torch.float32)  # want: B
        if upcasted_params:
            print(f"FSDP upcast of low precision parameters to fp32: {len(upcasted_params)} params")
    # fully_shard(model, mp_policy=...) would follow here
    return model


def fsdp2_prepare_model_fixed(plugin, model):
    upcasted_params = []
    if plugin.mixed_precision in ("bf16", "fp16"):
        with torch.no_grad():
            for name, param in model.named_parameters():
                if param.requires_grad and param.dtype != torch.float32:
                    upcasted_params.append(name)
                    param.data = param.data.to(torch.float32)
        if upcasted_params:
            print(f"FSDP upcast of low precision parameters to fp32: {len(upcasted_params)} params")
    return model


class Block(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(self.norm(x))))


def build():
    torch.manual_seed(0)
    return nn.Sequential(Block(), Block()).to(torch.bfloat16)


if __name__ == "__main__":
    plugin = FSDP2Plugin("bf16")
    m = fsdp2_prepare_model(plugin, build())
    dtypes = {p.dtype for p in m.parameters()}
    print("buggy dtypes:", dtypes)
    assert dtypes == {torch.bfloat16}

    m2 = fsdp2_prepare_model_fixed(plugin, build())
    dtypes2 = {p.dtype for p in m2.parameters()}
    print("fixed dtypes:", dtypes2)
    assert dtypes2 == {torch.float32}
