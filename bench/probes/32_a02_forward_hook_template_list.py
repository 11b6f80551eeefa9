# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/20705 — a forward hook on vgg13.features[5] appended output.detach() to a module-level list to keep a template feature map; detach() shares storage with the conv output, so the following ReLU(inplace=True) overwrote the stored map (its negative values became 0); the fix is to store output.detach().clone().
import torch
import torch.nn as nn


def make_vgg_like_features():
    # same indexing as torchvision vgg13().features[:7]: conv, relu, conv, relu, pool, conv(5), relu(6, inplace)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(2, 2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
    )


template_feature_map = []


def save_template_feature_map(self, input, output):
    template_feature_map.append(output.detach())  # want: A


def extract_template(vgg_feature, template):
    template_handle = vgg_feature[5].register_forward_hook(save_template_feature_map)
    with torch.no_grad():
        vgg_feature(template)
    template_handle.remove()
    return template_feature_map[-1]


# ---------------------------------------------------------------- fixed version
template_feature_map_fixed = []


def save_template_feature_map_fixed(self, input, output):
    template_feature_map_fixed.append(output.detach().clone())


def extract_template_fixed(vgg_feature, template):
    handle = vgg_feature[5].register_forward_hook(save_template_feature_map_fixed)
    with torch.no_grad():
        vgg_feature(template)
    handle.remove()
    return template_feature_map_fixed[-1]


if __name__ == "__main__":
    torch.manual_seed(0)
    vgg_feature = make_vgg_like_features().eval()
    template = torch.randn(1, 3, 32, 32)
    bad = extract_template(vgg_feature, template)
    good = extract_template_fixed(vgg_feature, template)
    ref = vgg_feature[:6](template).detach()  # conv5 output before the in-place ReLU
    print("stored min (detach view):", bad.min().item(), " stored min (clone):", good.min().item())
    assert bad.min() >= 0 and good.min() < 0
    assert torch.allclose(good, ref) and not torch.allclose(bad, ref)
