# source: pytorch/tutorials https://github.com/pytorch/tutorials/pull/1613 — "Fix contiguous usage in tutorials": tutorial code called `.contiguous(...)` as a bare statement, expecting it to convert the tensor in place. `contiguous` never mutates self; it only returns a contiguous copy when the layout differs, so the call produced a channels-last copy that was thrown away and the model kept receiving the NCHW input. The fix captures the return value (`x = x.contiguous(...)`) and uses it for later operations.
import torch
import torch.nn as nn


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.conv2(self.relu(self.bn1(self.conv1(x))))


def prepare_for_inference(model, input_tensor):
    model = model.eval()
    model = model.to(memory_format=torch.channels_last)
    input_tensor.contiguous(memory_format=torch.channels_last)  # want: B
    return model, input_tensor


def prepare_for_inference_fixed(model, input_tensor):
    model = model.eval()
    model = model.to(memory_format=torch.channels_last)
    input_tensor = input_tensor.contiguous(memory_format=torch.channels_last)
    return model, input_tensor


def benchmark(prepare, model, input_tensor, iters=2):
    model, input_tensor = prepare(model, input_tensor)
    with torch.no_grad():
        for _ in range(iters):
            out = model(input_tensor)
    return out, input_tensor


if __name__ == "__main__":
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    out_a, xa = benchmark(prepare_for_inference, ConvNet(), x.clone())
    torch.manual_seed(0)
    out_b, xb = benchmark(prepare_for_inference_fixed, ConvNet(), x.clone())
    assert not xa.is_contiguous(memory_format=torch.channels_last)
    assert xb.is_contiguous(memory_format=torch.channels_last)
    assert torch.allclose(out_a, out_b, atol=1e-4)
    print("ok")
