# source: taichi-dev/taichi-nerfs https://github.com/taichi-dev/taichi-nerfs/pull/52 — HashEncoder's autograd Function called `.contiguous()` on the positions, hash table, output buffer and index buffers at every kernel launch in both forward and backward, so a strided positions tensor (e.g. a column slice of the ray batch) was copied twice per step; the fix drops them from the Function and makes positions/table contiguous once in HashEncoder.forward.
import torch
import torch.nn as nn


def hash_encoder_kernel(input_pos, params, output_embedding, hash_map_sizes, offsets, B, grad_out=None):
    """Stand-in for the Taichi kernel: writes through output_embedding / params.grad (needs real buffers)."""
    for level in range(hash_map_sizes.shape[0]):
        res = 16 * 2 ** level
        idx = (input_pos[:B] * res).long().sum(-1) % hash_map_sizes[level] + offsets[level]
        if grad_out is None:
            output_embedding[:, 2 * level:2 * level + 2] = params[idx]
        else:
            params.grad.index_add_(0, idx, grad_out[:, 2 * level:2 * level + 2])


class HashEncoder(nn.Module):
    def __init__(self, levels=4, table_size=2 ** 12):
        super().__init__()
        self.hash_table = nn.Parameter(torch.randn(levels * table_size, 2) * 1e-2)
        self.register_buffer("hash_map_sizes", torch.full((levels,), table_size))
        self.register_buffer("offsets", torch.arange(levels) * table_size)
        self.out_dim = 2 * levels
        self._hash_encoder_kernel = hash_encoder_kernel
        encoder = self

        class _module_function(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input_pos, params):
                output_embedding = torch.zeros(input_pos.shape[0], encoder.out_dim, dtype=params.dtype)
                encoder._hash_encoder_kernel(
                    input_pos.contiguous(),  # want: C
                    params.contiguous(),  # maybe: C (parameter is already contiguous, no-op)
                    output_embedding.contiguous(),  # maybe: C (fresh buffer, no-op; a copy here would lose the kernel's writes)
                    encoder.hash_map_sizes.contiguous(),  # maybe: C (buffer already contiguous)
                    encoder.offsets.contiguous(),  # maybe: C (buffer already contiguous)
                    input_pos.shape[0],
                )
                ctx.save_for_backward(input_pos, params)
                return output_embedding

            @staticmethod
            def backward(ctx, doutput):
                input_pos, params = ctx.saved_tensors
                params = params.detach()
                params.grad = torch.zeros_like(params)
                encoder._hash_encoder_kernel(
                    input_pos.contiguous(),  # want: C
                    params.contiguous(),  # maybe: C (no-op on a contiguous tensor)
                    None,
                    encoder.hash_map_sizes.contiguous(),  # maybe: C (buffer already contiguous)
                    encoder.offsets.contiguous(),  # maybe: C (buffer already contiguous)
                    input_pos.shape[0],
                    grad_out=doutput,
                )
                return None, params.grad

        self._module_function = _module_function.apply

    def forward(self, positions):
        return self._module_function(positions, self.hash_table)


class HashEncoderFixed(HashEncoder):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        encoder = self

        class _module_function(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input_pos, params):
                output_embedding = torch.zeros(input_pos.shape[0], encoder.out_dim, dtype=params.dtype)
                encoder._hash_encoder_kernel(input_pos, params, output_embedding, encoder.hash_map_sizes,
                                             encoder.offsets, input_pos.shape[0])
                ctx.save_for_backward(input_pos, params)
                return output_embedding

            @staticmethod
            def backward(ctx, doutput):
                input_pos, params = ctx.saved_tensors
                params = params.detach()
                params.grad = torch.zeros_like(params)
                encoder._hash_encoder_kernel(input_pos, params, None, encoder.hash_map_sizes, encoder.offsets,
                                             input_pos.shape[0], grad_out=doutput)
                return None, params.grad

        self._module_function = _module_function.apply

    def forward(self, positions):
        return self._module_function(positions.contiguous(), self.hash_table.contiguous())


def count_clones(model, positions):
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model(positions).square().sum().backward()
    return sum(e.count for e in prof.key_averages() if e.key == "aten::clone")


if __name__ == "__main__":
    torch.manual_seed(0)
    rays = torch.rand(8192, 6)
    positions = rays[:, :3]  # strided view, like a column slice of the ray batch
    m1, m2 = HashEncoder(), HashEncoderFixed()
    m2.load_state_dict(m1.state_dict())
    m1(positions).square().sum().backward()
    m2(positions).square().sum().backward()
    assert torch.allclose(m1.hash_table.grad, m2.hash_table.grad)
    c1, c2 = count_clones(m1, positions), count_clones(m2, positions)
    print(f"positions copies per train step: buggy={c1} fixed={c2}")
    assert c1 == 2 and c2 == 1
