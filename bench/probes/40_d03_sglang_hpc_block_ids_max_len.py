# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/29839 — The hpc-ops attention backend's `_build_block_ids`, called from `init_forward_metadata` on every scheduler step, sized the block table with `max_seq_len = int(seq_lens[:bs].max().item())` on the device `seq_lens`, a host-device sync in per-step metadata preparation. The review pointed out that the backend already sets `needs_cpu_seq_lens`, so `forward_batch.seq_lens_cpu` is populated; the suggested change passes `seq_lens_cpu` down and takes the max from it.
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    req_pool_indices: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: Optional[torch.Tensor] = None


@dataclass
class HpcForwardMetadata:
    block_ids: torch.Tensor
    seq_lens: torch.Tensor


class HpcAttnBackend:
    needs_cpu_seq_lens = True

    def __init__(self, req_to_token: torch.Tensor, page_size: int):
        self.req_to_token = req_to_token
        self.page_size = page_size
        self.forward_metadata = None

    def _build_block_ids(self, req_pool_indices: torch.Tensor, seq_lens: torch.Tensor, bs: int) -> torch.Tensor:
        """Build the block table [bs, max_blocks] from SGLang's req_to_token.

        For request *i* and block *j*:
            block_ids[i, j] = req_to_token[req_pool_indices[i], j * page_size] // page_size
        """
        device = seq_lens.device
        max_seq_len = int(seq_lens[:bs].max().item()) if bs > 0 else 1  # want: D
        max_blocks = (max_seq_len + self.page_size - 1) // self.page_size
        block_starts = torch.arange(max_blocks, device=device) * self.page_size
        token_locs = self.req_to_token[req_pool_indices[:bs, None], block_starts[None, :]]
        return token_locs // self.page_size

    def init_forward_metadata(self, forward_batch: ForwardBatch):
        bs = forward_batch.batch_size
        block_ids = self._build_block_ids(forward_batch.req_pool_indices, forward_batch.seq_lens, bs)
        self.forward_metadata = HpcForwardMetadata(block_ids=block_ids, seq_lens=forward_batch.seq_lens[:bs].to(torch.int32))


class HpcAttnBackendFixed(HpcAttnBackend):
    def _build_block_ids(
        self,
        req_pool_indices: torch.Tensor,
        seq_lens: torch.Tensor,
        seq_lens_cpu: torch.Tensor,
        bs: int,
    ) -> torch.Tensor:
        device = seq_lens.device
        max_seq_len = int(seq_lens_cpu[:bs].max()) if bs > 0 else 1
        max_blocks = (max_seq_len + self.page_size - 1) // self.page_size
        block_starts = torch.arange(max_blocks, device=device) * self.page_size
        token_locs = self.req_to_token[req_pool_indices[:bs, None], block_starts[None, :]]
        return token_locs // self.page_size

    def init_forward_metadata(self, forward_batch: ForwardBatch):
        bs = forward_batch.batch_size
        block_ids = self._build_block_ids(
            forward_batch.req_pool_indices, forward_batch.seq_lens, forward_batch.seq_lens_cpu, bs
        )
        self.forward_metadata = HpcForwardMetadata(block_ids=block_ids, seq_lens=forward_batch.seq_lens[:bs].to(torch.int32))


if __name__ == "__main__":
    page_size, max_ctx = 4, 32
    req_to_token = torch.arange(6 * max_ctx).view(6, max_ctx)
    seq_lens_cpu = torch.tensor([7, 13, 3])
    batch = ForwardBatch(
        batch_size=3,
        req_pool_indices=torch.tensor([4, 1, 2]),
        seq_lens=seq_lens_cpu.clone(),
        seq_lens_cpu=seq_lens_cpu,
    )
    a, b = HpcAttnBackend(req_to_token, page_size), HpcAttnBackendFixed(req_to_token, page_size)
    a.init_forward_metadata(batch)
    b.init_forward_metadata(batch)
    assert torch.equal(a.forward_metadata.block_ids, b.forward_metadata.block_ids)
    print("ok", a.forward_metadata.block_ids.tolist())
