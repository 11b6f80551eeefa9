# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/6599 — In the advanced DreamBooth LoRA SDXL script's textual-inversion branch, the loop over `text_encoder.named_parameters()` did `param = param.to(dtype=torch.float32)` to upcast the token embedding; that only rebinds the loop variable to a new fp32 tensor, so the encoder kept its fp16 embedding and the optimizer was handed a detached-from-the-model copy. The fix writes through the parameter: `param.data = param.to(dtype=torch.float32)`.
import torch
from torch import nn


class TinyTextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding = nn.Embedding(16, 4)
        self.q_proj = nn.Linear(4, 4)

    def forward(self, ids):
        return self.q_proj(self.token_embedding(ids))


def collect_ti_params(text_encoder_one: nn.Module):
    # if we use textual inversion, we freeze all parameters except for the token embeddings
    text_lora_parameters_one = []
    for name, param in text_encoder_one.named_parameters():
        if "token_embedding" in name:
            # ensure that dtype is float32, even if rest of the model that isn't trained is loaded in fp16
            param = param.to(dtype=torch.float32)  # want: B
            param.requires_grad = True
            text_lora_parameters_one.append(param)
        else:
            param.requires_grad = False
    return text_lora_parameters_one


def collect_ti_params_fixed(text_encoder_one: nn.Module):
    text_lora_parameters_one = []
    for name, param in text_encoder_one.named_parameters():
        if "token_embedding" in name:
            # ensure that dtype is float32, even if rest of the model that isn't trained is loaded in fp16
            param.data = param.to(dtype=torch.float32)
            param.requires_grad = True
            text_lora_parameters_one.append(param)
        else:
            param.requires_grad = False
    return text_lora_parameters_one


if __name__ == "__main__":
    for fn in (collect_ti_params, collect_ti_params_fixed):
        torch.manual_seed(0)
        enc = TinyTextEncoder().to(torch.float16)  # weight_dtype = fp16 for the frozen model
        enc.requires_grad_(False)  # the script freezes the text encoders before this branch
        params = fn(enc)
        before = enc.token_embedding.weight.detach().clone()
        opt = torch.optim.SGD(params, lr=1.0)
        for p in params:
            p.grad = torch.ones_like(p)
        opt.step()
        changed = not torch.equal(before, enc.token_embedding.weight.detach())
        print(fn.__name__, "embedding dtype:", enc.token_embedding.weight.dtype, "updated by optimizer:", changed)
        if fn is collect_ti_params:
            assert enc.token_embedding.weight.dtype == torch.float16 and not changed
        else:
            assert enc.token_embedding.weight.dtype == torch.float32 and changed
