# source: Comfy-Org/ComfyUI https://github.com/Comfy-Org/ComfyUI/pull/9159 — conds were moved to the GPU in fp32 by CONDRegular.process_cond(...).to(device) and then cast again with context.to(dtype) in BaseModel._apply_model, so every sampling step held an fp32 and an fp16 copy on the device; the fix keeps conds where they are and does one cast_to_device(context, device, dtype) ("casting at the same time as device transfer").
import torch
import torch.nn as nn


def repeat_to_batch_size(tensor, batch_size):
    if tensor.shape[0] > batch_size:
        return tensor[:batch_size]
    elif tensor.shape[0] < batch_size:
        return tensor.repeat([-(-batch_size // tensor.shape[0])] + [1] * (len(tensor.shape) - 1))[:batch_size]
    return tensor


def cast_to_device(tensor, device, dtype, copy=False):
    return tensor.to(device=device, dtype=dtype, copy=copy)


class CONDRegular:
    def __init__(self, cond):
        self.cond = cond

    def _copy_with(self, cond):
        return self.__class__(cond)

    def process_cond(self, batch_size, device, **kwargs):
        return self._copy_with(repeat_to_batch_size(self.cond, batch_size).to(device))  # want: C


class CONDRegularFixed(CONDRegular):
    def process_cond(self, batch_size, **kwargs):
        return self._copy_with(repeat_to_batch_size(self.cond, batch_size))


class TinyUNet(nn.Module):
    def __init__(self, ch=4, ctx_dim=32):
        super().__init__()
        self.inp = nn.Conv2d(ch, ch, 1)
        self.ctx = nn.Linear(ctx_dim, ch)

    def forward(self, x, timesteps, context=None, y=None):
        h = self.inp(x) + self.ctx(context.mean(1))[:, :, None, None]
        return h if y is None else h + y[:, :1, None, None]


class BaseModel(nn.Module):
    def __init__(self, dtype=torch.float16):
        super().__init__()
        self.diffusion_model = TinyUNet().to(dtype)
        self.dtype = dtype

    def get_dtype(self):
        return self.dtype

    def _apply_model(self, x, t, c_crossattn=None, **kwargs):
        xc = x / (t[:, None, None, None] ** 2 + 1.0) ** 0.5
        context = c_crossattn
        dtype = self.get_dtype()
        xc = xc.to(dtype)
        if context is not None:
            context = context.to(dtype)  # want: C
        extra_conds = {}
        for o in kwargs:
            extra = kwargs[o]
            if hasattr(extra, "dtype"):
                if extra.dtype != torch.int and extra.dtype != torch.long:
                    extra = extra.to(dtype)  # maybe: C (second half of the same double conversion for extra conds)
            extra_conds[o] = extra
        return self.diffusion_model(xc, t, context=context, **extra_conds).float()


class BaseModelFixed(BaseModel):
    def _apply_model(self, x, t, c_crossattn=None, **kwargs):
        xc = x / (t[:, None, None, None] ** 2 + 1.0) ** 0.5
        context = c_crossattn
        dtype = self.get_dtype()
        xc = xc.to(dtype)
        device = xc.device
        if context is not None:
            context = cast_to_device(context, device, dtype)
        extra_conds = {}
        for o in kwargs:
            extra = kwargs[o]
            if hasattr(extra, "dtype") and extra.dtype != torch.int and extra.dtype != torch.long:
                extra = cast_to_device(extra, device, dtype)
            extra_conds[o] = extra
        return self.diffusion_model(xc, t, context=context, **extra_conds).float()


def get_area_and_mult(model_conds, x_in, fixed):
    conditioning = {}
    for c in model_conds:
        if fixed:
            conditioning[c] = model_conds[c].process_cond(batch_size=x_in.shape[0])
        else:
            conditioning[c] = model_conds[c].process_cond(batch_size=x_in.shape[0], device=x_in.device)
    return {k: v.cond for k, v in conditioning.items()}


if __name__ == "__main__":
    torch.manual_seed(0)
    ctx = torch.randn(1, 77, 32)  # text-encoder output, fp32 on the host
    # "meta" plays the GPU: show what the sampler leaves on the device before the model casts it
    x_dev = torch.empty(2, 4, 8, 8, device="meta")
    staged = get_area_and_mult({"c_crossattn": CONDRegular(ctx)}, x_dev, fixed=False)["c_crossattn"]
    print("buggy: cond staged on", staged.device, "as", staged.dtype,
          "-> _apply_model casts it again to fp16 (two device copies)")
    staged_f = get_area_and_mult({"c_crossattn": CONDRegularFixed(ctx)}, x_dev, fixed=True)["c_crossattn"]
    print("fixed: cond stays on", staged_f.device, "until one cast_to_device ->",
          cast_to_device(staged_f, "meta", torch.float16).device)

    x, t = torch.randn(2, 4, 8, 8), torch.tensor([1.0, 2.0])
    buggy, fixed = BaseModel(torch.float32), BaseModelFixed(torch.float32)
    fixed.load_state_dict(buggy.state_dict())
    out_b = buggy._apply_model(x, t, **get_area_and_mult({"c_crossattn": CONDRegular(ctx)}, x, False))
    out_f = fixed._apply_model(x, t, **get_area_and_mult({"c_crossattn": CONDRegularFixed(ctx)}, x, True))
    assert torch.allclose(out_b, out_f)
    print("outputs match")
