# source: vllm-project/vllm-gaudi https://github.com/vllm-project/vllm-gaudi/pull/1295 — The HPU Mamba2 decode path's selective_state_update gathered the SSM state slots with `state[state_batch_indices].clone()` (fancy indexing already returns a copy, so the clone copies it again) and, in selective_state_update_ref, expanded B and C to every head with `repeat_interleave(nheads // ngroups, dim=1)` — a 128x copy per decode step when ngroups == 1. The PR gathers with index_select, writes back with index_copy_, and for ngroups == 1 lets B/C broadcast with unsqueeze/expand instead of repeating.
import torch
import torch.nn.functional as F


def selective_state_update_ref(state, x, dt, A, B, C, D=None, dt_bias=None, dt_softplus=False,
                               softplus_thres=20.0):
    batch, nheads, dim, dstate = state.shape
    assert A.shape == (nheads, dim, dstate)
    ngroups = B.shape[1]
    assert nheads % ngroups == 0, "nheads must be divisible by ngroups"
    if dt_bias is not None:
        dt = dt + dt_bias
    if dt_softplus:
        dt = torch.where(dt <= softplus_thres, F.softplus(dt), dt)
    dA = torch.exp(dt.unsqueeze(-1) * A)  # (batch, nheads, dim, dstate)
    B = B.repeat_interleave(nheads // ngroups, dim=1)  # want: C
    C = C.repeat_interleave(nheads // ngroups, dim=1)  # want: C
    dB = dt.unsqueeze(-1) * B.unsqueeze(-2)  # (batch, nheads, dim, dstate)
    state.copy_(state * dA + dB * x.unsqueeze(-1))  # (batch, dim, dstate)
    out = torch.einsum("bhdn,bhn->bhd", state.to(C.dtype), C)
    if D is not None:
        out += (x * D).to(out.dtype)
    return out.to(x.dtype)


def selective_state_update(state, x, dt, A, B, C, D=None, dt_bias=None, dt_softplus=False,
                           state_batch_indices=None, dst_state_batch_indices=None):
    if dst_state_batch_indices is None:
        dst_state_batch_indices = state_batch_indices
    # Select state slices for reading
    selected_state = state[state_batch_indices].clone()  # want: C
    # Run the update
    result = selective_state_update_ref(selected_state, x, dt, A, B, C, D=D, dt_bias=dt_bias,
                                        dt_softplus=dt_softplus)
    # Write back the updated states
    state[dst_state_batch_indices] = selected_state
    return result


def selective_state_update_ref_fixed(state, x, dt, A, B, C, D=None, dt_bias=None,
                                     dt_softplus=False, softplus_thres=20.0):
    batch, nheads, dim, dstate = state.shape
    assert A.shape == (nheads, dim, dstate)
    ngroups = B.shape[1]
    assert nheads % ngroups == 0, "nheads must be divisible by ngroups"
    if dt_bias is not None:
        dt = dt + dt_bias
    if dt_softplus:
        dt = torch.where(dt <= softplus_thres, F.softplus(dt), dt)
    dA = torch.exp(dt.unsqueeze(-1) * A)
    # Rewrite (dt * B) * x as (dt * x) * B: saves one multiply
    dx = (dt * x).unsqueeze(-1)  # (batch, nheads, dim, 1)
    if ngroups == 1 and nheads > 1:
        # ngroups=1: B and C are identical for all heads.
        # Skip repeat_interleave (128x copy) — use stride-0 broadcast instead.
        state.copy_(state * dA + dx * B.unsqueeze(-2))  # B (batch,1,dstate) broadcasts
        out = torch.einsum("bhdn,bhn->bhd", state.to(C.dtype), C.expand(-1, nheads, -1))
    else:
        B = B.repeat_interleave(nheads // ngroups, dim=1)  # (batch, nheads, dstate)
        C = C.repeat_interleave(nheads // ngroups, dim=1)  # (batch, nheads, dstate)
        state.copy_(state * dA + dx * B.unsqueeze(-2))  # (batch, nheads, dim, dstate)
        out = torch.einsum("bhdn,bhn->bhd", state.to(C.dtype), C)
    if D is not None:
        out += (x * D).to(out.dtype)
    return out.to(x.dtype)


def selective_state_update_fixed(state, x, dt, A, B, C, D=None, dt_bias=None, dt_softplus=False,
                                 state_batch_indices=None, dst_state_batch_indices=None):
    if dst_state_batch_indices is None:
        dst_state_batch_indices = state_batch_indices
    # Use index_select instead of fancy indexing to dispatch a
    # dedicated gather kernel rather than gather_nd TPC kernel.
    selected_state = torch.index_select(state, 0, state_batch_indices.long())
    result = selective_state_update_ref_fixed(selected_state, x, dt, A, B, C, D=D,
                                              dt_bias=dt_bias, dt_softplus=dt_softplus)
    # Use index_copy_ instead of fancy indexing to dispatch a
    # dedicated copy kernel rather than scatter_nd TPC kernel.
    state.index_copy_(0, dst_state_batch_indices.long(), selected_state)
    return result


if __name__ == "__main__":
    torch.manual_seed(0)
    slots, batch, nheads, dim, dstate = 6, 3, 8, 4, 16
    ssm_state = torch.randn(slots, nheads, dim, dstate)
    x, dt = torch.randn(batch, nheads, dim), torch.rand(batch, nheads, dim)
    A = -torch.rand(nheads, 1, 1).expand(-1, dim, dstate)
    B, C = torch.randn(batch, 1, dstate), torch.randn(batch, 1, dstate)
    D, dt_bias = torch.randn(nheads, dim), torch.randn(nheads, dim)
    idx = torch.tensor([4, 0, 2])

    state_b, state_f = ssm_state.clone(), ssm_state.clone()
    out_b = selective_state_update(state_b, x, dt, A, B, C, D, dt_bias, True, idx)
    out_f = selective_state_update_fixed(state_f, x, dt, A, B, C, D, dt_bias, True, idx)
    assert torch.allclose(out_b, out_f, atol=1e-5) and torch.allclose(state_b, state_f, atol=1e-5)

    # the repeat in the buggy path materialises nheads copies of B; the broadcast shares storage
    rep = B.repeat_interleave(nheads, dim=1)
    assert rep.data_ptr() != B.data_ptr() and rep.untyped_storage().nbytes() == nheads * B.untyped_storage().nbytes()
    assert B.expand(-1, nheads, -1).data_ptr() == B.data_ptr()
    # fancy indexing already returns a fresh tensor, so the extra clone is a second copy
    gathered = ssm_state[idx]
    assert gathered.clone().data_ptr() != gathered.data_ptr()
    print("ok")
