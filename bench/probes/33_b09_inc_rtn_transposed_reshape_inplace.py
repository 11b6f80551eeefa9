# source: intel/neural-compressor https://github.com/intel/neural-compressor/pull/1703 — after quant_weight() was made in-place (#1511) RTN results were wrong: for a non-contiguous weight (group along the output dim, i.e. a transposed view) `weight.reshape(-1, group_size)` returns a copy, the in-place qdq modified that copy and the caller, which ignores the return value, kept the float weight. The fix keeps `orig_weight` and does `orig_weight.copy_(weight)` after reshaping back.
import torch
import torch.nn as nn


def qdq_weight_sym(weight, num_bits=4, quantile=1.0, full_range=False):
    maxq = torch.tensor(2 ** (num_bits - 1) - 1)
    minq = torch.tensor(-(2 ** (num_bits - 1)))
    if num_bits == 1:
        maxq = torch.tensor(2 ** (num_bits - 1))
        minq = torch.tensor(2 ** (num_bits - 1) - 1)
    wmax = torch.abs(weight).max(1)[0]
    wmax = wmax * quantile
    tmp = wmax == 0
    wmax[tmp] = +1
    if full_range:
        scale = wmax / (-minq)
    else:
        scale = wmax / maxq
    scale.unsqueeze_(dim=-1)
    weight.div_(scale)
    weight.round_()
    weight.clamp_(minq, maxq)
    return weight.mul_(scale)


def quant_weight(weight, num_bits=4, group_size=-1, scheme="sym", quantile=1.0, full_range=False):
    """Quant and dequant tensor with group size. It is an in-place op."""
    if group_size == -1 or weight.shape[1] < group_size:
        return qdq_weight_sym(weight, num_bits, quantile, full_range)
    orig_shape = weight.shape
    if weight.shape[1] % group_size == 0:
        weight = weight.reshape(-1, group_size)  # want: B
        qdq_weight_sym(weight, num_bits, quantile, full_range)
        return weight.reshape(orig_shape)
    split_index = weight.shape[1] // group_size * group_size
    weight1 = weight[:, :split_index].reshape(-1, group_size)
    qdq_weight_sym(weight1, num_bits, quantile, full_range)
    weight2 = weight[:, split_index:]
    qdq_weight_sym(weight2, num_bits, quantile, full_range)
    weight.copy_(torch.cat([weight1.reshape(orig_shape[0], split_index), weight2], dim=1))
    return weight


def quant_weight_fixed(weight, num_bits=4, group_size=-1, scheme="sym", quantile=1.0, full_range=False):
    """Quant and dequant tensor with group size. It is an in-place op."""
    if group_size == -1 or weight.shape[1] < group_size:
        return qdq_weight_sym(weight, num_bits, quantile, full_range)
    orig_shape = weight.shape
    if weight.shape[1] % group_size == 0:
        orig_weight = weight
        weight = weight.reshape(-1, group_size)
        qdq_weight_sym(weight, num_bits, quantile, full_range)
        weight = weight.reshape(orig_shape)
        orig_weight.copy_(weight)
        return orig_weight
    split_index = weight.shape[1] // group_size * group_size
    weight1 = weight[:, :split_index].reshape(-1, group_size)
    qdq_weight_sym(weight1, num_bits, quantile, full_range)
    weight2 = weight[:, split_index:]
    qdq_weight_sym(weight2, num_bits, quantile, full_range)
    weight.copy_(torch.cat([weight1.reshape(orig_shape[0], split_index), weight2], dim=1))
    return weight


def rtn_quantize(model, num_bits=4, group_size=32, scheme="sym", group_dim=1, quant_fn=quant_weight):
    supported_layers = (torch.nn.Linear,)
    with torch.no_grad():
        for name, m in model.named_modules():
            if not isinstance(m, supported_layers):
                continue
            # group_dim == 0 splits along the output channel: quantize the transposed view
            weight = m.weight.T if group_dim == 0 else m.weight
            quant_fn(weight.data, num_bits, group_size, scheme)  # in-place mode
    return model


def n_unique(t):
    return [len(torch.unique(row)) for row in t[:2]]


if __name__ == "__main__":
    for name, fn in (("buggy", quant_weight), ("fixed", quant_weight_fixed)):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 64))
        orig = [m.weight.detach().clone() for m in model if isinstance(m, nn.Linear)]
        rtn_quantize(model, num_bits=4, group_size=16, group_dim=0, quant_fn=fn)
        after = [m.weight.detach() for m in model if isinstance(m, nn.Linear)]
        unchanged = all(torch.equal(a, b) for a, b in zip(orig, after))
        print(f"{name}: weights unchanged after RTN = {unchanged}; distinct values per column group ~ {n_unique(after[0].T.reshape(-1, 16))}")
        assert unchanged == (name == "buggy")
