# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/144467 — flex_attention's _dense_to_ordered returned `num_blocks_in_row.to(torch.int32).contiguous()` and `col_indices.to(torch.int32).contiguous()`: the cast preserves the (transposed) strides of argsort's output, so .contiguous() makes a second full copy; the fix fuses both into one copy with `.to(torch.int32, memory_format=torch.contiguous_format)`.
from typing import Tuple

import torch
from torch import Tensor


def _ordered_to_dense(num_blocks_in_row: Tensor, col_indices: Tensor):
    num_rows = col_indices.shape[-2]
    num_cols = col_indices.shape[-1]
    batch_dims = num_blocks_in_row.shape[:-1]
    device = num_blocks_in_row.device

    def create_dense_one(kv_num_blocks, kv_indices):
        dense_mask = kv_indices.new_zeros(num_rows, num_cols + 1, dtype=torch.int32)

        row_indices = torch.arange(num_rows, dtype=torch.int, device=device).unsqueeze(-1)
        col_range = torch.arange(num_cols, dtype=torch.int, device=device)
        index_mask = col_range < kv_num_blocks.unsqueeze(-1)

        # We write to one spot "out of bounds"
        valid_indices = torch.where(index_mask, kv_indices, num_cols)

        # set the values in 'a' to 1 where the indices are valid
        dense_mask[row_indices, valid_indices] = 1
        return dense_mask[:, :num_cols].contiguous()

    create_dense_batched = create_dense_one
    for _ in range(len(batch_dims)):
        create_dense_batched = torch.vmap(create_dense_batched, in_dims=(0, 0))

    out = create_dense_batched(num_blocks_in_row, col_indices)
    return out


def _dense_to_ordered(dense_mask) -> Tuple:
    dense_mask = dense_mask.to(dtype=torch.int32)
    num_blocks_in_row = dense_mask.sum(dim=-1)
    col_indices = torch.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return (
        num_blocks_in_row.to(torch.int32).contiguous(),  # want: C
        col_indices.to(torch.int32).contiguous(),  # want: C
    )


def _transpose_ordered(num_blocks_in_row: Tensor, col_indices: Tensor):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices)
    return _dense_to_ordered(dense.transpose(-2, -1))


def _dense_to_ordered_fixed(dense_mask) -> Tuple[Tensor, Tensor]:
    dense_mask = dense_mask.to(dtype=torch.int32)
    num_blocks_in_row = dense_mask.sum(dim=-1)
    col_indices = torch.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return (
        num_blocks_in_row.to(torch.int32, memory_format=torch.contiguous_format),
        col_indices.to(torch.int32, memory_format=torch.contiguous_format),
    )


def _transpose_ordered_fixed(num_blocks_in_row: Tensor, col_indices: Tensor):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices)
    return _dense_to_ordered_fixed(dense.transpose(-2, -1))


if __name__ == "__main__":
    torch.manual_seed(0)
    B, H, R, C = 2, 4, 16, 16
    dense = (torch.rand(B, H, R, C) > 0.5).tril()
    kv_num_blocks, kv_indices = _dense_to_ordered(dense)
    qa = _transpose_ordered(kv_num_blocks, kv_indices)
    qb = _transpose_ordered_fixed(kv_num_blocks, kv_indices)
    assert all(torch.equal(x, y) for x, y in zip(qa, qb))
    assert all(t.is_contiguous() for t in qb)

    # show the double copy: argsort over a transposed mask keeps transposed strides
    d = _ordered_to_dense(kv_num_blocks, kv_indices).transpose(-2, -1).to(dtype=torch.int32)
    cols = torch.argsort(d, dim=-1, descending=True, stable=True)
    first = cols.to(torch.int32)
    second = first.contiguous()
    print("after .to(int32): contiguous =", first.is_contiguous(),
          "| .contiguous() made a 2nd copy =", second.data_ptr() != first.data_ptr())
    one = cols.to(torch.int32, memory_format=torch.contiguous_format)
    print("fused cast: contiguous =", one.is_contiguous(), "(single copy)")
