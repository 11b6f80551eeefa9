# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/21075 — MambaMixer2.forward_cuda ran the prefill scan and the decode state update into separately allocated outputs, appended them to `ssd_output_list` and merged them with `torch.vstack`, an extra device-to-device copy of the whole SSM output every step; the fix preallocates one output, splits it into prefill/decode views and has both kernels write into them via `out=`.
import torch
from torch import nn


def mamba_chunk_scan_combined(x, dt, A, B, C, D, out=None):
    # stand-in for the Triton SSD kernel: y = x * sigmoid(dt * A) + D * x, written into `out` if given
    y = x * torch.sigmoid(dt.unsqueeze(-1) * A[:, None]) + D[:, None] * x
    y = y + (B * C).sum(-1, keepdim=True).unsqueeze(-1)
    if out is None:
        return y
    out.copy_(y)
    return out


def selective_state_update(state, x, dt, A, B, C, D, state_batch_indices, out=None):
    # stand-in for the decode kernel; updates `state` in place
    dA = torch.exp(dt.unsqueeze(-1) * A[:, None])
    state[state_batch_indices] = state[state_batch_indices] * dA.unsqueeze(-1) + x.unsqueeze(-1)
    y = (state[state_batch_indices] * C[:, None, None, :]).sum(-1) + D[:, None] * x
    if out is None:
        return y
    out.copy_(y)
    return out


class MambaMixer2(nn.Module):
    def __init__(self, num_heads=4, head_dim=8, ssm_state_size=16, tp_size=1):
        super().__init__()
        self.num_heads, self.head_dim, self.tp_size = num_heads, head_dim, tp_size
        self.A = nn.Parameter(-torch.rand(num_heads))
        self.D = nn.Parameter(torch.ones(num_heads))
        self.ssm_state_size = ssm_state_size

    def forward_cuda(self, hidden_states, dt, B, C, ssm_state, num_prefill_tokens, num_decodes, state_indices_d):
        nh = self.num_heads // self.tp_size
        hidden_states_p, hidden_states_d = torch.split(hidden_states, [num_prefill_tokens, num_decodes], dim=0)
        dt_p, dt_d = torch.split(dt, [num_prefill_tokens, num_decodes], dim=0)
        B_p, B_d = torch.split(B, [num_prefill_tokens, num_decodes], dim=0)
        C_p, C_d = torch.split(C, [num_prefill_tokens, num_decodes], dim=0)

        ssd_output_list = []
        if num_prefill_tokens > 0:
            scan_output = mamba_chunk_scan_combined(
                hidden_states_p.view(num_prefill_tokens, nh, self.head_dim), dt_p, self.A, B_p, C_p, self.D
            )
            ssd_output_list.append(scan_output.view(num_prefill_tokens, -1))
        if num_decodes > 0:
            hidden_states_d = selective_state_update(
                ssm_state, hidden_states_d.view(num_decodes, nh, self.head_dim), dt_d, self.A, B_d, C_d, self.D,
                state_batch_indices=state_indices_d,
            )
            ssd_output_list.append(hidden_states_d.view(-1, nh * self.head_dim))

        # Merge prefill and decode outputs before passing to gated MLP
        hidden_states = torch.vstack(ssd_output_list)  # want: C
        return hidden_states


class MambaMixer2Fixed(MambaMixer2):
    def forward_cuda(self, hidden_states, dt, B, C, ssm_state, num_prefill_tokens, num_decodes, state_indices_d):
        nh = self.num_heads // self.tp_size
        hidden_states_p, hidden_states_d = torch.split(hidden_states, [num_prefill_tokens, num_decodes], dim=0)
        dt_p, dt_d = torch.split(dt, [num_prefill_tokens, num_decodes], dim=0)
        B_p, B_d = torch.split(B, [num_prefill_tokens, num_decodes], dim=0)
        C_p, C_d = torch.split(C, [num_prefill_tokens, num_decodes], dim=0)

        preallocated_ssm_out = torch.empty(
            [num_prefill_tokens + num_decodes, nh * self.head_dim],
            dtype=hidden_states.dtype, device=hidden_states.device,
        )
        preallocated_ssm_out_p, preallocated_ssm_out_d = torch.split(
            preallocated_ssm_out, [num_prefill_tokens, num_decodes], dim=0
        )
        if num_prefill_tokens > 0:
            mamba_chunk_scan_combined(
                hidden_states_p.view(num_prefill_tokens, nh, self.head_dim), dt_p, self.A, B_p, C_p, self.D,
                out=preallocated_ssm_out_p.view(num_prefill_tokens, nh, self.head_dim),
            )
        if num_decodes > 0:
            selective_state_update(
                ssm_state, hidden_states_d.view(num_decodes, nh, self.head_dim), dt_d, self.A, B_d, C_d, self.D,
                state_batch_indices=state_indices_d,
                out=preallocated_ssm_out_d.view(num_decodes, nh, self.head_dim),
            )
        return preallocated_ssm_out


if __name__ == "__main__":
    torch.manual_seed(0)
    bug, fix = MambaMixer2(), MambaMixer2Fixed()
    fix.load_state_dict(bug.state_dict())
    n_p, n_d = 12, 3
    x = torch.randn(n_p + n_d, 32)
    dt, B, C = torch.rand(n_p + n_d, 4), torch.randn(n_p + n_d, 16), torch.randn(n_p + n_d, 16)
    idx = torch.tensor([0, 2, 5])
    s1, s2 = torch.zeros(8, 4, 8, 16), torch.zeros(8, 4, 8, 16)
    with torch.no_grad():
        out_bug = bug.forward_cuda(x, dt, B, C, s1, n_p, n_d, idx)
        out_fix = fix.forward_cuda(x, dt, B, C, s2, n_p, n_d, idx)
    torch.testing.assert_close(out_bug, out_fix)
    print("buggy: vstack result is a fresh buffer (extra copy of", out_bug.numel() * out_bug.element_size(), "bytes)")
    print("fixed: kernels wrote straight into the preallocated output")
