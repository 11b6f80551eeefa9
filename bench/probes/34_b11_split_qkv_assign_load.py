# source: TransformerLensOrg/TransformerLens https://github.com/TransformerLensOrg/TransformerLens/pull/1660 — JointQKVAttentionBridge's q/k/v sub-layers hold Parameters that are `tensor_split` views of the fused c_attn weight; `load_state_dict(..., assign=True)` replaced those Parameter objects, so the loaded values never reached c_attn and `save_pretrained()` exported stale weights (issue #1637). The fix routes view-backed targets through an in-place `.data.copy_()`.
import torch
import torch.nn as nn


class JointQKVAttentionBridge(nn.Module):
    def __init__(self, d_model=16):
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model, bias=False)  # the original HF module
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.set_original_component(self.c_attn)

    def set_original_component(self, c_attn):
        q_w, k_w, v_w = torch.tensor_split(c_attn.weight, 3, dim=0)
        self.q.weight = nn.Parameter(q_w)  # storage-sharing views of c_attn.weight
        self.k.weight = nn.Parameter(k_w)
        self.v.weight = nn.Parameter(v_w)

    def forward(self, x):
        return self.q(x), self.k(x), self.v(x)

    def load_bridge_weights(self, state_dict, assign=True):
        sub = {k: v for k, v in state_dict.items() if not k.startswith("c_attn.")}
        return self.load_state_dict(sub, strict=False, assign=assign)  # maybe: B (assign=True rebinds view-backed params; writes never reach c_attn)

    def original_state_dict(self):
        # what save_pretrained() exports
        return {"c_attn.weight": self.c_attn.weight.detach().clone()}


def _is_view_backed(t):
    return t.numel() * t.element_size() < t.untyped_storage().nbytes()


class JointQKVAttentionBridgeFixed(JointQKVAttentionBridge):
    def load_bridge_weights(self, state_dict, assign=True):
        sub = {k: v for k, v in state_dict.items() if not k.startswith("c_attn.")}
        params = dict(self.named_parameters())
        rest = {}
        with torch.no_grad():
            for key, value in sub.items():
                target = params.get(key)
                if target is not None and _is_view_backed(target):
                    if target.shape != value.shape:
                        raise RuntimeError(f"shape mismatch for view-backed {key}")
                    target.data.copy_(value)
                else:
                    rest[key] = value
        return self.load_state_dict(rest, strict=False, assign=assign)


if __name__ == "__main__":
    torch.manual_seed(0)
    finetuned = {name: torch.randn(16, 16) for name in ("q.weight", "k.weight", "v.weight")}
    expected = torch.cat([finetuned["q.weight"], finetuned["k.weight"], finetuned["v.weight"]])
    for cls in (JointQKVAttentionBridge, JointQKVAttentionBridgeFixed):
        torch.manual_seed(1)
        bridge = cls()
        bridge.load_bridge_weights(finetuned, assign=True)
        fwd_ok = torch.equal(bridge.q.weight, finetuned["q.weight"])
        export_ok = torch.equal(bridge.original_state_dict()["c_attn.weight"], expected)
        print(f"{cls.__name__:30s} forward uses new q: {fwd_ok}  exported c_attn updated: {export_ok}")
    torch.manual_seed(1)
    b = JointQKVAttentionBridge()
    b.load_bridge_weights(finetuned, assign=True)
    assert not torch.equal(b.original_state_dict()["c_attn.weight"], expected)
