# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/35106 — In the DFlash speculative worker, the prefill path ran target_worker.forward_batch_generation(...) (which returns without synchronizing) and a few statements later built ctx_lens and draft_seq_lens with torch.tensor(python_list, device="cuda"). That lowers to memcpy_and_sync, an unconditional stream sync, so the host blocked on the whole target prefill for an 8-byte copy; the PR builds the CPU tensor and moves it with .to(device, non_blocking=True).
from dataclasses import dataclass, field
from typing import List

import torch


@dataclass
class Req:
    origin_input_ids: List[int]
    output_ids: List[int] = field(default_factory=list)


@dataclass
class ScheduleBatch:
    reqs: List[Req]
    input_ids: torch.Tensor


class TargetWorker:
    def __init__(self, vocab=50, hidden=8):
        g = torch.Generator().manual_seed(0)
        self.embed = torch.randn(vocab, hidden, generator=g)
        self.lm_head = torch.randn(hidden, vocab, generator=g)

    def forward_batch_generation(self, batch):
        hidden = self.embed[batch.input_ids]
        return hidden, (hidden @ self.lm_head).argmax(-1)


def compute_position(ctx_lens: torch.Tensor, draft_seq_lens: torch.Tensor, block_size: int):
    offsets = torch.arange(block_size, device=ctx_lens.device)
    return ctx_lens[:, None] + offsets[None, :], draft_seq_lens + block_size


class DFlashWorkerV2:
    def __init__(self, target_worker, device="cuda", block_size=4):
        self.target_worker = target_worker
        self.device = device
        self.block_size = block_size

    def _draft_lens(self, batch):
        ctx_lens = torch.tensor([len(r.origin_input_ids) for r in batch.reqs], dtype=torch.int64, device=self.device)  # want: D
        draft_seq_lens = torch.tensor([len(r.output_ids) for r in batch.reqs], dtype=torch.int64, device=self.device)  # want: D
        return ctx_lens, draft_seq_lens

    def forward_batch_generation(self, batch: ScheduleBatch):
        hidden, next_token_ids = self.target_worker.forward_batch_generation(batch)
        ctx_lens, draft_seq_lens = self._draft_lens(batch)
        positions, new_draft_seq_lens = compute_position(ctx_lens, draft_seq_lens, self.block_size)
        return next_token_ids, positions, new_draft_seq_lens


class DFlashWorkerV2Fixed(DFlashWorkerV2):
    def _draft_lens(self, batch):
        ctx_lens = torch.tensor(
            [len(r.origin_input_ids) for r in batch.reqs], dtype=torch.int64
        ).to(self.device, non_blocking=True)
        draft_seq_lens = torch.tensor(
            [len(r.output_ids) for r in batch.reqs], dtype=torch.int64
        ).to(self.device, non_blocking=True)
        return ctx_lens, draft_seq_lens


if __name__ == "__main__":
    reqs = [Req([1, 2, 3]), Req([4, 5], [7]), Req([6, 7, 8, 9])]
    batch = ScheduleBatch(reqs, torch.tensor([3, 7, 9]))
    target = TargetWorker()
    a = DFlashWorkerV2(target, device="cpu").forward_batch_generation(batch)
    b = DFlashWorkerV2Fixed(target, device="cpu").forward_batch_generation(batch)
    for x, y in zip(a, b):
        assert torch.equal(x, y)
    print("ok")
