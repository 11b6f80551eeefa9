# source: EleutherAI/gpt-neox https://github.com/EleutherAI/gpt-neox/pull/1169 — In megatron/mpu/mappings.py, `_split` (the forward of _ScatterToModelParallelRegion, run every step under tensor parallelism) upcast a bf16 input to fp32 with `input_ = input_.float()` when fp32_allreduce was on, took its rank's slice, and cast the slice back with `.bfloat16()`. No collective happens in `_split`, so the full-size fp32 copy and the cast back were pure extra copies; the PR "Remove unnecessary fp32/bf16 conversion" drops both casts.
import torch
from torch.utils._python_dispatch import TorchDispatchMode

_MODEL_PARALLEL_WORLD_SIZE = 2
_MODEL_PARALLEL_RANK = 1
_FP32_ALLREDUCE = True


def get_model_parallel_world_size():
    return _MODEL_PARALLEL_WORLD_SIZE


def get_model_parallel_rank():
    return _MODEL_PARALLEL_RANK


def get_fp32_allreduce():
    return _FP32_ALLREDUCE


def divide(numerator, denominator):
    assert numerator % denominator == 0
    return numerator // denominator


def split_tensor_along_last_dim(tensor, num_partitions, contiguous_split_chunks=False):
    """Split a tensor along its last dimension."""
    last_dim = tensor.dim() - 1
    last_dim_size = divide(tensor.size()[last_dim], num_partitions)
    tensor_list = torch.split(tensor, last_dim_size, dim=last_dim)
    # Note: torch.split does not create contiguous tensors by default.
    if contiguous_split_chunks:
        return tuple(chunk.contiguous() for chunk in tensor_list)
    return tensor_list


def _split(input_):
    """Split the tensor along its last dimension and keep the
    corresponding slice."""

    world_size = get_model_parallel_world_size()
    # Bypass the function if we are using only 1 GPU.
    if world_size == 1:
        return input_

    # Bf16 convert
    dt = input_.dtype
    if dt == torch.bfloat16 and get_fp32_allreduce():
        input_ = input_.float()  # want: C

    # Split along last dimension.
    input_list = split_tensor_along_last_dim(input_, world_size)

    # Note: torch.split does not create contiguous tensors by default.
    rank = get_model_parallel_rank()
    output = input_list[rank].contiguous()

    # Bf16 convert
    if dt == torch.bfloat16 and get_fp32_allreduce():
        output = output.bfloat16()  # want: C

    return output


def _split_fixed(input_):
    """Split the tensor along its last dimension and keep the
    corresponding slice."""

    world_size = get_model_parallel_world_size()
    # Bypass the function if we are using only 1 GPU.
    if world_size == 1:
        return input_

    # Split along last dimension.
    input_list = split_tensor_along_last_dim(input_, world_size)

    # Note: torch.split does not create contiguous tensors by default.
    rank = get_model_parallel_rank()
    output = input_list[rank].contiguous()

    return output


class _ScatterToModelParallelRegion(torch.autograd.Function):
    """Split the input and keep only the corresponding chuck to the rank."""

    @staticmethod
    def forward(ctx, input_):
        return _split(input_)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class _CountCopies(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._to_copy.default:
            self.casts += 1
        return func(*args, **(kwargs or {}))


if __name__ == "__main__":
    torch.manual_seed(0)
    hidden = torch.randn(4, 3, 16).to(torch.bfloat16)
    with _CountCopies() as mode_b:
        out_b = _ScatterToModelParallelRegion.apply(hidden)
    with _CountCopies() as mode_f:
        out_f = _split_fixed(hidden)
    assert torch.equal(out_b, out_f) and out_f.dtype == torch.bfloat16
    # buggy: a full-size fp32 copy of the activation plus a cast back; fixed: no dtype copies
    assert mode_b.casts == 2 and mode_f.casts == 0
    print("ok")
