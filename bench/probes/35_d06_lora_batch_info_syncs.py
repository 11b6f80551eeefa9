# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/6994 — LoRAManager.prepare_lora_batch (run once per forward) did `max_len = int(torch.max(seg_lens))` on the GPU extend_seq_lens and filled GPU weight_indices/lora_ranks/scalings element by element (indexing with a 0-dim CUDA tensor reads it back); the fix takes max_len from extend_seq_lens_cpu, builds the lists on the host and copies them with pinned non_blocking transfers.
from dataclasses import dataclass

import torch


@dataclass
class LoRABatchInfo:
    bs: int
    seg_lens: torch.Tensor
    seg_indptr: torch.Tensor
    max_len: int
    weight_indices: torch.Tensor
    lora_ranks: torch.Tensor
    scalings: torch.Tensor


@dataclass
class ForwardBatch:
    batch_size: int
    lora_paths: list
    extend_seq_lens: torch.Tensor
    extend_seq_lens_cpu: list
    is_extend: bool = True


class LoRAAdapter:
    def __init__(self, r, alpha):
        self.r = r
        self.scaling = alpha / r


class LoRAMemoryPool:
    def __init__(self, paths):
        self.uid_to_buffer_id = {p: i for i, p in enumerate(paths)}

    def get_buffer_id(self, lora_path):
        return self.uid_to_buffer_id[lora_path]


class LoRAManager:
    def __init__(self, loras, max_loras_per_batch, device):
        self.loras = loras
        self.max_loras_per_batch = max_loras_per_batch
        self.device = device
        self.memory_pool = LoRAMemoryPool([None] + list(loras))
        self.batch_info = None

    def prepare_lora_batch(self, forward_batch):
        bs = forward_batch.batch_size
        seg_lens = (
            forward_batch.extend_seq_lens
            if forward_batch.is_extend
            else torch.ones(bs, device=self.device)
        )
        seg_indptr = torch.zeros((bs + 1,), dtype=torch.int32, device=self.device)
        seg_indptr[1:] = torch.cumsum(seg_lens, dim=0)
        max_len = int(torch.max(seg_lens))  # want: D
        weight_indices = torch.empty((bs,), dtype=torch.int64, device=self.device)
        lora_ranks = torch.zeros((self.max_loras_per_batch,), dtype=torch.int64, device=self.device)
        scalings = torch.zeros((self.max_loras_per_batch,), dtype=torch.float, device=self.device)
        for i, lora_path in enumerate(forward_batch.lora_paths):
            weight_indices[i] = self.memory_pool.get_buffer_id(lora_path)
            if lora_path is not None:
                lora = self.loras[lora_path]
                lora_ranks[weight_indices[i]] = lora.r  # maybe: D (0-dim CUDA index tensor is read back via item())
                scalings[weight_indices[i]] = lora.scaling  # maybe: D (same 0-dim index read-back)
        self.batch_info = LoRABatchInfo(bs, seg_lens, seg_indptr, max_len, weight_indices, lora_ranks, scalings)
        return self.batch_info


class LoRAManagerFixed(LoRAManager):
    def prepare_lora_batch(self, forward_batch):
        bs = forward_batch.batch_size
        seg_lens = (
            forward_batch.extend_seq_lens
            if forward_batch.is_extend
            else torch.ones(bs, device=self.device)
        )
        seg_indptr = torch.zeros((bs + 1,), dtype=torch.int32, device=self.device)
        seg_indptr[1:] = torch.cumsum(seg_lens, dim=0)
        # Calculate max_len from the CPU copy to avoid D2H transfer.
        max_len = max(forward_batch.extend_seq_lens_cpu) if forward_batch.is_extend else 1
        weight_indices = [0] * len(forward_batch.lora_paths)
        lora_ranks = [0] * self.max_loras_per_batch
        scalings = [0.0] * self.max_loras_per_batch
        for i, lora_path in enumerate(forward_batch.lora_paths):
            weight_indices[i] = self.memory_pool.get_buffer_id(lora_path)
            if lora_path is not None:
                lora = self.loras[lora_path]
                lora_ranks[weight_indices[i]] = lora.r
                scalings[weight_indices[i]] = lora.scaling
        pin = torch.cuda.is_available()
        weight_indices_t = torch.tensor(weight_indices, dtype=torch.int64, pin_memory=pin)
        lora_ranks_t = torch.tensor(lora_ranks, dtype=torch.int64, pin_memory=pin)
        scalings_t = torch.tensor(scalings, dtype=torch.float, pin_memory=pin)
        self.batch_info = LoRABatchInfo(
            bs, seg_lens, seg_indptr, max_len,
            weight_indices_t.to(self.device, non_blocking=True),
            lora_ranks_t.to(self.device, non_blocking=True),
            scalings_t.to(self.device, non_blocking=True),
        )
        return self.batch_info


if __name__ == "__main__":
    dev = torch.device("cpu")
    loras = {"a": LoRAAdapter(8, 16), "b": LoRAAdapter(16, 16)}
    lens = [5, 3, 9]
    fb = ForwardBatch(3, ["a", None, "b"], torch.tensor(lens, device=dev), lens)
    x = LoRAManager(loras, 4, dev).prepare_lora_batch(fb)
    y = LoRAManagerFixed(loras, 4, dev).prepare_lora_batch(fb)
    assert x.max_len == y.max_len and torch.equal(x.weight_indices, y.weight_indices)
    assert torch.equal(x.lora_ranks, y.lora_ranks) and torch.allclose(x.scalings, y.scalings)
    print("batch info equal, max_len =", y.max_len)
