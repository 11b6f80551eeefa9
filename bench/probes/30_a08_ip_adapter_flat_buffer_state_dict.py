# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/128219 — an IP-Adapter trainer's save_ip_adapter_weight() did `torch.save(ip_layers.state_dict(), path)` while the trained parameters were views of one big flattened training buffer, so the 64 small tensors produced a 1.6 GB file (and each per-key save was 1.6 GB); the maintainers' answer, confirmed by the reporter, was to .clone() the state-dict tensors before saving.
import io

import torch
import torch.nn as nn


def flatten_into_buffer(params):
    """What ZeRO-1/2 style wrappers do: every trainable param becomes a view of one flat buffer."""
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    offset = 0
    for p in params:
        n = p.numel()
        p.data = flat.narrow(0, offset, n).view_as(p)
        offset += n
    return flat


class IPAttnProcessor(nn.Module):
    def __init__(self, hidden_size, cross_attention_dim):
        super().__init__()
        self.to_k_ip = nn.Linear(cross_attention_dim, hidden_size, bias=False)
        self.to_v_ip = nn.Linear(cross_attention_dim, hidden_size, bias=False)


class AttnProcessor:
    """Plain (parameter-free) processor used for self-attention layers."""


class ImageProjModel(nn.Module):
    def __init__(self, clip_dim, cross_attention_dim, tokens=4):
        super().__init__()
        self.proj = nn.Linear(clip_dim, cross_attention_dim * tokens)


class FakeUNet(nn.Module):
    def __init__(self, n_layers=8, hidden=64, cross=96):
        super().__init__()
        self.attn_processors = {}
        for i in range(n_layers):
            self.attn_processors[f"down.{i}.attn1.processor"] = AttnProcessor()
            self.attn_processors[f"down.{i}.attn2.processor"] = IPAttnProcessor(hidden, cross)
        self.ip_modules = nn.ModuleList([p for p in self.attn_processors.values() if isinstance(p, nn.Module)])


class IPAdapterTrainer:
    def __init__(self, unet, image_proj_model):
        self.unet = unet
        self.image_proj_model = image_proj_model
        self.use_ip_adapter = True
        trainable = list(image_proj_model.parameters()) + list(unet.ip_modules.parameters())
        self.flat_buffer = flatten_into_buffer(trainable)

    def save_ip_adapter_weight(self, weight_save_path):
        assert self.use_ip_adapter
        filtered_attn_processors = {k: self.unet.attn_processors[k] for k in self.unet.attn_processors
                                    if isinstance(self.unet.attn_processors[k], torch.nn.Module)}
        ip_layers = torch.nn.ModuleList(filtered_attn_processors.values())
        torch.save(ip_layers.state_dict(), weight_save_path)  # want: A


class IPAdapterTrainerFixed(IPAdapterTrainer):
    def save_ip_adapter_weight(self, weight_save_path):
        assert self.use_ip_adapter
        filtered_attn_processors = {k: self.unet.attn_processors[k] for k in self.unet.attn_processors
                                    if isinstance(self.unet.attn_processors[k], torch.nn.Module)}
        ip_layers = torch.nn.ModuleList(filtered_attn_processors.values())
        state_dict = {k: v.clone() for k, v in ip_layers.state_dict().items()}
        torch.save(state_dict, weight_save_path)


if __name__ == "__main__":
    torch.manual_seed(0)
    bad = IPAdapterTrainer(FakeUNet(), ImageProjModel(clip_dim=1024, cross_attention_dim=96))
    torch.manual_seed(0)
    good = IPAdapterTrainerFixed(FakeUNet(), ImageProjModel(clip_dim=1024, cross_attention_dim=96))
    f_bad, f_good = io.BytesIO(), io.BytesIO()
    bad.save_ip_adapter_weight(f_bad)
    good.save_ip_adapter_weight(f_good)
    payload = sum(p.numel() * 4 for p in bad.unet.ip_modules.parameters())
    size_bad, size_good = f_bad.tell(), f_good.tell()
    print(f"ip payload {payload} B  flat buffer {bad.flat_buffer.numel() * 4} B  buggy file {size_bad} B  fixed file {size_good} B")
    f_bad.seek(0)
    f_good.seek(0)
    sd_bad, sd_good = torch.load(f_bad), torch.load(f_good)
    assert all(torch.equal(sd_bad[k], sd_good[k]) for k in sd_good)
    assert size_bad > 4 * size_good
