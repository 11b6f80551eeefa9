# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/2489 — load_model_with_checkpoint's nested transpose() rewrote a checkpoint tensor in place with `data.reshape(-1).copy_(data1)`; for non-contiguous tensors (HF low_cpu_mem_usage) reshape returns a copy, so the transposed values landed in a temporary and the weight kept its old layout. The fix makes `data` contiguous before the reshape-copy_.
import torch
from torch import nn


class TransformerLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.attn_qkvw = nn.Parameter(torch.empty(3 * hidden, hidden), requires_grad=False)
        self.attn_ow = nn.Parameter(torch.empty(hidden, hidden), requires_grad=False)


def load_model_with_checkpoint(r_module, sd, ckpt_type="tp"):
    def transpose(data):
        with torch.no_grad():
            data1 = data.transpose(-1, -2).reshape(-1)
            data.reshape(-1).copy_(data1)  # want: B
            data1 = None
        return data.reshape(data.shape[-1], data.shape[-2])

    def load_parameters(module, prefix):
        for n, p in module.named_parameters():
            if prefix + n in sd[0] and len(n.split('.')) == 1:
                tmp_data = sd[0][prefix + n]
                src_shape = tmp_data.shape
                dst_shape = p.shape
                if len(src_shape) == 2 and len(dst_shape) == 2:
                    if src_shape[0] == dst_shape[1] and src_shape[1] == dst_shape[0] and src_shape != dst_shape:
                        p = torch.nn.parameter.Parameter(transpose(tmp_data), requires_grad=False)
                    else:
                        p = torch.nn.parameter.Parameter(tmp_data, requires_grad=False)
                    setattr(module, n, p)

    for name, child in r_module.named_children():
        if ckpt_type == "tp":
            load_parameters(child, name + ".")
    return r_module


def load_model_with_checkpoint_fixed(r_module, sd, ckpt_type="tp"):
    def transpose(data):
        with torch.no_grad():
            data = data.contiguous()
            data1 = data.transpose(-1, -2).reshape(-1)
            data.reshape(-1).copy_(data1)
            data1 = None
        return data.reshape(data.shape[-1], data.shape[-2])

    def load_parameters(module, prefix):
        for n, p in module.named_parameters():
            if prefix + n in sd[0] and len(n.split('.')) == 1:
                tmp_data = sd[0][prefix + n]
                src_shape = tmp_data.shape
                dst_shape = p.shape
                if len(src_shape) == 2 and len(dst_shape) == 2:
                    if src_shape[0] == dst_shape[1] and src_shape[1] == dst_shape[0] and src_shape != dst_shape:
                        p = torch.nn.parameter.Parameter(transpose(tmp_data), requires_grad=False)
                    else:
                        p = torch.nn.parameter.Parameter(tmp_data, requires_grad=False)
                    setattr(module, n, p)

    for name, child in r_module.named_children():
        if ckpt_type == "tp":
            load_parameters(child, name + ".")
    return r_module


class Wrapper(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.layer0 = TransformerLayer(hidden)


if __name__ == "__main__":
    hidden = 8
    torch.manual_seed(0)
    # HF Conv1D-style weight stored as (in, 3*out); with low_cpu_mem_usage it arrives as a
    # non-contiguous transposed view of a (3*out, in) buffer.
    raw = torch.randn(3 * hidden, hidden)
    qkv_view = raw.t()
    assert not qkv_view.is_contiguous()
    expected = qkv_view.t().clone()

    sd_bug = [{"layer0.attn_qkvw": raw.clone().t()}]
    m_bug = load_model_with_checkpoint(Wrapper(hidden), sd_bug)

    sd_fix = [{"layer0.attn_qkvw": raw.clone().t()}]
    m_fix = load_model_with_checkpoint_fixed(Wrapper(hidden), sd_fix)

    ok_bug = torch.equal(m_bug.layer0.attn_qkvw, expected)
    ok_fix = torch.equal(m_fix.layer0.attn_qkvw, expected)
    print("buggy transpose correct:", ok_bug)
    print("fixed transpose correct:", ok_fix)
    assert not ok_bug and ok_fix
