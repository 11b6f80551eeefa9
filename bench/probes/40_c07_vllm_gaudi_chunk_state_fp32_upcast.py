# source: vllm-project/vllm-gaudi https://github.com/vllm-project/vllm-gaudi/pull/997 — In the HPU Mamba2 prefill path, `new_chunk_state` upcast B with `B.float()` before expanding it to every head and reshaping, so each call materialised an fp32 (nchunks, chunk_size, nheads, dstate) copy of B only to cast the scaled result straight back to the activation dtype for the bmm. The PR ("Matmul operations performed with bf16 instead of f32", "Removed some redundant casts to fp32") builds B_expanded once in the model dtype in _mamba_chunk_scan_combined_fwd and passes it in without the upcast.
import torch
from torch.utils._python_dispatch import TorchDispatchMode


def new_chunk_state(B, x, dt, dA_cumsum, states=None, states_in_fp32=True):
    """
    Arguments:
        B: Tensor - (seqlen, ngroups, dstate)
        x: Tensor - (seqlen, nheads, hdim)
        dt: Tensor - (nheads, nchunks, chunk_size)
        dA_cumsum: Tensor - (nheads, nchunks, chunk_siz)
    Return:
        states: Tensor - (nchunks, nheads, hdim, dstate)
    """
    seqlen, nheads, hdim = x.shape
    _, nchunks, chunk_size = dt.shape
    _, ngroups, dstate = B.shape
    nheads_ngroups_ratio = nheads // ngroups
    states_dtype = torch.float32 if states_in_fp32 else B.dtype
    x_dtype = x.dtype
    B = B.float().view(nchunks, chunk_size, ngroups, 1, dstate).expand(-1, -1, -1, nheads_ngroups_ratio,  # want: C
                                                                       -1).reshape(nchunks, chunk_size, nheads, dstate)
    x = x.view(nchunks, chunk_size, nheads, hdim)
    dt = dt.float().permute(1, 0, 2)
    dA_cumsum = dA_cumsum.float().permute(1, 0, 2)

    dA_cs_last = dA_cumsum[:, :, -1]
    scale = torch.exp(dA_cs_last.unsqueeze(2) - dA_cumsum) * dt
    scale = scale.transpose(1, 2).unsqueeze(3)

    B_scaled = (B * scale).to(x_dtype)
    x_for_bmm = x.permute(0, 2, 3, 1).reshape(nchunks * nheads, hdim, chunk_size)
    B_for_bmm = B_scaled.permute(0, 2, 1, 3).reshape(nchunks * nheads, chunk_size, dstate)
    state = torch.bmm(x_for_bmm, B_for_bmm).view(nchunks, nheads, hdim, dstate).to(states_dtype)
    if states is not None:
        states[:] = state
        return states
    return state


def new_chunk_state_fixed(B_expanded, x_chunked, dt_t, dA_cumsum_t, states_in_fp32=True):
    _, _, nheads, hdim = x_chunked.shape
    dstate = B_expanded.shape[-1]
    states_dtype = torch.float32 if states_in_fp32 else B_expanded.dtype
    x_dtype = x_chunked.dtype

    dA_cs_last = dA_cumsum_t[:, :, -1]
    scale = torch.exp(dA_cs_last.unsqueeze(2) - dA_cumsum_t) * dt_t
    scale = scale.transpose(1, 2).unsqueeze(3)

    B_scaled = (B_expanded * scale).to(x_dtype)
    x_for_bmm = x_chunked.permute(0, 2, 3, 1).flatten(0, 1)
    B_for_bmm = B_scaled.permute(0, 2, 1, 3).flatten(0, 1)
    state = torch.bmm(x_for_bmm, B_for_bmm).view(-1, nheads, hdim, dstate).to(states_dtype)
    return state


def chunk_state_fwd_fixed(B, x, dt, dA_cumsum, chunk_size):
    # from _mamba_chunk_scan_combined_fwd after the PR
    seqlen, nheads, headdim = x.shape
    _, ngroups, dstate = B.shape
    nchunks = seqlen // chunk_size
    nheads_ngroups_ratio = nheads // ngroups
    dt_t = dt.transpose(0, 1)  # (nchunks, nheads, chunk_size)
    dA_cumsum_t = dA_cumsum.transpose(0, 1)  # (nchunks, nheads, chunk_size)
    x_chunked = x.view(nchunks, chunk_size, nheads, headdim)
    B_expanded = B.view(nchunks, chunk_size, ngroups, 1, dstate).expand(-1, -1, -1, nheads_ngroups_ratio,
                                                                        -1).reshape(nchunks, chunk_size, nheads, dstate)
    return new_chunk_state_fixed(B_expanded, x_chunked, dt_t, dA_cumsum_t, states_in_fp32=True)


class _Casts(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.fp32_from_bf16 = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten._to_copy.default and args[0].dtype == torch.bfloat16 \
                and out.dtype == torch.float32:
            self.fp32_from_bf16.append(out.numel())
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    seqlen, nheads, hdim, ngroups, dstate, chunk_size = 32, 8, 4, 1, 16, 8
    x = torch.randn(seqlen, nheads, hdim).to(torch.bfloat16)
    B = torch.randn(seqlen, ngroups, dstate).to(torch.bfloat16)
    dt = torch.rand(nheads, seqlen // chunk_size, chunk_size)
    dA_cumsum = (-torch.rand(nheads, seqlen // chunk_size, chunk_size)).cumsum(-1)

    with _Casts() as mode_b:
        st_b = new_chunk_state(B, x, dt, dA_cumsum)
    with _Casts() as mode_f:
        st_f = chunk_state_fwd_fixed(B, x, dt, dA_cumsum, chunk_size)
    assert torch.allclose(st_b, st_f, atol=1e-2)
    # buggy: B was upcast to fp32 before the head expansion; fixed: no bf16->fp32 copy of inputs
    assert mode_b.fp32_from_bf16 and mode_b.fp32_from_bf16[0] == B.numel()
    assert len(mode_f.fp32_from_bf16) == len(mode_b.fp32_from_bf16) - 1
    print("ok")
