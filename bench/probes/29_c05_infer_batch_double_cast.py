# source: TissueImageAnalytics/tiatoolbox https://github.com/TissueImageAnalytics/tiatoolbox/pull/1073 — the models' infer_batch did `patch_imgs.to(device).type(torch.float32)`, two chained conversions that materialise an intermediate device tensor in the source dtype (float64 from NumPy-backed loaders, which MPS cannot even hold) before casting; the fix does a single `.to(device=device, dtype=torch.float32)`.
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode


class HoVerNet(nn.Module):
    """Tiny stand-in keeping the HoVerNet output-dict interface (np / hv / tp heads)."""

    def __init__(self, num_types=3):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.np = nn.Conv2d(8, 2, 1)
        self.hv = nn.Conv2d(8, 2, 1)
        self.tp = nn.Conv2d(8, num_types, 1)

    def forward(self, imgs):
        imgs = imgs / 255.0
        feat = torch.relu(self.stem(imgs))
        return OrderedDict(np=self.np(feat), hv=self.hv(feat), tp=self.tp(feat))

    @staticmethod
    def infer_batch(model, batch_data, *, device):
        patch_imgs = batch_data

        patch_imgs_gpu = patch_imgs.to(device).type(torch.float32)  # want: C
        patch_imgs_gpu = patch_imgs_gpu.permute(0, 3, 1, 2).contiguous()  # to NCHW

        model.eval()  # infer mode

        # --------------------------------------------------------------
        with torch.inference_mode():
            pred_dict = model(patch_imgs_gpu)
            pred_dict = OrderedDict(
                [[k, v.permute(0, 2, 3, 1).contiguous()] for k, v in pred_dict.items()],
            )
            pred_dict["np"] = F.softmax(pred_dict["np"], dim=-1)[..., 1:]
            if "tp" in pred_dict:
                type_map = F.softmax(pred_dict["tp"], dim=-1)
                type_map = torch.argmax(type_map, dim=-1, keepdim=True)
                type_map = type_map.type(torch.float32)
                pred_dict["tp"] = type_map
            pred_dict = {k: v.cpu().numpy() for k, v in pred_dict.items()}

        if "tp" in pred_dict:
            return pred_dict["np"], pred_dict["hv"], pred_dict["tp"]
        return pred_dict["np"], pred_dict["hv"]


class HoVerNetFixed(HoVerNet):
    @staticmethod
    def infer_batch(model, batch_data, *, device):
        patch_imgs = batch_data

        patch_imgs_gpu = patch_imgs.to(device=device, dtype=torch.float32)
        patch_imgs_gpu = patch_imgs_gpu.permute(0, 3, 1, 2).contiguous()  # to NCHW

        model.eval()  # infer mode

        # --------------------------------------------------------------
        with torch.inference_mode():
            pred_dict = model(patch_imgs_gpu)
            pred_dict = OrderedDict(
                [[k, v.permute(0, 2, 3, 1).contiguous()] for k, v in pred_dict.items()],
            )
            pred_dict["np"] = F.softmax(pred_dict["np"], dim=-1)[..., 1:]
            if "tp" in pred_dict:
                type_map = F.softmax(pred_dict["tp"], dim=-1)
                type_map = torch.argmax(type_map, dim=-1, keepdim=True)
                type_map = type_map.type(torch.float32)
                pred_dict["tp"] = type_map
            pred_dict = {k: v.cpu().numpy() for k, v in pred_dict.items()}

        if "tp" in pred_dict:
            return pred_dict["np"], pred_dict["hv"], pred_dict["tp"]
        return pred_dict["np"], pred_dict["hv"]


class CountToCopy(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.copies = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func is torch.ops.aten._to_copy.default:
            self.copies.append((str(out.device), out.dtype))
        return out


def count_input_copies(infer_batch, batch):
    meta_model = HoVerNet().to("meta")
    with CountToCopy() as mode:
        try:
            infer_batch(meta_model, batch, device="meta")
        except (NotImplementedError, RuntimeError):
            pass  # meta tensors cannot be copied back to numpy; we only care about the input copies
    return [c for c in mode.copies if c[0] == "meta"][:2]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = HoVerNet()
    # DataLoader output from a NumPy-backed dataset: float64 NHWC on the host
    batch = torch.from_numpy(np.random.rand(2, 16, 16, 3) * 255.0)

    out_a = HoVerNet.infer_batch(model, batch, device="cpu")
    out_b = HoVerNetFixed.infer_batch(model, batch, device="cpu")
    for a, b in zip(out_a, out_b):
        assert np.allclose(a, b)

    # "meta" stands in for the accelerator: the chained form ships float64 there, then casts
    copies_a = count_input_copies(HoVerNet.infer_batch, batch)
    copies_b = count_input_copies(HoVerNetFixed.infer_batch, batch)
    print("device-side copies of the input, buggy:", copies_a)
    print("device-side copies of the input, fixed:", copies_b)
    assert copies_a[0][1] == torch.float64 and copies_b[0][1] == torch.float32
