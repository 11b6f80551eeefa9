# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/34782 — the DSpark draft worker built its per-decode-step `ForwardBatch` with `num_token_non_padded=torch.tensor(..., device=device)`; from a pageable Python value PyTorch follows the `cudaMemcpyAsync` with a `cudaStreamSynchronize`, so every decode step blocked the CPU (21 syncs, ~42% of an 8.4 ms step in the profile). The fix builds it on the host and moves it with `.to(device, non_blocking=True)`, the same way `global_num_tokens_gpu` is built a few lines below.
from dataclasses import dataclass
from typing import List, Optional

import torch


@dataclass
class ForwardBatch:
    forward_mode: str
    batch_size: int
    input_ids: torch.Tensor
    positions: torch.Tensor
    seq_lens: torch.Tensor
    num_token_non_padded: Optional[torch.Tensor] = None
    global_num_tokens_gpu: Optional[torch.Tensor] = None
    global_num_tokens_cpu: Optional[List[int]] = None


class DSparkDraftWorker:
    def __init__(self, device, num_draft_tokens):
        self.device = device
        self.num_draft_tokens = num_draft_tokens

    def _build_draft_forward_batch(self, verified_ids, seq_lens, seq_lens_cpu, global_num_tokens):
        bs = len(seq_lens_cpu)
        num_tokens = bs * self.num_draft_tokens
        input_ids = verified_ids.repeat_interleave(self.num_draft_tokens)
        positions = (seq_lens[:, None] + torch.arange(self.num_draft_tokens, device=self.device)).flatten()
        return ForwardBatch(
            forward_mode="DRAFT_EXTEND",
            batch_size=bs,
            input_ids=input_ids,
            positions=positions,
            seq_lens=seq_lens + self.num_draft_tokens,
            num_token_non_padded=torch.tensor(num_tokens, dtype=torch.int32, device=self.device),  # want: D
            global_num_tokens_gpu=torch.tensor(global_num_tokens, dtype=torch.int64).to(
                self.device, non_blocking=True
            ),
            global_num_tokens_cpu=global_num_tokens,
        )

    def draft(self, verified_ids, seq_lens, seq_lens_cpu, global_num_tokens):
        fb = self._build_draft_forward_batch(verified_ids, seq_lens, seq_lens_cpu, global_num_tokens)
        return fb


class DSparkDraftWorkerFixed(DSparkDraftWorker):
    def _build_draft_forward_batch(self, verified_ids, seq_lens, seq_lens_cpu, global_num_tokens):
        bs = len(seq_lens_cpu)
        num_tokens = bs * self.num_draft_tokens
        input_ids = verified_ids.repeat_interleave(self.num_draft_tokens)
        positions = (seq_lens[:, None] + torch.arange(self.num_draft_tokens, device=self.device)).flatten()
        return ForwardBatch(
            forward_mode="DRAFT_EXTEND",
            batch_size=bs,
            input_ids=input_ids,
            positions=positions,
            seq_lens=seq_lens + self.num_draft_tokens,
            num_token_non_padded=torch.tensor(num_tokens, dtype=torch.int32).to(
                self.device, non_blocking=True
            ),
            global_num_tokens_gpu=torch.tensor(global_num_tokens, dtype=torch.int64).to(
                self.device, non_blocking=True
            ),
            global_num_tokens_cpu=global_num_tokens,
        )


if __name__ == "__main__":
    dev = torch.device("cpu")
    ids = torch.tensor([11, 42, 7])
    seq_lens_cpu = [5, 9, 3]
    seq_lens = torch.tensor(seq_lens_cpu, device=dev)
    for step in range(4):  # one forward batch per decode step
        a = DSparkDraftWorker(dev, 4).draft(ids, seq_lens, seq_lens_cpu, [12])
        b = DSparkDraftWorkerFixed(dev, 4).draft(ids, seq_lens, seq_lens_cpu, [12])
        assert torch.equal(a.num_token_non_padded, b.num_token_non_padded)
        assert a.num_token_non_padded.dtype == b.num_token_non_padded.dtype == torch.int32
        assert torch.equal(a.positions, b.positions) and torch.equal(a.global_num_tokens_gpu, b.global_num_tokens_gpu)
        seq_lens = seq_lens + 1
        seq_lens_cpu = [s + 1 for s in seq_lens_cpu]
    print("ok")
