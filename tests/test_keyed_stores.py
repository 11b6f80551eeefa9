"""A store under a written-out key (`meta["zero"] = t`) puts the value under that key of a mapping whose keys are
known, and leaves the other keys alone: a flag kept beside tensors in one dict (hqq's `meta["quant_scale"]`) is not a
tensor because another key holds one. The runtime check shows what the snippet's dict really holds."""

import textwrap

import pytest

from conftest import lint_both_paths

# hqq's quantized linear layer: a dict of metadata kept in `self.meta`, tensors under some keys, flags and sizes under
# others; `dequantize` (run by `forward`) stores tensors under two keys through a local alias.
META_LAYER = textwrap.dedent('''\
    import torch


    class Quantizer:
        @classmethod
        def dequantize(cls, W_q, meta):
            return W_q.float() * meta.get("scale", 1.0)


    class QuantLinear(torch.nn.Module):
        def __init__(self, W_q, zero_q, scale_q, quant_zero, quant_scale):
            super().__init__()
            self.W_q = W_q
            self.meta = {"nbits": 4, "quant_zero": quant_zero, "quant_scale": quant_scale, "zero_q": zero_q,
                         "scale_q": scale_q, "meta_zero": {}, "meta_scale": {}}

        def dequantize(self):
            W_q, meta = self.W_q, self.meta
            device = W_q.device
            if meta["quant_zero"]:
                meta["zero"] = Quantizer.dequantize(meta["zero_q"].to(device=device), meta["meta_zero"])
            if meta["quant_scale"]:
                meta["scale"] = Quantizer.dequantize(meta["scale_q"].to(device=device), meta["meta_scale"])
            if meta["zero"].isnan().any():
                raise ValueError("bad zero point")
            return W_q

        def forward(self, x):
            return x @ self.dequantize()
''')


def test_a_flag_beside_tensors_in_one_dict_is_not_a_tensor():
    found = lint_both_paths(META_LAYER)
    # The two `if meta["quant_…"]:` tests read bools; the test of the stored zero point is a sync.
    assert (20, "VL403") not in found and (22, "VL403") not in found
    assert (24, "VL403") in found


def test_local_dict_keys_stay_apart():
    source = textwrap.dedent('''\
        import torch


        class Head(torch.nn.Module):
            def forward(self, x):
                state = {"steps": 0, "ready": True}
                state["hidden"] = torch.zeros(3, device="cuda")
                if state["ready"]:
                    x = x + 1
                if state["hidden"].any():
                    x = x - 1
                return x
    ''')
    found = lint_both_paths(source)
    assert (8, "VL403") not in found
    assert (10, "VL403") in found


def test_a_key_stored_on_one_path_joins_key_by_key():
    source = textwrap.dedent('''\
        import torch


        class Head(torch.nn.Module):
            def forward(self, x, flag):
                state = {"ready": True, "hidden": None}
                if flag:
                    state["hidden"] = torch.zeros(3, device="cuda")
                if state["ready"]:
                    x = x + 1
                return x
    ''')
    assert (9, "VL403") not in lint_both_paths(source)


def test_the_layer_really_keeps_flags_beside_tensors():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(META_LAYER, "meta_layer.py", "exec"), namespace)
    layer = namespace["QuantLinear"](torch.ones(2, 2), torch.zeros(2), torch.ones(2), True, False)
    layer(torch.ones(1, 2))
    assert isinstance(layer.meta["quant_scale"], bool)
    assert isinstance(layer.meta["zero"], torch.Tensor)
