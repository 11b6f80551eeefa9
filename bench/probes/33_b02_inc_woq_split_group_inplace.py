# source: intel/neural-compressor https://github.com/intel/neural-compressor/pull/1546 — quant_weight() became an in-place op (callers pass m.weight.data and ignore the return), but when in_features is not a multiple of group_size the left part is `weight[:, :split_index].reshape(-1, group_size)`, a copy; the in-place qdq of that copy was dropped ("without cat, weight is not updated"). The fix writes `torch.cat([weight1, weight2], dim=1)` back with weight.copy_().
import torch


def qdq_weight_asym(weight, num_bits=4, quantile=1.0):
    maxq = torch.tensor(2**num_bits - 1)
    zeros = torch.zeros(weight.shape[0], device=weight.device)
    wmin = torch.minimum(weight.min(1)[0], zeros)
    wmax = torch.maximum(weight.max(1)[0], zeros)
    wmin = wmin * quantile
    wmax = wmax * quantile
    tmp = (wmin == 0) & (wmax == 0)
    wmin[tmp] = -1
    wmax[tmp] = +1
    scale = (wmax - wmin) / maxq
    zp = torch.round(-wmin / scale)
    scale.unsqueeze_(dim=-1)
    zp.unsqueeze_(dim=-1)
    weight.div_(scale)
    weight.round_()
    weight.add_(zp)
    weight.clamp_(0, maxq)
    weight.sub_(zp)
    return weight.mul_(scale)


def qdq_weight_actor(weight, num_bits, scheme="asym", quantile=1.0):
    assert num_bits > 0, "num_bits should be larger than 0"
    return qdq_weight_asym(weight, num_bits, quantile)


def quant_weight(weight, num_bits=4, group_size=-1, scheme="asym", quantile=1.0):
    """Quant and dequant tensor with group size. It is an in-place op."""
    if group_size == -1 or weight.shape[1] < group_size:
        return qdq_weight_actor(weight, num_bits, scheme=scheme, quantile=quantile)

    orig_shape = weight.shape
    if weight.shape[1] % group_size == 0:
        weight = weight.reshape(-1, group_size)
        qdq_weight_actor(weight, num_bits, scheme=scheme, quantile=quantile)
        return weight.reshape(orig_shape)
    else:
        split_index = weight.shape[1] // group_size * group_size
        weight1 = weight[:, :split_index]
        weight1 = weight1.reshape(-1, group_size)  # want: B
        qdq_weight_actor(weight1, num_bits, scheme=scheme, quantile=quantile)  # maybe: B (in-place qdq lands in the reshape copy)
        weight1 = weight1.reshape(orig_shape[0], split_index)
        weight2 = weight[:, split_index:]
        qdq_weight_actor(weight2, num_bits, scheme=scheme, quantile=quantile)
        return weight


def quant_weight_fixed(weight, num_bits=4, group_size=-1, scheme="asym", quantile=1.0):
    """Quant and dequant tensor with group size. It is an in-place op."""
    if group_size == -1 or weight.shape[1] < group_size:
        return qdq_weight_actor(weight, num_bits, scheme=scheme, quantile=quantile)

    orig_shape = weight.shape
    if weight.shape[1] % group_size == 0:
        weight = weight.reshape(-1, group_size)
        qdq_weight_actor(weight, num_bits, scheme=scheme, quantile=quantile)
        return weight.reshape(orig_shape)
    else:
        split_index = weight.shape[1] // group_size * group_size
        weight1 = weight[:, :split_index]
        weight1 = weight1.reshape(-1, group_size)
        qdq_weight_actor(weight1, num_bits, scheme=scheme, quantile=quantile)
        weight1 = weight1.reshape(orig_shape[0], split_index)
        weight2 = weight[:, split_index:]
        qdq_weight_actor(weight2, num_bits, scheme=scheme, quantile=quantile)
        weight.copy_(torch.cat([weight1, weight2], dim=1))
        return weight


def search_clip(m, quant_fn, num_bits=4, group_size=32, scheme="asym"):
    org_weight = m.weight.data.clone()
    best_error = float("inf")
    best_clip_ratio = None
    history = []
    for i_s in range(10):
        ratio = 1 - i_s / 200
        quant_fn(m.weight.data, num_bits=num_bits, group_size=group_size, scheme=scheme, quantile=ratio)  # in-place mode
        loss = (org_weight - m.weight.data).float().pow(2).mean().item()
        m.weight.data.copy_(org_weight)
        history.append(loss)
        if loss < best_error:
            best_error = loss
            best_clip_ratio = ratio
    return best_clip_ratio, history


if __name__ == "__main__":
    torch.manual_seed(0)
    group_size = 8
    for name, fn in (("buggy", quant_weight), ("fixed", quant_weight_fixed)):
        lin = torch.nn.Linear(20, 6, bias=False)  # 20 % 8 != 0 -> split path
        orig = lin.weight.data.clone()
        with torch.no_grad():
            fn(lin.weight.data, num_bits=4, group_size=group_size)
        left_untouched = torch.equal(lin.weight.data[:, :16], orig[:, :16])
        right_untouched = torch.equal(lin.weight.data[:, 16:], orig[:, 16:])
        print(f"{name}: first 16 cols unquantized={left_untouched}, tail unquantized={right_untouched}")
        if name == "buggy":
            assert left_untouched and not right_untouched
        else:
            assert not left_untouched and not right_untouched
    _, hist = search_clip(torch.nn.Linear(20, 6, bias=False), quant_weight, group_size=group_size)
    print("buggy search_clip loss history (underestimates error):", [round(h, 5) for h in hist[:3]])
