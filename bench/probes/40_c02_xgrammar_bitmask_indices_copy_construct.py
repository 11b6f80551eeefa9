# source: mlc-ai/xgrammar https://github.com/mlc-ai/xgrammar/pull/552 — apply_token_bitmask_inplace_triton, called on every decode step by serving engines, converted the row `indices` with `torch.tensor(indices, dtype=torch.int32)` and then moved them to the logits device. Engines pass `indices` as a tensor, so this copy-constructed it on every call (with the "To copy construct from a tensor" UserWarning) before another device copy. The fix keeps the list path and, for a tensor, does a single `indices.to(dtype=torch.int32, device=logits.device, non_blocking=True)`, which is a no-op when it already matches.
import warnings
from typing import List, Optional, Union

import torch


def apply_token_bitmask_inplace_kernel(logits, bitmask, indices, num_rows, vocab_size,
                                       logits_strides, bitmask_strides, NUM_SMS, BLOCK_SIZE):
    # CPU stand-in for the @triton.jit kernel: 0 bits in the packed bitmask set logits to -inf
    rows = torch.arange(num_rows) if indices is None else indices.long()
    offsets = torch.arange(vocab_size)
    packed = bitmask[rows][:, offsets // 32]
    masked = ((packed >> (offsets % 32)) & 1) == 0
    logits[rows, :vocab_size] = logits[rows, :vocab_size].masked_fill(masked, -float("inf"))


def apply_token_bitmask_inplace_triton(
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    vocab_size: Optional[int] = None,
    indices: Optional[List[int]] = None,
):
    NUM_SMS = 132
    BLOCK_SIZE = 4096

    assert bitmask.dtype == torch.int32, "bitmask must be of type int32"

    detected_vocab_size = min(logits.shape[-1], bitmask.shape[-1] * 32)
    if vocab_size is None:
        vocab_size = detected_vocab_size
    else:
        assert (
            vocab_size <= detected_vocab_size
        ), f"vocab_size {vocab_size} is larger than the detected vocab_size {detected_vocab_size}"

    num_rows = len(indices) if indices is not None else logits.shape[0] if logits.ndim == 2 else 1

    if indices is not None:
        indices_cpu = torch.tensor(indices, dtype=torch.int32)  # want: C
        indices = indices_cpu.to(device=logits.device, non_blocking=True)

    apply_token_bitmask_inplace_kernel(
        logits, bitmask, indices, num_rows, vocab_size,
        logits.stride()[0], bitmask.stride()[0], NUM_SMS, BLOCK_SIZE,
    )
    return indices


def apply_token_bitmask_inplace_triton_fixed(
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    vocab_size: Optional[int] = None,
    indices: Optional[Union[List[int], torch.Tensor]] = None,
):
    NUM_SMS = 132
    BLOCK_SIZE = 4096

    assert bitmask.dtype == torch.int32, "bitmask must be of type int32"

    detected_vocab_size = min(logits.shape[-1], bitmask.shape[-1] * 32)
    if vocab_size is None:
        vocab_size = detected_vocab_size
    else:
        assert (
            vocab_size <= detected_vocab_size
        ), f"vocab_size {vocab_size} is larger than the detected vocab_size {detected_vocab_size}"

    num_rows = len(indices) if indices is not None else logits.shape[0] if logits.ndim == 2 else 1

    if indices is not None:
        if isinstance(indices, torch.Tensor):
            indices = indices.to(dtype=torch.int32, device=logits.device, non_blocking=True)
        else:
            indices_cpu = torch.tensor(indices, dtype=torch.int32)
            indices = indices_cpu.to(device=logits.device, non_blocking=True)

    apply_token_bitmask_inplace_kernel(
        logits, bitmask, indices, num_rows, vocab_size,
        logits.stride()[0], bitmask.stride()[0], NUM_SMS, BLOCK_SIZE,
    )
    return indices


if __name__ == "__main__":
    torch.manual_seed(0)
    batch, vocab = 4, 96
    bitmask = torch.randint(-(2**31), 2**31 - 1, (batch, vocab // 32), dtype=torch.int32)
    base = torch.randn(batch, vocab)
    rows = torch.tensor([0, 2, 3], dtype=torch.int32)

    logits_b, logits_f = base.clone(), base.clone()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used_b = apply_token_bitmask_inplace_triton(logits_b, bitmask, indices=rows)
    used_f = apply_token_bitmask_inplace_triton_fixed(logits_f, bitmask, indices=rows)

    assert torch.equal(logits_b, logits_f)
    assert torch.isinf(logits_b[0]).any() and not torch.isinf(logits_b[1]).any()
    # buggy: the indices tensor was copy-constructed; fixed: reused as-is
    assert used_b.data_ptr() != rows.data_ptr()
    assert used_f.data_ptr() == rows.data_ptr()
    assert any("copy construct" in str(w.message) for w in caught)
    print("ok")
