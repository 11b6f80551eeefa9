# source: linkedin/DuaLip https://github.com/linkedin/DuaLip/pull/66 — split_csc_by_cols built per-rank CSC blocks from slices (views) of the full row_indices()/values() arrays, so scatter_object_list pickled the whole nnz buffers for every rank (22 GiB/rank); the fix .clone()d the sliced arrays.
import pickle
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from typing import List

import torch

warnings.filterwarnings("ignore", category=UserWarning)


@dataclass
class ProjectionEntry:
    proj_type: str = "simplex"
    indices: list = field(default_factory=list)
    proj_params: dict = field(default_factory=dict)


@dataclass
class MatchingInputArgs:
    """
    Input arguments specific to Matching objective function.
    """

    A: torch.Tensor
    c: torch.Tensor
    projection_map: dict
    b_vec: torch.Tensor
    equality_mask: torch.Tensor = None


# ---- dualip/utils/sparse_utils.py -------------------------------------------------


def split_csc_by_cols(M: torch.Tensor, split_sizes: List[int]) -> List[torch.Tensor]:
    """
    Split a CSC-format sparse matrix M along its columns into blocks
    of widths given by split_sizes, preserving sparsity.
    """
    if M.layout != torch.sparse_csc:
        raise ValueError("M must be CSC-format sparse")

    m, n = M.size()
    if sum(split_sizes) != n:
        raise ValueError(f"split_sizes must sum to {n}")

    col_ptr = M.ccol_indices()  # shape (n+1,)
    row_idx = M.row_indices()  # shape (nnz,)
    vals = M.values()  # shape (nnz,)

    blocks = []
    col_offset = 0
    for width in split_sizes:
        # start/end pointers into col_ptr
        start_col = col_offset
        end_col = col_offset + width

        # nnz range for this block
        start_nnz = int(col_ptr[start_col].item())
        end_nnz = int(col_ptr[end_col].item())

        # slice out the per-block CSC arrays
        sub_col_ptr = col_ptr[start_col : (end_col + 1)] - col_ptr[start_col]
        sub_row_idx = row_idx[start_nnz:end_nnz]  # want: A
        sub_vals = vals[start_nnz:end_nnz]  # want: A

        # build the sub-matrix
        M_block = torch.sparse_csc_tensor(sub_col_ptr, sub_row_idx, sub_vals, size=(m, width))  # want: A
        blocks.append(M_block)
        col_offset += width

    return blocks


def split_csc_by_cols_fixed(M: torch.Tensor, split_sizes: List[int]) -> List[torch.Tensor]:
    """Post-fix version (look-alike, correct)."""
    m, n = M.size()
    col_ptr = M.ccol_indices()
    row_idx = M.row_indices()
    vals = M.values()

    blocks = []
    col_offset = 0
    for width in split_sizes:
        start_col = col_offset
        end_col = col_offset + width
        start_nnz = int(col_ptr[start_col].item())
        end_nnz = int(col_ptr[end_col].item())

        sub_col_ptr = (col_ptr[start_col : (end_col + 1)] - col_ptr[start_col]).clone()
        sub_row_idx = row_idx[start_nnz:end_nnz].clone()
        sub_vals = vals[start_nnz:end_nnz].clone()

        M_block = torch.sparse_csc_tensor(sub_col_ptr, sub_row_idx, sub_vals, size=(m, width))
        blocks.append(M_block)
        col_offset += width

    return blocks


# ---- dualip/utils/dist_utils.py ---------------------------------------------------


def global_to_local_projection_map(global_map, local_cols):
    global2local = {g: loc for loc, g in enumerate(local_cols)}
    local_map = defaultdict(ProjectionEntry)
    for proj_key, proj_item in global_map.items():
        local_indices = [global2local[g] for g in proj_item.indices if g in global2local]
        if local_indices:
            pe = local_map[proj_key]
            pe.indices = local_indices
            pe.proj_params = proj_item.proj_params
            pe.proj_type = proj_item.proj_type
    return local_map


def split_tensors_to_devices(a_mat: torch.Tensor, c_mat: torch.Tensor, compute_devices: list, splitter=split_csc_by_cols) -> tuple:
    """
    Split the CSC-format input tensors across multiple devices in a balanced way.
    """
    if a_mat.layout != torch.sparse_csc or c_mat.layout != torch.sparse_csc:
        raise ValueError("Both A and B must be CSC-format sparse tensors")

    num_devices = len(compute_devices)
    num_cols = a_mat.size(1)
    base_cols_per_device = num_cols // num_devices
    remainder_blocks = num_cols % num_devices
    split_sizes = [(base_cols_per_device + (1 if i < remainder_blocks else 0)) for i in range(num_devices)]
    split_index_map = []
    start = 0
    for size in split_sizes:
        split_index_map.append(list(range(start, start + size)))
        start += size

    a_splits = splitter(a_mat, split_sizes)
    c_splits = splitter(c_mat, split_sizes)

    # Move splits to respective devices ("cpu" on rank 0 -> .to() is a no-op, views survive)
    a_device_splits = [split.to(device) for split, device in zip(a_splits, compute_devices)]
    c_device_splits = [split.to(device) for split, device in zip(c_splits, compute_devices)]
    return a_device_splits, c_device_splits, split_index_map


# ---- benchmark/run_matching_benchmark_dist.py (rank 0 part) ------------------------


def scatter_object_list(output_list, input_list, src=0):
    """Stand-in for torch.distributed.scatter_object_list: pickles every object."""
    payload_sizes = [len(pickle.dumps(obj)) for obj in input_list]
    output_list[0] = pickle.loads(pickle.dumps(input_list[src]))
    return payload_sizes


def build_and_scatter(input_args, world_size, splitter):
    cpu_devices = ["cpu"] * world_size
    A_splits, c_splits, split_index_map = split_tensors_to_devices(input_args.A, input_args.c, cpu_devices, splitter)

    local_input_args_list = []
    for r in range(world_size):
        pm_local = global_to_local_projection_map(input_args.projection_map, split_index_map[r])
        local_input_args_list.append(
            MatchingInputArgs(
                A=A_splits[r],
                c=c_splits[r],
                projection_map=pm_local,
                b_vec=None,
                equality_mask=input_args.equality_mask,
            )
        )
    local_input_args_recv = [None]
    return scatter_object_list(local_input_args_recv, local_input_args_list, src=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    dense = torch.rand(300, 800)
    dense[dense < 0.9] = 0.0
    A = dense.to_sparse_csc()
    C = (dense * 2).to_sparse_csc()
    pmap = {"p0": ProjectionEntry(indices=list(range(800)))}
    args = MatchingInputArgs(A=A, c=C, projection_map=pmap, b_vec=torch.ones(300))

    buggy = build_and_scatter(args, world_size=4, splitter=split_csc_by_cols)
    fixed = build_and_scatter(args, world_size=4, splitter=split_csc_by_cols_fixed)
    print("pickled bytes per rank (buggy):", buggy)
    print("pickled bytes per rank (fixed):", fixed)
    assert sum(buggy) > 2 * sum(fixed)
