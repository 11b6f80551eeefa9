# source: vllm-project/vllm https://github.com/vllm-project/vllm/issues/48941 — "[RFC] Recursive Tensor Collector: Fix CUDA Graph Invalidation After Weight Reload": `reload_weights()` does not re-capture CUDA graphs, so correctness rests on copying reloaded values back into the tensors whose data_ptr the graphs burned in. The copy-back only covered registered parameters, while `process_weights_after_loading` also rebinds derived plain tensor attributes (e.g. a transposed/contiguous copy of the weight); after reload those attributes point at new storage and the graph keeps reading stale values. The RFC's fix keeps the original storage by copying the re-derived values back into it (the fixed variant here does that copy for the derived attribute directly).
import torch
from torch import nn


class UnquantizedLinearMethod:
    def process_weights_after_loading(self, layer):
        layer.weight_t = layer.weight.data.t().contiguous()  # want: B

    def apply(self, layer, x):
        return x @ layer.weight_t


class LinearBase(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features), requires_grad=False)
        self.quant_method = UnquantizedLinearMethod()

    def forward(self, x):
        return self.quant_method.apply(self, x)


def _collect_params(layer):
    return {name: p.data for name, p in layer.named_parameters(recurse=False)}


def _copy_back(layer, original):
    for name, old in original.items():
        new = getattr(layer, name)
        new = new.data if isinstance(new, nn.Parameter) else new
        if new.data_ptr() != old.data_ptr():
            old.copy_(new)
            if isinstance(getattr(layer, name), nn.Parameter):
                getattr(layer, name).data = old
            else:
                setattr(layer, name, old)


@torch.no_grad()
def reload_weights(layer, new_weight, collect=_collect_params):
    original = collect(layer)
    layer.weight.data = new_weight.clone()
    layer.quant_method.process_weights_after_loading(layer)
    _copy_back(layer, original)


class UnquantizedLinearMethodFixed(UnquantizedLinearMethod):
    def process_weights_after_loading(self, layer):
        weight_t = layer.weight.data.t()
        old = getattr(layer, "weight_t", None)
        if old is not None and old.shape == weight_t.shape:
            old.copy_(weight_t)
        else:
            layer.weight_t = weight_t.contiguous()


if __name__ == "__main__":
    for method_cls, expect_stale in ((UnquantizedLinearMethod, True), (UnquantizedLinearMethodFixed, False)):
        torch.manual_seed(0)
        layer = LinearBase(4, 3)
        layer.quant_method = method_cls()
        with torch.no_grad():
            layer.weight.copy_(torch.randn(3, 4))
        layer.quant_method.process_weights_after_loading(layer)
        graph_weight_t = layer.weight_t  # address burned into the graph
        snapshot = graph_weight_t.clone()
        reload_weights(layer, torch.randn(3, 4))
        assert not torch.equal(layer.weight.t(), snapshot)
        assert torch.equal(graph_weight_t, snapshot) == expect_stale
        assert torch.equal(graph_weight_t, layer.weight.t()) == (not expect_stale)
    print("ok")
