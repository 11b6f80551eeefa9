# source: tenstorrent/tt-metal https://github.com/tenstorrent/tt-metal/pull/55573 — The shared sweep helper `torch_random_with_zeros()` in models/common/utility_functions.py builds a shuffled tensor with a fraction of zeros and is supposed to return it in the requested `dtype`, but it called `result_tensor.to(dtype)` as a bare statement and returned `result_tensor`. `Tensor.to` is not in-place, so callers always got float32 no matter what they asked for; the fix returns `result_tensor.to(dtype)`.
import math

import torch


def _nearest_32(x):
    return math.ceil(x / 32) * 32


def torch_random(shape, low, high, dtype):
    if dtype in [torch.int64, torch.int32, torch.int16, torch.int8]:
        return torch.randint(low, high, shape, dtype=dtype)
    return torch.zeros(shape, dtype=dtype).uniform_(low, high)


def torch_random_with_zeros(shape, low, high, dtype, zero_fraction=0.1):
    total_elements = torch.prod(torch.tensor(shape)).item()
    num_zeros = int(total_elements * zero_fraction)
    num_random = total_elements - num_zeros

    # Generate random values between low and high
    random_values = torch.empty(num_random).uniform_(low, high)
    zeros = torch.zeros(num_zeros)

    # Combine zeros and random values
    combined = torch.cat([zeros, random_values])

    # Shuffle the tensor
    shuffled = combined[torch.randperm(combined.size(0))]

    # Reshape to the desired shape
    result_tensor = shuffled.view(shape)
    result_tensor.to(dtype)  # want: B
    return result_tensor


def torch_random_with_zeros_fixed(shape, low, high, dtype, zero_fraction=0.1):
    total_elements = torch.prod(torch.tensor(shape)).item()
    num_zeros = int(total_elements * zero_fraction)
    num_random = total_elements - num_zeros

    random_values = torch.empty(num_random).uniform_(low, high)
    zeros = torch.zeros(num_zeros)
    combined = torch.cat([zeros, random_values])
    shuffled = combined[torch.randperm(combined.size(0))]

    # Reshape to the desired shape. Tensor.to is not in-place, so return the converted tensor.
    result_tensor = shuffled.view(shape)
    return result_tensor.to(dtype)


def run_eqz(input_shape, dtype, make_input):
    torch_input_tensor_a = make_input(input_shape, -100, 100, dtype, zero_fraction=0.25)
    golden = torch.eq(torch_input_tensor_a, 0)
    return torch_input_tensor_a, golden


if __name__ == "__main__":
    shape = (1, 1, 32, _nearest_32(40))
    torch.manual_seed(0)
    a_buggy, g_buggy = run_eqz(shape, torch.bfloat16, torch_random_with_zeros)
    torch.manual_seed(0)
    a_fixed, g_fixed = run_eqz(shape, torch.bfloat16, torch_random_with_zeros_fixed)
    assert a_buggy.dtype == torch.float32
    assert a_fixed.dtype == torch.bfloat16
    assert torch.equal(g_buggy, g_fixed)
    assert torch_random((2, 2), 0, 4, torch.int32).dtype == torch.int32
    print("ok")
