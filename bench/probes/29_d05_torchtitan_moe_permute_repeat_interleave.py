# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/3274 — the all-to-all MoE token dispatcher's _permute built per-row segment ids with `repeat_interleave(segment_lens)` on device-resident token counts, which reads cumsum[-1] back to the host (cudaStreamSynchronize) on every MoE layer; the fix passes the already host-known receive total as `output_size`.
import torch
import torch.nn as nn


class AllToAllTokenDispatcher:
    """Reduced to the rank-major -> expert-major reorder done after the dispatch all-to-all."""

    def __init__(self, ep_size):
        self.ep_size = ep_size

    def _permute(self, routed_input_RD, num_global_tokens_per_local_expert_E):
        ep_size = self.ep_size
        e = num_global_tokens_per_local_expert_E.shape[0] // ep_size
        device = num_global_tokens_per_local_expert_E.device

        # (EP, e) matrix of token counts per (rank, local_expert)
        t_mat = num_global_tokens_per_local_expert_E.view(ep_size, e)

        # Where each (r, e) segment starts in the input (rank-major order)
        input_starts = (
            num_global_tokens_per_local_expert_E.cumsum(0)
            - num_global_tokens_per_local_expert_E
        ).view(ep_size, e)

        # Transpose to expert-major (e, EP) and flatten
        segment_lens = t_mat.t().reshape(-1)
        input_starts = input_starts.t().reshape(-1)

        # For each output position, find its input position:
        #   output[p] = input[input_starts[seg] + (p - output_starts[seg])]
        seg_ids = torch.arange(segment_lens.shape[0], device=device).repeat_interleave(  # want: D
            segment_lens
        )
        output_starts = segment_lens.cumsum(0) - segment_lens
        permuted_indices = (
            input_starts[seg_ids]
            + torch.arange(seg_ids.shape[0], device=device)
            - output_starts[seg_ids]
        )

        num_global_tokens_per_local_expert_e = t_mat.sum(0)
        return (
            routed_input_RD.shape,
            routed_input_RD[permuted_indices, :],
            permuted_indices,
            num_global_tokens_per_local_expert_e,
        )

    def _unpermute(self, routed_output_RD, input_shape, permuted_indices):
        out_unpermuted_RD = routed_output_RD.new_empty(input_shape)
        out_unpermuted_RD[permuted_indices, :] = routed_output_RD
        return out_unpermuted_RD


class AllToAllTokenDispatcherFixed(AllToAllTokenDispatcher):
    def _permute(self, routed_input_RD, num_global_tokens_per_local_expert_E):
        ep_size = self.ep_size
        e = num_global_tokens_per_local_expert_E.shape[0] // ep_size
        device = num_global_tokens_per_local_expert_E.device
        # received row count: the a2a output buffer was sized from the host-side splits
        total = routed_input_RD.shape[0]

        t_mat = num_global_tokens_per_local_expert_E.view(ep_size, e)
        input_starts = (
            num_global_tokens_per_local_expert_E.cumsum(0)
            - num_global_tokens_per_local_expert_E
        ).view(ep_size, e)
        segment_lens = t_mat.t().reshape(-1)
        input_starts = input_starts.t().reshape(-1)

        seg_ids = torch.arange(segment_lens.shape[0], device=device).repeat_interleave(
            segment_lens, output_size=total
        )
        output_starts = segment_lens.cumsum(0) - segment_lens
        permuted_indices = (
            input_starts[seg_ids]
            + torch.arange(seg_ids.shape[0], device=device)
            - output_starts[seg_ids]
        )

        num_global_tokens_per_local_expert_e = t_mat.sum(0)
        return (
            routed_input_RD.shape,
            routed_input_RD[permuted_indices, :],
            permuted_indices,
            num_global_tokens_per_local_expert_e,
        )


class LocalExperts(nn.Module):
    def __init__(self, num_local_experts, dim, dispatcher):
        super().__init__()
        self.w = nn.Parameter(torch.randn(num_local_experts, dim, dim) * 0.1)
        self.dispatcher = dispatcher

    def forward(self, received_RD, counts_E):
        shape, x, perm, counts_e = self.dispatcher._permute(received_RD, counts_E)
        expert_ids = torch.arange(counts_e.shape[0]).repeat_interleave(counts_e, output_size=x.shape[0])
        y = torch.bmm(x.unsqueeze(1), self.w[expert_ids]).squeeze(1)
        return self.dispatcher._unpermute(y, shape, perm)


if __name__ == "__main__":
    torch.manual_seed(0)
    ep_size, e, dim = 2, 3, 8
    counts = torch.tensor([2, 0, 3, 1, 4, 2])  # (rank, local expert) rank-major
    received = torch.randn(int(counts.sum()), dim)
    bug = LocalExperts(e, dim, AllToAllTokenDispatcher(ep_size))
    fix = LocalExperts(e, dim, AllToAllTokenDispatcherFixed(ep_size))
    fix.load_state_dict(bug.state_dict())
    out_b, out_f = bug(received, counts), fix(received, counts)
    assert torch.allclose(out_b, out_f)
    print("permuted indices:", bug.dispatcher._permute(received, counts)[2].tolist())
