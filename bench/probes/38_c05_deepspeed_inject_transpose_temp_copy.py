# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/8028 — deepspeed/module_inject/utils.py transpose() (used when loading TP checkpoint shards into injected inference layers) did data.contiguous(), built a temporary data1 = data.transpose(-1, -2).reshape(-1) and copy_()'d it back, so a non-contiguous shard (a torch.split(..., dim=1) partition in load_checkpoint.py) paid a fresh contiguous copy plus a full-size temporary: 3N peak instead of 2N. The PR replaces the body with a single data.transpose(-1, -2).contiguous().
import torch
from torch.utils._python_dispatch import TorchDispatchMode


def transpose(data):
    with torch.no_grad():
        data = data.contiguous()  # want: C
        data1 = data.transpose(-1, -2).reshape(-1)  # want: C
        data.reshape(-1).copy_(data1)
        data1 = None
    return data.reshape(data.shape[-1], data.shape[-2])


def transpose_fixed(data):
    return data.transpose(-1, -2).contiguous()


class WeightQuantization:
    def __init__(self, mlp_extra_grouping=True, num_groups=1):
        self.q_int8 = True
        self.num_groups = num_groups

    def quantize(self, value_list, quantize_bits=8, groups=1, key=None, parallel_dim=0):
        return torch.nn.parameter.Parameter(value_list, requires_grad=False)


def load_transformer_layer(module, prefix, sd, weight_quantizer, rank, transpose_fn=transpose):

    def load_parameters(module, prefix):
        for n, p in module.named_parameters():
            if prefix + n in sd[0] and len(n.split('.')) == 1:
                tmp_data = sd[0][prefix + n]
                src_shape = tmp_data.shape
                dst_shape = p.shape
                inner_dim, outer_dim = 0, 1
                if len(src_shape) == 2 and len(dst_shape) == 2:
                    if src_shape[inner_dim] == dst_shape[0] and src_shape[outer_dim] == dst_shape[1]:
                        p = weight_quantizer.quantize(transpose_fn(tmp_data) if weight_quantizer.q_int8 else tmp_data)
                        setattr(module, n, p)
                    else:
                        dim = inner_dim if src_shape[inner_dim] != dst_shape[0] else outer_dim
                        dim1 = 0 if src_shape[inner_dim] != dst_shape[0] else 1
                        weight_partition = torch.split(tmp_data, dst_shape[dim1], dim=dim)[rank]
                        weight_partition = weight_quantizer.quantize(
                            transpose_fn(weight_partition),
                            parallel_dim=(0 if dim == 1 else 1)) if weight_quantizer.q_int8 else \
                            weight_quantizer.quantize(weight_partition)
                        setattr(module, n, weight_partition)
                elif src_shape[0] == dst_shape[0]:
                    p.data.copy_(tmp_data)
                else:
                    p.data.copy_(torch.split(tmp_data, dst_shape[-1])[rank].contiguous())

    load_parameters(module, prefix)
    for n, child in module.named_children():
        load_parameters(child, prefix + n + '.')


class FreshBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.nbytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        flat_in = [a for a in list(args) + list((kwargs or {}).values()) if isinstance(a, torch.Tensor)]
        ptrs = {a.untyped_storage().data_ptr() for a in flat_in}
        if isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() not in ptrs:
            self.nbytes += out.numel() * out.element_size()
        return out


class AttnOut(torch.nn.Module):
    def __init__(self, hidden, tp):
        super().__init__()
        self.attn_ow = torch.nn.Parameter(torch.empty(hidden, hidden // tp))
        self.attn_ob = torch.nn.Parameter(torch.empty(hidden // tp))


if __name__ == "__main__":
    torch.manual_seed(0)
    hidden, tp, rank = 8, 2, 1
    sd = [{"layer.attn_ow": torch.randn(hidden, hidden), "layer.attn_ob": torch.randn(hidden // tp)}]
    layers = {}
    for fn in (transpose, transpose_fixed):
        layer = AttnOut(hidden, tp)
        load_transformer_layer(layer, "layer.", sd, WeightQuantization(), rank, transpose_fn=fn)
        layers[fn] = layer
    expected = torch.split(sd[0]["layer.attn_ow"], hidden // tp, dim=1)[rank].t()
    assert torch.equal(layers[transpose].attn_ow, expected)
    assert torch.equal(layers[transpose_fixed].attn_ow, expected)

    shard = torch.split(torch.randn(64, 128), 64, dim=1)[1]
    assert not shard.is_contiguous()
    with FreshBytes() as fb:
        out_b = transpose(shard)
    with FreshBytes() as ff:
        out_f = transpose_fixed(shard)
    assert torch.equal(out_b, out_f)
    shard_bytes = shard.numel() * shard.element_size()
    assert ff.nbytes == shard_bytes
    assert fb.nbytes == 2 * shard_bytes
    print("ok", fb.nbytes, ff.nbytes)
