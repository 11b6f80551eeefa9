# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/4417 — VllmEplbAdaptor applied dynamic-EPLB rebalancing by rebinding instead of writing: `do_update_expert_weight` looped `for expert_tensor, buffer_tensor in zip(...)` and did `expert_tensor = buffer_tensor.clone()`, and `do_update_expert_map` replaced the dict slot that was meant to alias the layer's expert_map; so neither the expert weights nor the map ever changed ("dep ineffective"). The fix writes in place with `expert_tensor.copy_(buffer_tensor)` and `self.expert_map_per_layer[layer_id].copy_(updated_expert_map)`.
import torch
from torch import nn


class FakeMoE(nn.Module):
    def __init__(self, num_local_experts=2, hidden=4):
        super().__init__()
        self.w13_weight = nn.Parameter(torch.zeros(num_local_experts, hidden, hidden), requires_grad=False)
        self.w2_weight = nn.Parameter(torch.zeros(num_local_experts, hidden, hidden), requires_grad=False)
        self.expert_map = torch.tensor([0, 1, -1, -1])

    def get_expert_map(self):
        return self.expert_map


class VllmEplbAdaptor:
    expert_weight_names = ["w13_weight", "w2_weight"]

    def __init__(self, layers):
        self.layers = layers
        # reference to expert map on device for expert map update
        self.expert_map_per_layer = {i: layer.get_expert_map() for i, layer in enumerate(layers)}
        self.buffer_tensor_list = [[torch.full((4, 4), 7.0) for _ in self.expert_weight_names]]
        self.expert_param_per_layer = {
            i: [[getattr(layer, n).data[e] for n in self.expert_weight_names] for e in range(2)]
            for i, layer in enumerate(layers)
        }

    def do_update_expert_map(self, layer_id, updated_expert_map):
        self.expert_map_per_layer[layer_id] = updated_expert_map.clone()  # maybe: B (dict slot rebound; wrong only because the dict aliases layer.expert_map)

    def do_update_expert_weight(self, layer_id, local_expert_to_replace, buffer_tensor_id):
        for expert_tensor, buffer_tensor in zip(
                self.expert_param_per_layer[layer_id][local_expert_to_replace],
                self.buffer_tensor_list[buffer_tensor_id]):
            expert_tensor = buffer_tensor.clone()  # want: B


class VllmEplbAdaptorFixed(VllmEplbAdaptor):
    def do_update_expert_map(self, layer_id, updated_expert_map):
        self.expert_map_per_layer[layer_id].copy_(updated_expert_map)

    def do_update_expert_weight(self, layer_id, local_expert_to_replace, buffer_tensor_id):
        for expert_tensor, buffer_tensor in zip(
                self.expert_param_per_layer[layer_id][local_expert_to_replace],
                self.buffer_tensor_list[buffer_tensor_id]):
            expert_tensor.copy_(buffer_tensor)


if __name__ == "__main__":
    for cls in (VllmEplbAdaptor, VllmEplbAdaptorFixed):
        layer = FakeMoE()
        adaptor = cls([layer])
        adaptor.do_update_expert_weight(0, local_expert_to_replace=1, buffer_tensor_id=0)
        adaptor.do_update_expert_map(0, torch.tensor([-1, 0, 1, -1]))
        w_ok = bool((layer.w13_weight[1] == 7).all() and (layer.w2_weight[1] == 7).all())
        m_ok = layer.expert_map.tolist() == [-1, 0, 1, -1]
        print(cls.__name__, "expert weights updated:", w_ok, "expert map updated:", m_ok)
        assert (w_ok and m_ok) == (cls is VllmEplbAdaptorFixed)
